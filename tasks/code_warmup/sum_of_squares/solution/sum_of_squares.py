def sum_of_squares(n: int) -> int:
    return sum(i * i for i in range(1, n + 1))
