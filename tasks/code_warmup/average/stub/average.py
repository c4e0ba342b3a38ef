def average(numbers: list[float]) -> float:
    """Return the mean of `numbers`, or 0.0 when the list is empty."""
    raise NotImplementedError
