def acronym(phrase: str) -> str:
    """Return the first letter of each word of `phrase`, in upper case."""
    raise NotImplementedError
