"""Flatten nested lists and tuples."""


def flatten(items: list | tuple, depth: int | None = None) -> list:
    """Expand nested lists/tuples up to `depth` levels (all levels when None)."""
    if depth is not None and depth < 0:
        raise ValueError("depth must be non-negative")
    out: list = []
    # Explicit stack of (iterator, remaining depth) so deep nesting cannot overflow the call stack.
    stack = [(iter(items), depth)]
    while stack:
        iterator, remaining = stack[-1]
        for element in iterator:
            if isinstance(element, list | tuple) and (remaining is None or remaining > 0):
                stack.append((iter(element), None if remaining is None else remaining - 1))
                break
            out.append(element)
        else:
            stack.pop()
    return out
