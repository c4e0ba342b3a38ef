def longest_line_length(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)
