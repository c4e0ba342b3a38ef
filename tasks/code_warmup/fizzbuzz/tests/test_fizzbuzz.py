from fizzbuzz import fizzbuzz


def test_case_1():
    assert fizzbuzz(9) == 'Fizz'


def test_case_2():
    assert fizzbuzz(10) == 'Buzz'


def test_case_3():
    assert fizzbuzz(30) == 'FizzBuzz'


def test_case_4():
    assert fizzbuzz(7) == '7'
