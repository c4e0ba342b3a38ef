import json
import random

from jsonparse import JSONError, parse


def _pos(text):
    try:
        parse(text)
    except JSONError as exc:
        return exc.pos
    raise AssertionError(f"expected JSONError for {text!r}")


def test_scalars():
    assert parse("true") is True and parse("false") is False and parse("null") is None
    assert parse(" 42 ") == 42 and isinstance(parse("42"), int)
    assert parse("-0") == 0 and parse("-12.5e1") == -125.0
    assert isinstance(parse("1E2"), float) and parse("1E2") == 100.0
    assert parse("123456789012345678901234567890") == 123456789012345678901234567890
    assert parse('"hi"') == "hi"


def test_containers():
    assert parse("[]") == [] and parse("{}") == {}
    text = ' {"a": [1, 2, {"b": null}], "c": "d", "e": {"f": [true, false]}}\n'
    assert parse(text) == {"a": [1, 2, {"b": None}], "c": "d", "e": {"f": [True, False]}}
    assert parse('{"k": 1, "k": 2}') == {"k": 2}
    assert parse("\t[ [ ] , { } ]\r\n") == [[], {}]


def test_string_escapes():
    assert parse(r'"a\"b\\c\/d\b\f\n\r\t"') == 'a"b\\c/d\b\f\n\r\t'
    assert parse(r'"\u00e9\u00E9"') == "\u00e9\u00e9"
    assert parse(r'"\ud83d\ude00"') == "\U0001F600"
    assert parse('"\u00e9 raw unicode \U0001F600"') == "\u00e9 raw unicode \U0001F600"


def test_agrees_with_json_module_on_random_documents():
    rng = random.Random(21)

    def gen(depth):
        kind = rng.randint(0, 6 if depth < 4 else 3)
        if kind == 0:
            return rng.randint(-10**12, 10**12)
        if kind == 1:
            return rng.choice([True, False, None])
        if kind == 2:
            return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
        if kind == 3:
            return "".join(rng.choice('ab"\\\n\u00e9\u4e2d\U0001F600 /') for _ in range(rng.randint(0, 8)))
        if kind in (4, 5):
            return [gen(depth + 1) for _ in range(rng.randint(0, 4))]
        return {f"k{rng.randint(0, 9)}": gen(depth + 1) for _ in range(rng.randint(0, 4))}

    for _ in range(150):
        doc = gen(0)
        for ensure_ascii in (True, False):
            text = json.dumps(doc, ensure_ascii=ensure_ascii, indent=rng.choice([None, 2]))
            assert parse(text) == json.loads(text)


def test_deep_nesting():
    assert parse("[" * 100 + "]" * 100) == json.loads("[" * 100 + "]" * 100)
    nested = '{"a":' * 100 + "1" + "}" * 100
    assert parse(nested) == json.loads(nested)


def test_structural_error_positions():
    assert _pos("[1,]") == 3
    assert _pos('{"a" 1}') == 5
    assert _pos("[1 2]") == 3
    assert _pos("") == 0
    assert _pos("   ") == 3
    assert _pos("[1") == 2
    assert _pos("{,}") == 1
    assert _pos('{"a":1,}') == 7
    assert _pos('{"a":}') == 5
    assert _pos("[1] x") == 4
    assert _pos("01") == 1
    assert _pos("[01]") == 2
    assert _pos("{'a': 1}") == 1


def test_literal_and_number_error_positions():
    assert _pos("tru") == 3
    assert _pos("nulL") == 3
    assert _pos("[fals]") == 5
    assert _pos("none") == 1
    assert _pos("True") == 0
    assert _pos("-") == 1
    assert _pos("-a") == 1
    assert _pos("1.") == 2
    assert _pos("1.e5") == 2
    assert _pos("2e+") == 3
    assert _pos("+1") == 0
    assert _pos(".5") == 0


def test_string_error_positions():
    assert _pos('"abc') == 4
    assert _pos('["a\nb"]') == 3
    assert _pos('"ab\\x"') == 3
    assert _pos('"\\u12G4"') == 1
    assert _pos('"\\u12"') == 1
    assert _pos('"x\\ud83d"') == 2
    assert _pos('"\\ud83d\\u0041"') == 1
    assert _pos('"\\ude00"') == 1
    assert _pos('"\\') == 1


def test_error_is_value_error():
    try:
        parse("[")
    except ValueError as exc:
        assert isinstance(exc, JSONError)
        return
    raise AssertionError("expected ValueError")
