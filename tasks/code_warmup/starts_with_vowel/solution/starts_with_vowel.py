def starts_with_vowel(word: str) -> bool:
    return word[:1].lower() in ('a', 'e', 'i', 'o', 'u')
