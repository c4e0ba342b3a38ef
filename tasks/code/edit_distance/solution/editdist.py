"""Edit distances."""


def levenshtein(a: str, b: str) -> int:
    """Return the Levenshtein distance between a and b."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def osa_distance(a: str, b: str) -> int:
    """Return the optimal-string-alignment distance between a and b."""
    before = None  # row i - 2
    previous = list(range(len(b) + 1))  # row i - 1
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            best = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if before is not None and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                best = min(best, before[j - 2] + 1)
            current[j] = best
        before, previous = previous, current
    return previous[-1]


def closest(word: str, candidates: list[str], max_distance: int | None = None) -> list[str]:
    """Return the candidates nearest to word (Levenshtein), in input order."""
    if max_distance is not None and max_distance < 0:
        raise ValueError("max_distance must be non-negative")
    scored = [(levenshtein(word, c), c) for c in candidates]
    if max_distance is not None:
        scored = [(d, c) for d, c in scored if d <= max_distance]
    if not scored:
        return []
    best = min(d for d, _ in scored)
    return [c for d, c in scored if d == best]
