def last_word(text: str) -> str:
    return text.split()[-1]
