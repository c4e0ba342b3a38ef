def celsius_to_fahrenheit(celsius: float) -> float:
    return celsius * 9 / 5 + 32
