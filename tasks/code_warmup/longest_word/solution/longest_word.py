def longest_word(text: str) -> str:
    return max(text.split(), key=len)
