def hours_to_minutes(hours: int) -> int:
    """Return how many minutes are in `hours` hours."""
    raise NotImplementedError
