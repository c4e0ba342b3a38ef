def repeat_text(text: str, times: int) -> str:
    return text * times
