from tokens import tokenize


def evaluate(text: str) -> float:
    tokens = tokenize(text)
    value, rest = _expression(tokens)
    if rest:
        raise ValueError(f"unexpected {rest[0]!r}")
    return value


def _expression(tokens):
    value, tokens = _term(tokens)
    while tokens and tokens[0] in "+-":
        op = tokens[0]
        right, tokens = _term(tokens[1:])
        value = value + right if op == "+" else value - right
    return value, tokens


def _term(tokens):
    value, tokens = _factor(tokens)
    while tokens and tokens[0] in "*/":
        op, (right, tokens) = tokens[0], _term(tokens[1:])
        value = value * right if op == "*" else value / right
    return value, tokens


def _factor(tokens):
    if tokens[0] == "(":
        value, tokens = _expression(tokens[1:])
        return value, tokens[1:]
    if tokens[0] == "-":
        value, tokens = _factor(tokens[1:])
        return -value, tokens
    return float(tokens[0]), tokens[1:]
