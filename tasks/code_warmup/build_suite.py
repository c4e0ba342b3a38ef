"""Write the `code-warmup` suite: small Code-v0 tasks, one function each, from one-liners to a loop over a string,
a list or a dict, in a train and a held-out split (`splits.toml`).

Why a suite of its own: SmolLM2-135M solves none of `code-mini`, so RL on the CPU gets no signal there; these
tasks start where it can (a one-line function, asked for in one code block) and grow from there. The two splits
hold different functions: no held-out task is a train task with other names or constants.
Run `python3 tasks/code_warmup/build_suite.py` after editing `TASKS`; it rewrites every task folder and
`splits.toml` (each folder is in the format of `tasks/code/`: task.toml, statement.md, stub/, solution/, tests/).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Warmup:
    name: str
    """The function's name, which is also its module's (`name.py`) and the task's id."""
    params: str
    returns: str
    does: str
    """What it returns, one sentence: the statement and the stub's docstring."""
    body: str
    """The reference solution's body."""
    checks: tuple[str, ...]
    """One hidden test each: an expression that must be true; the first is the statement's example."""
    split: str
    difficulty: str = "easy"


def w(name: str, params: str, returns: str, does: str, body: str, *checks: str, split: str,
      difficulty: str = "easy") -> Warmup:
    return Warmup(name, params, returns, does, body, checks, split, difficulty)


