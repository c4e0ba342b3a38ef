def clamp(value: int, low: int, high: int) -> int:
    """Return `value` limited to the range low..high."""
    raise NotImplementedError
