def join_with_dash(words: list[str]) -> str:
    """Return the words joined with a dash between each pair."""
    raise NotImplementedError
