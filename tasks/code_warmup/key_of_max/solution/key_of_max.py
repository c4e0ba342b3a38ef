def key_of_max(scores: dict[str, int]) -> str:
    return max(scores, key=scores.get)
