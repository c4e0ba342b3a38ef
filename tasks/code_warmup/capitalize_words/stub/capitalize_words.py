def capitalize_words(text: str) -> str:
    """Return `text` with the first letter of each space-separated word in upper case and the rest in lower case."""
    raise NotImplementedError
