def has_pair_with_sum(numbers: list[int], target: int) -> bool:
    for i, x in enumerate(numbers):
        for y in numbers[i + 1:]:
            if x + y == target:
                return True
    return False
