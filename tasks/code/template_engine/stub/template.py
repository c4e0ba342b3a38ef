"""A small template engine."""

from collections.abc import Mapping
from typing import Any


class TemplateError(ValueError):
    """Raised for invalid templates and rendering errors."""


def render(template: str, context: Mapping[str, Any]) -> str:
    """Render the template with the given context."""
    raise NotImplementedError
