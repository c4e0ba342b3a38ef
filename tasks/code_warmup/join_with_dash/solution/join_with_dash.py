def join_with_dash(words: list[str]) -> str:
    return '-'.join(words)
