def celsius_to_fahrenheit(celsius: float) -> float:
    """Return the temperature in Fahrenheit: celsius * 9 / 5 + 32."""
    raise NotImplementedError
