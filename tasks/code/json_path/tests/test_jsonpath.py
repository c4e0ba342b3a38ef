from jsonpath import get, get_all

DATA = {
    "store": {
        "books": [
            {"title": "Dune", "price": 9, "tags": ["scifi", "classic"]},
            {"title": "Emma", "price": 5, "tags": []},
            {"title": "Ubik", "price": 7},
        ],
        "name": "Corner",
        "a.b": {"c": True},
        "0": "zero",
    },
    "empty": {},
    "nothing": None,
}


def _raises(exc_type, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_type:
        return True
    return False


def test_get_basic():
    assert get(DATA, "store.name") == "Corner"
    assert get(DATA, "store.books[0].title") == "Dune"
    assert get(DATA, "store.books[-1].price") == 7
    assert get(DATA, "store.books[0].tags[1]") == "classic"
    assert get(DATA, "") is DATA
    assert get(DATA, "nothing") is None


def test_get_quoted_and_top_level_index():
    assert get(DATA, 'store["a.b"].c') is True
    assert get(DATA, "store['a.b']['c']") is True
    assert get([[1, 2], [3]], "[1][0]") == 3
    assert get({"": 5}, '[""]') == 5


def test_get_missing_uses_default_or_keyerror():
    assert get(DATA, "store.missing", 42) == 42
    assert get(DATA, "store.books[3]", default=None) is None
    assert _raises(KeyError, get, DATA, "store.books[3]")
    assert _raises(KeyError, get, DATA, "store.books[-4]")
    assert _raises(KeyError, get, DATA, "store.name.first")
    assert _raises(KeyError, get, DATA, "empty.x")


def test_types_do_not_mix():
    assert get(DATA, "store.0") == "zero"
    assert get(DATA, "store[0]", "no") == "no"
    assert get(DATA, "store.books.0", "no") == "no"
    assert get({"k": "string"}, "k[0]", "no") == "no"


def test_syntax_errors():
    bad = ["a..b", ".a", "a.", "a[x]", "a[]", "a[1", "a]", "a[1]b", 'a["b]', "a[--1]", "a['b\"]"]
    for path in bad:
        assert _raises(ValueError, get, DATA, path, default=0), path
        assert _raises(ValueError, get_all, DATA, path), path


def test_get_rejects_wildcards():
    assert _raises(ValueError, get, DATA, "store.books[*].title")
    assert _raises(ValueError, get, DATA, "store.*", default=1)


def test_get_all_wildcards():
    assert get_all(DATA, "store.books[*].title") == ["Dune", "Emma", "Ubik"]
    assert get_all(DATA, "store.books.*.price") == [9, 5, 7]
    assert get_all(DATA, "store.books[*].tags[0]") == ["scifi"]
    assert get_all(DATA, "store.books[*].tags[*]") == ["scifi", "classic"]
    assert get_all({"x": {"a": 1, "b": [2]}, "y": {"a": 3}}, "*.a") == [1, 3]


def test_get_all_without_wildcards_and_misses():
    assert get_all(DATA, "store.name") == ["Corner"]
    assert get_all(DATA, "store.nope") == []
    assert get_all(DATA, "nothing.*") == []
    assert get_all(DATA, "") == [DATA]
