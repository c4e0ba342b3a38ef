def is_leap_year(year: int) -> bool:
    """Return True for a leap year: divisible by 4, except centuries, which must be divisible by 400."""
    raise NotImplementedError
