"""ASCII table rendering."""


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def render_table(rows: list[dict[str, object]], columns: list[str] | None = None) -> str:
    """Render records as a boxed ASCII table."""
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    if not columns:
        return ""
    texts = [[_cell(row.get(col)) for col in columns] for row in rows]
    widths, numeric = [], []
    for c, col in enumerate(columns):
        filled = [row.get(col) for row, cells in zip(rows, texts, strict=True) if cells[c] != ""]
        numeric.append(bool(filled) and all(_is_number(v) for v in filled))
        widths.append(max([len(col)] + [len(cells[c]) for cells in texts]))

    def line(cells: list[str]) -> str:
        parts = [
            (text.rjust(w) if is_num else text.ljust(w))
            for text, w, is_num in zip(cells, widths, numeric, strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    return "\n".join([border, line(columns), border, *(line(cells) for cells in texts), border]
                     if texts else [border, line(columns), border])
