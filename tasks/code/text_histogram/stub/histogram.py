"""Text bar charts."""


def render_histogram(counts: dict[str, int], width: int = 20, char: str = "#") -> str:
    """Render counts as a horizontal text bar chart."""
    raise NotImplementedError
