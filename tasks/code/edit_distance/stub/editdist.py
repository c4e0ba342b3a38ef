"""Edit distances."""


def levenshtein(a: str, b: str) -> int:
    """Return the Levenshtein distance between a and b."""
    raise NotImplementedError


def osa_distance(a: str, b: str) -> int:
    """Return the optimal-string-alignment distance between a and b."""
    raise NotImplementedError


def closest(word: str, candidates: list[str], max_distance: int | None = None) -> list[str]:
    """Return the candidates nearest to word (Levenshtein), in input order."""
    raise NotImplementedError
