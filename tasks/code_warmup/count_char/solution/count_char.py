def count_char(text: str, ch: str) -> int:
    return text.count(ch)