T, H = "train", "heldout"
TASKS = (
    # --- train: one-liners ---
    w("add", "a: int, b: int", "int", "the sum of `a` and `b`", "return a + b",
      "add(2, 3) == 5", "add(-4, 4) == 0", "add(0, 0) == 0", "add(100, 250) == 350", split=T),
    w("is_even", "n: int", "bool", "True when `n` is even, else False", "return n % 2 == 0",
      "is_even(4) is True", "is_even(7) is False", "is_even(0) is True", "is_even(-3) is False", split=T),
    w("reverse_string", "text: str", "str", "`text` with its characters in reverse order", "return text[::-1]",
      "reverse_string('abc') == 'cba'", "reverse_string('') == ''", "reverse_string('racecar') == 'racecar'",
      "reverse_string('Hello, World') == 'dlroW ,olleH'", split=T),
    w("largest", "items: list[int]", "int", "the largest number in the non-empty list `items`", "return max(items)",
      "largest([3, 9, 2]) == 9", "largest([-5, -2, -9]) == -2", "largest([7]) == 7", "largest([1, 1, 1]) == 1",
      split=T),
    w("square", "n: int", "int", "`n` multiplied by itself", "return n * n",
      "square(3) == 9", "square(-4) == 16", "square(0) == 0", "square(12) == 144", split=T),
    w("strip_spaces", "text: str", "str", "`text` without the spaces at its start and end", "return text.strip(' ')",
      "strip_spaces('  hi  ') == 'hi'", "strip_spaces('a b') == 'a b'", "strip_spaces('') == ''",
      "strip_spaces('   x') == 'x'", split=T),
    w("is_palindrome", "text: str", "bool", "True when `text` reads the same forwards and backwards",
      "return text == text[::-1]",
      "is_palindrome('level') is True", "is_palindrome('hello') is False", "is_palindrome('') is True",
      "is_palindrome('abba') is True", split=T),
    w("celsius_to_fahrenheit", "celsius: float", "float", "the temperature in Fahrenheit: celsius * 9 / 5 + 32",
      "return celsius * 9 / 5 + 32",
      "celsius_to_fahrenheit(100) == 212", "celsius_to_fahrenheit(0) == 32", "celsius_to_fahrenheit(-40) == -40",
      "celsius_to_fahrenheit(37) == 98.6", split=T),
    w("repeat_text", "text: str, times: int", "str", "`text` repeated `times` times", "return text * times",
      "repeat_text('ab', 3) == 'ababab'", "repeat_text('x', 0) == ''", "repeat_text('', 5) == ''",
      "repeat_text('hi ', 2) == 'hi hi '", split=T),
    w("join_with_dash", "words: list[str]", "str", "the words joined with a dash between each pair",
      "return '-'.join(words)",
      "join_with_dash(['a', 'b', 'c']) == 'a-b-c'", "join_with_dash([]) == ''", "join_with_dash(['one']) == 'one'",
      "join_with_dash(['x', '', 'y']) == 'x--y'", split=T),
    w("absolute_difference", "a: int, b: int", "int", "how far apart `a` and `b` are (never negative)",
      "return abs(a - b)",
      "absolute_difference(3, 10) == 7", "absolute_difference(10, 3) == 7", "absolute_difference(-2, 2) == 4",
      "absolute_difference(5, 5) == 0", split=T),
    w("double_all", "items: list[int]", "list[int]", "a new list with every number of `items` doubled",
      "return [2 * x for x in items]",
      "double_all([1, 2, 3]) == [2, 4, 6]", "double_all([]) == []", "double_all([-1, 0]) == [-2, 0]",
      "double_all([50]) == [100]", split=T),
    # --- train: a condition, a loop, a dict ---
    w("count_vowels", "text: str", "int", "how many vowels (a, e, i, o, u, in either case) `text` has",
      "return sum(1 for ch in text.lower() if ch in 'aeiou')",
      "count_vowels('hello') == 2", "count_vowels('AEIOU') == 5", "count_vowels('rhythm') == 0",
      "count_vowels('') == 0", "count_vowels('Programming Is Fun') == 5", split=T, difficulty="medium"),
    w("total", "items: list[int]", "int", "the sum of the numbers in `items` (0 for an empty list)",
      "return sum(items)", "total([1, 2, 3]) == 6", "total([]) == 0", "total([-5, 5, 10]) == 10",
      "total([7]) == 7", split=T),
    w("factorial", "n: int", "int", "n! (the product 1 * 2 * ... * n; factorial(0) is 1)",
      "result = 1\nfor i in range(2, n + 1):\n    result *= i\nreturn result",
      "factorial(5) == 120", "factorial(0) == 1", "factorial(1) == 1", "factorial(10) == 3628800", split=T),
    w("fizzbuzz", "n: int", "str", "'Fizz' if `n` is divisible by 3, 'Buzz' if by 5, 'FizzBuzz' if by both, "
      "else the number as a string",
      "if n % 15 == 0:\n    return 'FizzBuzz'\nif n % 3 == 0:\n    return 'Fizz'\nif n % 5 == 0:\n"
      "    return 'Buzz'\nreturn str(n)",
      "fizzbuzz(9) == 'Fizz'", "fizzbuzz(10) == 'Buzz'", "fizzbuzz(30) == 'FizzBuzz'", "fizzbuzz(7) == '7'",
      split=T, difficulty="medium"),
    w("count_char", "text: str, ch: str", "int", "how many times the character `ch` occurs in `text`",
      "return text.count(ch)",
      "count_char('banana', 'a') == 3", "count_char('banana', 'z') == 0", "count_char('', 'a') == 0",
      "count_char('Aa', 'a') == 1", split=T),
    w("average", "numbers: list[float]", "float", "the mean of `numbers`, or 0.0 when the list is empty",
      "return sum(numbers) / len(numbers) if numbers else 0.0",
      "average([1, 2, 3]) == 2.0", "average([]) == 0.0", "average([5]) == 5.0", "average([1, 2]) == 1.5",
      split=T),
    w("min_of_three", "a: int, b: int, c: int", "int", "the smallest of the three numbers", "return min(a, b, c)",
      "min_of_three(3, 1, 2) == 1", "min_of_three(-1, -5, 0) == -5", "min_of_three(4, 4, 4) == 4",
      "min_of_three(9, 8, 10) == 8", split=T),
    w("even_numbers", "items: list[int]", "list[int]", "the even numbers of `items`, in their order",
      "return [x for x in items if x % 2 == 0]",
      "even_numbers([1, 2, 3, 4]) == [2, 4]", "even_numbers([]) == []", "even_numbers([1, 3]) == []",
      "even_numbers([0, -2, 5]) == [0, -2]", split=T),
    w("word_count", "text: str", "int", "how many words `text` has (words are separated by whitespace)",
      "return len(text.split())",
      "word_count('the cat sat') == 3", "word_count('') == 0", "word_count('  many   spaces here ') == 3",
      "word_count('one') == 1", split=T),
    w("char_frequency", "text: str", "dict[str, int]", "a dict from each character of `text` to how often it occurs",
      "counts = {}\nfor ch in text:\n    counts[ch] = counts.get(ch, 0) + 1\nreturn counts",
      "char_frequency('aab') == {'a': 2, 'b': 1}", "char_frequency('') == {}",
      "char_frequency('xyz') == {'x': 1, 'y': 1, 'z': 1}", "char_frequency('  ') == {' ': 2}",
      split=T, difficulty="medium"),
    w("capitalize_words", "text: str", "str", "`text` with the first letter of each space-separated word in "
      "upper case and the rest in lower case",
      "return ' '.join(word.capitalize() for word in text.split(' '))",
      "capitalize_words('hello world') == 'Hello World'", "capitalize_words('') == ''",
      "capitalize_words('pYTHON') == 'Python'", "capitalize_words('a b c') == 'A B C'",
      split=T, difficulty="medium"),
    w("sum_of_digits", "n: int", "int", "the sum of the decimal digits of the non-negative number `n`",
      "return sum(int(d) for d in str(n))",
      "sum_of_digits(123) == 6", "sum_of_digits(0) == 0", "sum_of_digits(9999) == 36", "sum_of_digits(105) == 6",
      split=T, difficulty="medium"),
    w("product", "items: list[int]", "int", "the product of the numbers in `items` (1 for an empty list)",
      "result = 1\nfor x in items:\n    result *= x\nreturn result",
      "product([2, 3, 4]) == 24", "product([]) == 1", "product([5, 0, 2]) == 0", "product([-1, 3]) == -3",
      split=T),
    w("remove_duplicates", "items: list[int]", "list[int]", "`items` without repeats, each kept where it first "
      "occurs", "seen = []\nfor x in items:\n    if x not in seen:\n        seen.append(x)\nreturn seen",
      "remove_duplicates([1, 2, 1, 3, 2]) == [1, 2, 3]", "remove_duplicates([]) == []",
      "remove_duplicates([4, 4, 4]) == [4]", "remove_duplicates([3, 1, 2]) == [3, 1, 2]",
      split=T, difficulty="medium"),
    w("is_leap_year", "year: int", "bool", "True for a leap year: divisible by 4, except centuries, which must "
      "be divisible by 400", "return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)",
      "is_leap_year(2024) is True", "is_leap_year(1900) is False", "is_leap_year(2000) is True",
      "is_leap_year(2023) is False", split=T, difficulty="medium"),
    w("count_positive", "numbers: list[int]", "int", "how many numbers in `numbers` are greater than zero",
      "return sum(1 for x in numbers if x > 0)",
      "count_positive([1, -2, 3]) == 2", "count_positive([]) == 0", "count_positive([0, 0]) == 0",
      "count_positive([5, 6, 7]) == 3", split=T),
    w("invert_dict", "mapping: dict[str, int]", "dict[int, str]", "a dict with the keys and values of `mapping` "
      "swapped", "return {value: key for key, value in mapping.items()}",
      "invert_dict({'a': 1, 'b': 2}) == {1: 'a', 2: 'b'}", "invert_dict({}) == {}",
      "invert_dict({'x': 9}) == {9: 'x'}", split=T, difficulty="medium"),
    w("fibonacci", "n: int", "int", "the n-th Fibonacci number, where fibonacci(0) is 0 and fibonacci(1) is 1",
      "a, b = 0, 1\nfor _ in range(n):\n    a, b = b, a + b\nreturn a",
      "fibonacci(10) == 55", "fibonacci(0) == 0", "fibonacci(1) == 1", "fibonacci(2) == 1", "fibonacci(20) == 6765",
      split=T, difficulty="medium"),
    w("longest_word", "text: str", "str", "the longest space-separated word of `text` (the first one on a tie)",
      "return max(text.split(), key=len)",
      "longest_word('a quick fox') == 'quick'", "longest_word('one two six') == 'one'",
      "longest_word('elephant') == 'elephant'", split=T, difficulty="medium"),
    w("starts_with_vowel", "word: str", "bool", "True when `word` starts with a vowel (a, e, i, o, u, either case)",
      "return word[:1].lower() in ('a', 'e', 'i', 'o', 'u')",
      "starts_with_vowel('apple') is True", "starts_with_vowel('Egg') is True", "starts_with_vowel('tree') is False",
      "starts_with_vowel('') is False", split=T, difficulty="medium"),
    # --- held-out: one-liners ---
    w("is_adult", "age: int", "bool", "True when `age` is 18 or more", "return age >= 18",
      "is_adult(18) is True", "is_adult(17) is False", "is_adult(65) is True", "is_adult(0) is False", split=H),
    w("to_upper", "text: str", "str", "`text` in upper case", "return text.upper()",
      "to_upper('hello') == 'HELLO'", "to_upper('') == ''", "to_upper('MiXeD 1') == 'MIXED 1'",
      "to_upper('abc') == 'ABC'", split=H),
    w("first_and_last", "items: list[int]", "list[int]", "a list of the first and the last element of the non-empty "
      "list `items`", "return [items[0], items[-1]]",
      "first_and_last([1, 2, 3]) == [1, 3]", "first_and_last([7]) == [7, 7]", "first_and_last([4, 5]) == [4, 5]",
      split=H),
    w("is_empty", "text: str", "bool", "True when `text` has no characters", "return len(text) == 0",
      "is_empty('') is True", "is_empty('a') is False", "is_empty(' ') is False", split=H),
    w("greet", "name: str", "str", "the greeting 'Hello, NAME!' for the given name", "return f'Hello, {name}!'",
      "greet('Ada') == 'Hello, Ada!'", "greet('') == 'Hello, !'", "greet('Bob Lee') == 'Hello, Bob Lee!'",
      split=H),
    w("contains", "items: list[int], value: int", "bool", "True when `value` is one of `items`",
      "return value in items",
      "contains([1, 2, 3], 2) is True", "contains([], 1) is False", "contains([4, 5], 6) is False",
      "contains([0], 0) is True", split=H),
    w("sort_descending", "items: list[int]", "list[int]", "a new list of `items` sorted from largest to smallest",
      "return sorted(items, reverse=True)",
      "sort_descending([3, 1, 2]) == [3, 2, 1]", "sort_descending([]) == []",
      "sort_descending([5, 5, 1]) == [5, 5, 1]", "sort_descending([-1, 0]) == [0, -1]", split=H),
    w("hours_to_minutes", "hours: int", "int", "how many minutes are in `hours` hours", "return hours * 60",
      "hours_to_minutes(2) == 120", "hours_to_minutes(0) == 0", "hours_to_minutes(24) == 1440", split=H),
    w("remove_spaces", "text: str", "str", "`text` with every space removed", "return text.replace(' ', '')",
      "remove_spaces('a b c') == 'abc'", "remove_spaces('') == ''", "remove_spaces('  ') == ''",
      "remove_spaces('no-spaces') == 'no-spaces'", split=H),
    w("clamp", "value: int, low: int, high: int", "int", "`value` limited to the range low..high",
      "return max(low, min(value, high))",
      "clamp(5, 0, 10) == 5", "clamp(-3, 0, 10) == 0", "clamp(42, 0, 10) == 10", "clamp(7, 7, 7) == 7", split=H),
    w("both_true", "a: bool, b: bool", "bool", "True only when `a` and `b` are both True", "return a and b",
      "both_true(True, True) is True", "both_true(True, False) is False", "both_true(False, False) is False",
      split=H),
    w("last_word", "text: str", "str", "the last space-separated word of `text`", "return text.split()[-1]",
      "last_word('the quick fox') == 'fox'", "last_word('alone') == 'alone'", "last_word('a b  ') == 'b'",
      split=H),
    # --- held-out: a condition, a loop, a dict ---
    w("count_uppercase", "text: str", "int", "how many upper-case letters `text` has",
      "return sum(1 for ch in text if ch.isupper())",
      "count_uppercase('Hello World') == 2", "count_uppercase('') == 0", "count_uppercase('ABC def') == 3",
      "count_uppercase('no caps') == 0", split=H, difficulty="medium"),
    w("second_largest", "items: list[int]", "int", "the second largest distinct number of `items` (which holds at "
      "least two distinct numbers)", "return sorted(set(items))[-2]",
      "second_largest([1, 5, 3]) == 3", "second_largest([4, 4, 2]) == 2", "second_largest([-1, -7]) == -7",
      "second_largest([10, 9, 10, 8]) == 9", split=H, difficulty="medium"),
    w("sum_of_squares", "n: int", "int", "1*1 + 2*2 + ... + n*n (0 when n is 0)",
      "return sum(i * i for i in range(1, n + 1))",
      "sum_of_squares(3) == 14", "sum_of_squares(0) == 0", "sum_of_squares(1) == 1", "sum_of_squares(10) == 385",
      split=H, difficulty="medium"),
    w("is_prime", "n: int", "bool", "True when `n` is a prime number", "if n < 2:\n    return False\n"
      "return all(n % d for d in range(2, int(n ** 0.5) + 1))",
      "is_prime(7) is True", "is_prime(1) is False", "is_prime(9) is False", "is_prime(2) is True",
      "is_prime(97) is True", split=H, difficulty="medium"),
    w("gcd", "a: int, b: int", "int", "the greatest common divisor of the positive numbers `a` and `b`",
      "while b:\n    a, b = b, a % b\nreturn a",
      "gcd(12, 18) == 6", "gcd(7, 3) == 1", "gcd(10, 10) == 10", "gcd(100, 75) == 25", split=H, difficulty="medium"),
    w("digits", "n: int", "list[int]", "the decimal digits of the non-negative number `n`, most significant first",
      "return [int(d) for d in str(n)]",
      "digits(123) == [1, 2, 3]", "digits(0) == [0]", "digits(907) == [9, 0, 7]", split=H, difficulty="medium"),
    w("merge_dicts", "first: dict, second: dict", "dict", "one dict with the entries of both; where a key is in "
      "both, the value from `second` wins", "return {**first, **second}",
      "merge_dicts({'a': 1}, {'b': 2}) == {'a': 1, 'b': 2}", "merge_dicts({'a': 1}, {'a': 3}) == {'a': 3}",
      "merge_dicts({}, {}) == {}", split=H),
    w("most_common_char", "text: str", "str", "the character that occurs most often in the non-empty `text` (the "
      "one that occurs first on a tie)", "return max(text, key=text.count)",
      "most_common_char('banana') == 'a'", "most_common_char('abc') == 'a'", "most_common_char('zzy') == 'z'",
      "most_common_char('abbcc') == 'b'", split=H, difficulty="medium"),
    w("running_total", "numbers: list[int]", "list[int]", "the running sums of `numbers`: element i is the sum of "
      "the first i + 1 numbers", "totals = []\nacc = 0\nfor x in numbers:\n    acc += x\n    totals.append(acc)\n"
      "return totals",
      "running_total([1, 2, 3]) == [1, 3, 6]", "running_total([]) == []", "running_total([5, -5]) == [5, 0]",
      split=H, difficulty="medium"),
    w("flatten", "lists: list[list[int]]", "list[int]", "the elements of the inner lists, in order, in one list",
      "return [x for inner in lists for x in inner]",
      "flatten([[1, 2], [3]]) == [1, 2, 3]", "flatten([]) == []", "flatten([[], [4], []]) == [4]", split=H,
      difficulty="medium"),
    w("key_of_max", "scores: dict[str, int]", "str", "the key of the non-empty dict `scores` whose value is the "
      "largest", "return max(scores, key=scores.get)",
      "key_of_max({'a': 1, 'b': 5, 'c': 2}) == 'b'", "key_of_max({'x': -1}) == 'x'",
      "key_of_max({'p': 3, 'q': 9}) == 'q'", split=H, difficulty="medium"),
    w("acronym", "phrase: str", "str", "the first letter of each word of `phrase`, in upper case",
      "return ''.join(word[0].upper() for word in phrase.split())",
      "acronym('portable network graphics') == 'PNG'", "acronym('as soon as possible') == 'ASAP'",
      "acronym('') == ''", "acronym('Hello') == 'H'", split=H, difficulty="medium"),
    w("has_pair_with_sum", "numbers: list[int], target: int", "bool", "True when two numbers at different positions "
      "of `numbers` add up to `target`",
      "for i, x in enumerate(numbers):\n    for y in numbers[i + 1:]:\n        if x + y == target:\n"
      "            return True\nreturn False",
      "has_pair_with_sum([1, 4, 6], 10) is True", "has_pair_with_sum([1, 2], 5) is False",
      "has_pair_with_sum([5], 10) is False", "has_pair_with_sum([5, 5], 10) is True", split=H, difficulty="medium"),
    w("is_power_of_two", "n: int", "bool", "True when `n` is 1, 2, 4, 8, ... (a power of two)",
      "return n > 0 and n & (n - 1) == 0",
      "is_power_of_two(8) is True", "is_power_of_two(6) is False", "is_power_of_two(1) is True",
      "is_power_of_two(0) is False", split=H, difficulty="medium"),
    w("chunks", "items: list[int], size: int", "list[list[int]]", "`items` cut into lists of `size` elements (the "
      "last one may be shorter)", "return [items[i:i + size] for i in range(0, len(items), size)]",
      "chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]", "chunks([], 3) == []",
      "chunks([1, 2], 5) == [[1, 2]]", split=H, difficulty="medium"),
    w("remove_vowels", "text: str", "str", "`text` without its vowels (a, e, i, o, u, in either case)",
      "return ''.join(ch for ch in text if ch.lower() not in 'aeiou')",
      "remove_vowels('hello') == 'hll'", "remove_vowels('AEIOU') == ''", "remove_vowels('sky') == 'sky'",
      "remove_vowels('Banana Split') == 'Bnn Splt'", split=H, difficulty="medium"),
    w("index_of", "items: list[int], value: int", "int", "the position of the first `value` in `items`, or -1 when "
      "it is not there", "return items.index(value) if value in items else -1",
      "index_of([5, 6, 7], 6) == 1", "index_of([], 3) == -1", "index_of([1, 2, 1], 1) == 0",
      "index_of([4], 9) == -1", split=H),
    w("longest_line_length", "text: str", "int", "the length of the longest line of `text` (0 for an empty text)",
      "return max((len(line) for line in text.splitlines()), default=0)",
      "longest_line_length('ab\\ncde\\nf') == 3", "longest_line_length('') == 0",
      "longest_line_length('one line') == 8", "longest_line_length('a\\n\\nbb') == 2", split=H, difficulty="medium"),
)


