def reverse_string(text: str) -> str:
    return text[::-1]
