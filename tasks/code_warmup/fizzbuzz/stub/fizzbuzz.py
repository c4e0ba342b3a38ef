def fizzbuzz(n: int) -> str:
    """Return 'Fizz' if `n` is divisible by 3, 'Buzz' if by 5, 'FizzBuzz' if by both, else the number as a string."""
    raise NotImplementedError
