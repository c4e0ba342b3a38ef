def is_adult(age: int) -> bool:
    """Return True when `age` is 18 or more."""
    raise NotImplementedError
