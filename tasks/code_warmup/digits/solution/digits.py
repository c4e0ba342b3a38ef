def digits(n: int) -> list[int]:
    return [int(d) for d in str(n)]
