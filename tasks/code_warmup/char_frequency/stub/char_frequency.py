def char_frequency(text: str) -> dict[str, int]:
    """Return a dict from each character of `text` to how often it occurs."""
    raise NotImplementedError
