def is_adult(age: int) -> bool:
    return age >= 18
