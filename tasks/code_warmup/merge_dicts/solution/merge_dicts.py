def merge_dicts(first: dict, second: dict) -> dict:
    return {**first, **second}
