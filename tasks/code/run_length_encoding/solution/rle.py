"""Run-length encoding."""

from itertools import groupby

_DIGITS = "0123456789"


def encode(text: str) -> str:
    """Encode `text` as count+character groups."""
    if any(ch in _DIGITS for ch in text):
        raise ValueError("text must not contain ASCII digits")
    return "".join(f"{len(list(run))}{ch}" for ch, run in groupby(text))


def decode(encoded: str) -> str:
    """Decode count+character groups back into text."""
    out: list[str] = []
    count = ""
    for ch in encoded:
        if ch in _DIGITS:
            count += ch
            continue
        if not count:
            raise ValueError(f"character {ch!r} has no count")
        if count.startswith("0"):
            raise ValueError(f"invalid count {count!r}")
        out.append(ch * int(count))
        count = ""
    if count:
        raise ValueError("trailing count without a character")
    return "".join(out)
