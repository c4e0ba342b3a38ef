"""Exact arithmetic expression evaluator."""

from collections.abc import Mapping
from fractions import Fraction


class ExpressionError(ValueError):
    """Raised for syntax errors in an expression."""


def evaluate(expression: str, variables: Mapping[str, int | Fraction] | None = None) -> Fraction:
    """Evaluate `expression` exactly and return a Fraction."""
    raise NotImplementedError
