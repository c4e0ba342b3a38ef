def has_pair_with_sum(numbers: list[int], target: int) -> bool:
    """Return True when two numbers at different positions of `numbers` add up to `target`."""
    raise NotImplementedError
