"""A tiny CSV reader/writer."""


def _check_delimiter(delimiter: str) -> None:
    if len(delimiter) != 1 or delimiter in '"\r\n':
        raise ValueError(f"invalid delimiter {delimiter!r}")


def parse_csv(text: str, delimiter: str = ",") -> list[list[str]]:
    """Parse CSV text into a list of records."""
    _check_delimiter(delimiter)
    rows: list[list[str]] = []
    record: list[str] = []
    i, n = 0, len(text)
    while i < n:
        # Parse one field starting at i.
        if text[i] == '"':
            chars = []
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unterminated quoted field")
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        chars.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                chars.append(text[i])
                i += 1
            field = "".join(chars)
        else:
            start = i
            while i < n and text[i] not in (delimiter, "\r", "\n"):
                if text[i] == '"':
                    raise ValueError(f"quote inside unquoted field at {i}")
                i += 1
            field = text[start:i]
        record.append(field)
        # Now at a delimiter, a line break or the end.
        if i >= n:
            break
        if text[i] == delimiter:
            i += 1
            if i >= n:  # trailing delimiter: one more empty field
                record.append("")
            continue
        if text.startswith("\r\n", i):
            i += 2
        elif text[i] == "\n":
            i += 1
        else:
            raise ValueError(f"unexpected character {text[i]!r} at {i}")
        rows.append(record)
        record = []
    if record:
        rows.append(record)
    return rows


def _format_field(field: str, delimiter: str, only: bool) -> str:
    if any(ch in field for ch in (delimiter, '"', "\r", "\n")) or (only and field == ""):
        return '"' + field.replace('"', '""') + '"'
    return field


def to_csv(rows: list[list[str]], delimiter: str = ",") -> str:
    """Serialise records to CSV text."""
    _check_delimiter(delimiter)
    lines = []
    for row in rows:
        if not row:
            raise ValueError("rows must contain at least one field")
        only = len(row) == 1
        lines.append(delimiter.join(_format_field(f, delimiter, only) for f in row) + "\n")
    return "".join(lines)
