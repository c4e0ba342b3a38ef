def hours_to_minutes(hours: int) -> int:
    return hours * 60