def statement(task: Warmup) -> str:
    signature = f"{task.name}({task.params}) -> {task.returns}"
    return (f"# {task.name}\n\nWrite the function `{signature}` in `{task.name}.py`: it returns {task.does}.\n\n"
            f"For example, `{task.checks[0]}`.\n")


def stub(task: Warmup) -> str:
    return f'def {task.name}({task.params}) -> {task.returns}:\n    """Return {task.does}."""\n' \
           "    raise NotImplementedError\n"


def solution(task: Warmup) -> str:
    body = "".join(f"    {line}\n" if line else "\n" for line in task.body.splitlines())
    return f"def {task.name}({task.params}) -> {task.returns}:\n{body}"


def tests(task: Warmup) -> str:
    cases = "".join(f"\n\ndef test_case_{i}():\n    assert {check}\n" for i, check in enumerate(task.checks, 1))
    return f"from {task.name} import {task.name}\n{cases}"


TEST_TIMEOUT_S = 5
"""Each test's seconds (task.toml's `test_timeout_s`): the references take milliseconds, and a sampled reply that
loops forever, common at this model size, then fails in seconds instead of holding a training step for minutes."""


def write(task: Warmup, root: Path) -> None:
    folder = root / task.name
    shutil.rmtree(folder, ignore_errors=True)
    for sub in ("stub", "solution", "tests"):
        (folder / sub).mkdir(parents=True)
    (folder / "task.toml").write_text(f'id = "{task.name}"\ntitle = "{task.name}"\n'
                                      f'difficulty = "{task.difficulty}"\nfiles = ["{task.name}.py"]\n'
                                      f"test_timeout_s = {TEST_TIMEOUT_S}\n")
    (folder / "statement.md").write_text(statement(task))
    (folder / "stub" / f"{task.name}.py").write_text(stub(task))
    (folder / "solution" / f"{task.name}.py").write_text(solution(task))
    (folder / "tests" / f"test_{task.name}.py").write_text(tests(task))


def main() -> None:
    names = [task.name for task in TASKS]
    if clash := sorted({n for n in names if names.count(n) > 1} | set(names) & sys.stdlib_module_names):
        raise SystemExit(f"task names must be unique and not shadow a standard module: {clash}")
    for folder in HERE.iterdir():
        if folder.is_dir() and (folder / "task.toml").is_file() and folder.name not in names:
            shutil.rmtree(folder)
    for task in TASKS:
        write(task, HERE)
    splits = {split: [t.name for t in TASKS if t.split == split] for split in (T, H)}
    (HERE / "splits.toml").write_text("# Written by build_suite.py: the code-warmup-train and code-warmup-heldout "
                                      "suites.\n" + "".join(f"{split} = {ids!r}\n".replace("'", '"')
                                                            for split, ids in splits.items()))
    print(f"wrote {len(TASKS)} tasks: " + ", ".join(f"{len(ids)} {split}" for split, ids in splits.items()))


if __name__ == "__main__":
    main()
