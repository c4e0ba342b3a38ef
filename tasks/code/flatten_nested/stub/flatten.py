"""Flatten nested lists and tuples."""


def flatten(items: list | tuple, depth: int | None = None) -> list:
    """Expand nested lists/tuples up to `depth` levels (all levels when None)."""
    raise NotImplementedError
