def even_numbers(items: list[int]) -> list[int]:
    """Return the even numbers of `items`, in their order."""
    raise NotImplementedError
