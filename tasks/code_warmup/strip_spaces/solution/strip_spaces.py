def strip_spaces(text: str) -> str:
    return text.strip(' ')
