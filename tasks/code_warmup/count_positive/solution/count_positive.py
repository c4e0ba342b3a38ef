def count_positive(numbers: list[int]) -> int:
    return sum(1 for x in numbers if x > 0)
