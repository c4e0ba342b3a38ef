"""Identifier case conversion."""


def split_words(name: str) -> list[str]:
    """Split an identifier into its words."""
    raise NotImplementedError


def to_snake(name: str) -> str:
    """Return the identifier in snake_case."""
    raise NotImplementedError


def to_camel(name: str, upper_first: bool = False) -> str:
    """Return the identifier in camelCase (PascalCase when upper_first)."""
    raise NotImplementedError
