"""Text bar charts."""


def render_histogram(counts: dict[str, int], width: int = 20, char: str = "#") -> str:
    """Render counts as a horizontal text bar chart."""
    if width < 1:
        raise ValueError("width must be >= 1")
    if len(char) != 1:
        raise ValueError("char must be a single character")
    if any(count < 0 for count in counts.values()):
        raise ValueError("counts must be non-negative")
    if not counts:
        return ""
    label_width = max(len(key) for key in counts)
    max_count = max(counts.values())
    lines = []
    for key, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        # floor(count * width / max + 1/2) == floor((2 * count * width + max) / (2 * max))
        n = (2 * count * width + max_count) // (2 * max_count) if max_count else 0
        bar = (char * n).ljust(width)
        lines.append(f"{key.ljust(label_width)} | {bar} | {count}")
    return "\n".join(lines)
