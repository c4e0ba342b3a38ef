def running_total(numbers: list[int]) -> list[int]:
    totals = []
    acc = 0
    for x in numbers:
        acc += x
        totals.append(acc)
    return totals
