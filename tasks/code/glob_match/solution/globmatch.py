"""Glob pattern matching for /-separated paths."""

from functools import cache

# Compiled segment tokens:
#   ("lit", ch) | ("any",) | ("star",) | ("class", negated, frozenset_of_chars, ranges)
Token = tuple
_DOUBLE_STAR = "**"


def _compile_class(seg: str, start: int) -> tuple[Token, int]:
    """Parse a class whose '[' is at seg[start]; return (token, index after ']')."""
    i = start + 1
    negated = i < len(seg) and seg[i] == "!"
    if negated:
        i += 1
    members: list[str] = []
    first = True
    while True:
        if i >= len(seg):
            raise ValueError(f"unterminated character class in {seg!r}")
        ch = seg[i]
        if ch == "]" and not first:
            i += 1
            break
        members.append(ch)
        first = False
        i += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(members):
        if k + 2 < len(members) and members[k + 1] == "-":
            low, high = members[k], members[k + 2]
            if low > high:
                raise ValueError(f"bad range {low}-{high}")
            ranges.append((low, high))
            k += 3
        else:
            chars.add(members[k])
            k += 1
    return ("class", negated, frozenset(chars), tuple(ranges)), i


def _compile_segment(seg: str) -> tuple[Token, ...]:
    tokens: list[Token] = []
    i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "\\":
            if i + 1 >= len(seg):
                raise ValueError("pattern ends with a backslash")
            tokens.append(("lit", seg[i + 1]))
            i += 2
        elif ch == "*":
            if not tokens or tokens[-1] != ("star",):
                tokens.append(("star",))
            i += 1
        elif ch == "?":
            tokens.append(("any",))
            i += 1
        elif ch == "[":
            token, i = _compile_class(seg, i)
            tokens.append(token)
        else:
            tokens.append(("lit", ch))
            i += 1
    return tuple(tokens)


def _char_ok(token: Token, ch: str) -> bool:
    kind = token[0]
    if kind == "any":
        return True
    if kind == "lit":
        return token[1] == ch
    _, negated, chars, ranges = token
    inside = ch in chars or any(low <= ch <= high for low, high in ranges)
    return inside != negated


def _segment_matches(tokens: tuple[Token, ...], text: str) -> bool:
    # reachable[j]: tokens[:i] can match text[:j]
    reachable = [True] + [False] * len(text)
    for token in tokens:
        if token == ("star",):
            for j in range(1, len(text) + 1):
                reachable[j] = reachable[j] or reachable[j - 1]
        else:
            reachable = [False] + [reachable[j] and _char_ok(token, text[j]) for j in range(len(text))]
    return reachable[-1]


def _compile(pattern: str) -> list[tuple[Token, ...] | str]:
    return [_DOUBLE_STAR if seg == _DOUBLE_STAR else _compile_segment(seg) for seg in pattern.split("/")]


def _match_compiled(compiled: list, path: str) -> bool:
    parts = path.split("/")

    @cache
    def go(p: int, s: int) -> bool:
        if p == len(compiled):
            return s == len(parts)
        if compiled[p] == _DOUBLE_STAR:
            return any(go(p + 1, k) for k in range(s, len(parts) + 1))
        return s < len(parts) and _segment_matches(compiled[p], parts[s]) and go(p + 1, s + 1)

    return go(0, 0)


def match(pattern: str, path: str) -> bool:
    """Return True if the whole path matches the glob pattern."""
    return _match_compiled(_compile(pattern), path)


def filter_paths(pattern: str, paths: list[str]) -> list[str]:
    """Return the paths matching the pattern, in order."""
    compiled = _compile(pattern)
    return [path for path in paths if _match_compiled(compiled, path)]
