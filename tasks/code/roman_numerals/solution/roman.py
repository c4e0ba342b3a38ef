"""Roman numerals."""

_TABLE = [
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"),
    (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
    (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
]
_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def to_roman(n: int) -> str:
    """Return the canonical Roman numeral for 1 <= n <= 3999."""
    if not 1 <= n <= 3999:
        raise ValueError(f"{n} is out of range 1..3999")
    parts = []
    for value, symbol in _TABLE:
        count, n = divmod(n, value)
        parts.append(symbol * count)
    return "".join(parts)


def from_roman(numeral: str) -> int:
    """Parse a canonical Roman numeral."""
    if not numeral or any(ch not in _VALUES for ch in numeral):
        raise ValueError(f"invalid numeral {numeral!r}")
    total = 0
    for i, ch in enumerate(numeral):
        value = _VALUES[ch]
        if i + 1 < len(numeral) and _VALUES[numeral[i + 1]] > value:
            total -= value
        else:
            total += value
    if not 1 <= total <= 3999 or to_roman(total) != numeral:
        raise ValueError(f"non-canonical numeral {numeral!r}")
    return total
