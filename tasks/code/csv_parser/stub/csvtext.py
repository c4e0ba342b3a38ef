"""A tiny CSV reader/writer."""


def parse_csv(text: str, delimiter: str = ",") -> list[list[str]]:
    """Parse CSV text into a list of records."""
    raise NotImplementedError


def to_csv(rows: list[list[str]], delimiter: str = ",") -> str:
    """Serialise records to CSV text."""
    raise NotImplementedError
