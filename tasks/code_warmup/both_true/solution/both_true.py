def both_true(a: bool, b: bool) -> bool:
    return a and b
