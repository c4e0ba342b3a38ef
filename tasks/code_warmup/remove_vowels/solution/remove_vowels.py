def remove_vowels(text: str) -> str:
    return ''.join(ch for ch in text if ch.lower() not in 'aeiou')
