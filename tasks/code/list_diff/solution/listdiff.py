"""Sequence diff based on the longest common subsequence."""

from collections.abc import Sequence
from typing import Any

Script = list[tuple[str, Any]]
_OPS = (" ", "-", "+")


def diff(a: Sequence[Any], b: Sequence[Any]) -> Script:
    """Return the canonical minimal edit script turning a into b."""
    n, m = len(a), len(b)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = lcs[i], lcs[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    script: Script = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            script.append((" ", a[i]))
            i, j = i + 1, j + 1
        elif lcs[i + 1][j] >= lcs[i][j + 1]:
            script.append(("-", a[i]))
            i += 1
        else:
            script.append(("+", b[j]))
            j += 1
    script.extend(("-", x) for x in a[i:])
    script.extend(("+", y) for y in b[j:])
    return script


def patch(a: Sequence[Any], script: Script) -> list[Any]:
    """Apply an edit script to a."""
    out: list[Any] = []
    pos = 0
    for op, element in script:
        if op not in _OPS:
            raise ValueError(f"unknown op {op!r}")
        if op == "+":
            out.append(element)
            continue
        if pos >= len(a) or a[pos] != element:
            raise ValueError(f"script does not match input at position {pos}")
        if op == " ":
            out.append(element)
        pos += 1
    if pos != len(a):
        raise ValueError("script does not consume the whole input")
    return out


def invert(script: Script) -> Script:
    """Return the script turning the target back into the source."""
    swap = {" ": " ", "-": "+", "+": "-"}
    inverted = []
    for op, element in script:
        if op not in swap:
            raise ValueError(f"unknown op {op!r}")
        inverted.append((swap[op], element))
    return inverted
