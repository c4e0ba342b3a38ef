"""ASCII table rendering."""


def render_table(rows: list[dict[str, object]], columns: list[str] | None = None) -> str:
    """Render records as a boxed ASCII table."""
    raise NotImplementedError
