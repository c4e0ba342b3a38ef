def char_frequency(text: str) -> dict[str, int]:
    counts = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return counts
