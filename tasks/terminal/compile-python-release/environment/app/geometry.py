def describe(shape) -> str:
    return f"{type(shape).__name__.lower()}: area={shape.area():.3f}"
