from collections import Counter


def stats(text: str) -> tuple[int, int, str]:
    words = text.lower().split()
    common = Counter(words).most_common(1)
    return len(text.splitlines()), len(words), common[0][0] if common else "-"
