def count_uppercase(text: str) -> int:
    return sum(1 for ch in text if ch.isupper())
