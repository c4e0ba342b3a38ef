"""Word wrapping."""


def wrap(text: str, width: int) -> list[str]:
    """Greedily wrap text into lines of at most `width` characters."""
    if width < 1:
        raise ValueError("width must be >= 1")
    lines: list[str] = []
    current = ""
    for word in text.split():
        if len(word) > width:
            if current:
                lines.append(current)
            pieces = [word[i:i + width] for i in range(0, len(word), width)]
            lines.extend(pieces[:-1])
            current = pieces[-1]
        elif not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def _justify_line(words: list[str], width: int) -> str:
    gaps = len(words) - 1
    spaces = width - sum(len(w) for w in words)
    base, extra = divmod(spaces, gaps)
    out = []
    for i, word in enumerate(words[:-1]):
        out.append(word + " " * (base + (1 if i < extra else 0)))
    out.append(words[-1])
    return "".join(out)


def justify(text: str, width: int) -> list[str]:
    """Wrap text and pad every line to exactly `width` characters."""
    lines = wrap(text, width)
    result = []
    for index, line in enumerate(lines):
        words = line.split(" ")
        if index == len(lines) - 1 or len(words) == 1:
            result.append(line.ljust(width))
        else:
            result.append(_justify_line(words, width))
    return result
