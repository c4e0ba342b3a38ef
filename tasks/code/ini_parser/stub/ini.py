"""A strict INI parser."""

from typing import Any


def parse_ini(text: str) -> dict[str, dict[str, str]]:
    """Parse INI text into {section: {key: value}}."""
    raise NotImplementedError


def get_typed(config: dict[str, dict[str, str]], section: str, key: str, kind: type) -> Any:
    """Look up a value and convert it to str, int, float or bool."""
    raise NotImplementedError
