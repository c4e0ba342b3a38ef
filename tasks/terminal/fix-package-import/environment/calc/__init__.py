from evaluate import evaluate  # noqa: F401
