def count_positive(numbers: list[int]) -> int:
    """Return how many numbers in `numbers` are greater than zero."""
    raise NotImplementedError
