def average(numbers: list[float]) -> float:
    return sum(numbers) / len(numbers) if numbers else 0.0
