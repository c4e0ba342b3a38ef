def word_count(text: str) -> int:
    return len(text.split())
