def acronym(phrase: str) -> str:
    return ''.join(word[0].upper() for word in phrase.split())
