def second_largest(items: list[int]) -> int:
    return sorted(set(items))[-2]
