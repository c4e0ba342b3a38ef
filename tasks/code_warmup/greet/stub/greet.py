def greet(name: str) -> str:
    """Return the greeting 'Hello, NAME!' for the given name."""
    raise NotImplementedError
