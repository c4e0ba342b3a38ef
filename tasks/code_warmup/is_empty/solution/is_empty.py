def is_empty(text: str) -> bool:
    return len(text) == 0
