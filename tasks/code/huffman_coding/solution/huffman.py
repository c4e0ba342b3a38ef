"""Deterministic Huffman coding."""

import heapq
from collections import Counter


def build_codes(text: str) -> dict[str, str]:
    """Return the deterministic Huffman code table for text."""
    counts = Counter(text)
    if not counts:
        return {}
    if len(counts) == 1:
        return {next(iter(counts)): "0"}
    # Heap entries: (weight, key, tree) where tree is a char or a (left, right) tuple.
    heap = [(weight, ch, ch) for ch, weight in counts.items()]
    heapq.heapify(heap)
    while len(heap) > 1:
        w1, k1, t1 = heapq.heappop(heap)
        w2, k2, t2 = heapq.heappop(heap)
        heapq.heappush(heap, (w1 + w2, min(k1, k2), (t1, t2)))
    codes: dict[str, str] = {}
    stack = [(heap[0][2], "")]
    while stack:
        tree, prefix = stack.pop()
        if isinstance(tree, str):
            codes[tree] = prefix
        else:
            stack.append((tree[0], prefix + "0"))
            stack.append((tree[1], prefix + "1"))
    return codes


def encode(text: str, codes: dict[str, str]) -> str:
    """Encode text with a code table."""
    try:
        return "".join(codes[ch] for ch in text)
    except KeyError as exc:
        raise ValueError(f"no code for {exc.args[0]!r}") from None


def _validate_table(codes: dict[str, str]) -> dict[str, str]:
    if not codes:
        raise ValueError("empty code table")
    reverse: dict[str, str] = {}
    for ch, code in codes.items():
        if not code or set(code) - {"0", "1"}:
            raise ValueError(f"invalid code {code!r}")
        if code in reverse:
            raise ValueError(f"duplicate code {code!r}")
        reverse[code] = ch
    ordered = sorted(reverse)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if b.startswith(a):
            raise ValueError(f"{a!r} is a prefix of {b!r}")
    return reverse


def decode(bits: str, codes: dict[str, str]) -> str:
    """Decode a bit string with a prefix-free code table."""
    reverse = _validate_table(codes)
    if set(bits) - {"0", "1"}:
        raise ValueError("bits must contain only 0 and 1")
    longest = max(len(code) for code in reverse)
    out: list[str] = []
    current = ""
    for bit in bits:
        current += bit
        if current in reverse:
            out.append(reverse[current])
            current = ""
        elif len(current) >= longest:
            raise ValueError("bits do not match any code")
    if current:
        raise ValueError("leftover bits at the end")
    return "".join(out)


def canonical_codes(codes: dict[str, str]) -> dict[str, str]:
    """Return the canonical code with the same code lengths."""
    if any(not code for code in codes.values()):
        raise ValueError("empty code")
    result: dict[str, str] = {}
    value, prev_len = -1, 0
    for ch, code in sorted(codes.items(), key=lambda item: (len(item[1]), item[0])):
        length = len(code)
        value = 0 if value < 0 else (value + 1) << (length - prev_len)
        prev_len = length
        result[ch] = format(value, f"0{length}b")
    return result
