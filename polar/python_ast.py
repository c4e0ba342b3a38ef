"""`ast.parse` that threads may call at once.

CPython 3.11 before 3.11.8 keeps the AST constructor's recursion depth in interpreter-wide state, so two threads
parsing at the same moment can raise `SystemError: AST constructor recursion depth mismatch` (python/cpython#106905).
polar parses task files while loading suites and grading in worker threads (admission runs several at once), so
every runtime parse goes through this one lock.
"""

from __future__ import annotations

import ast
import threading

_PARSING = threading.Lock()


def parse_python(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse(source, filename, mode)`, one thread at a time."""
    with _PARSING:
        return ast.parse(source, filename=filename, mode=mode)
