def remove_spaces(text: str) -> str:
    return text.replace(' ', '')
