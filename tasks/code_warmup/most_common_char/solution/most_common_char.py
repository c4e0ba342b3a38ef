def most_common_char(text: str) -> str:
    return max(text, key=text.count)
