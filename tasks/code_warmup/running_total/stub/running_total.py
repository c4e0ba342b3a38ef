def running_total(numbers: list[int]) -> list[int]:
    """Return the running sums of `numbers`: element i is the sum of the first i + 1 numbers."""
    raise NotImplementedError
