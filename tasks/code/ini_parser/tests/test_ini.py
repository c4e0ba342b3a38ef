from ini import get_typed, parse_ini

SAMPLE = """
; global settings
name = demo app
Debug = yes

[server]
Host = example.org
port= 8080
# a comment
motd = "  padded  "
empty = ""
url = http://x/?a=b;c#frag

[ Paths ]
[client]
retries = 3
ratio = 0.25
"""


def _raises(exc_type, fn, *args):
    try:
        fn(*args)
    except exc_type:
        return True
    return False


def _error_message(text):
    try:
        parse_ini(text)
    except ValueError as exc:
        return str(exc)
    raise AssertionError("expected ValueError")


def test_parse_sample():
    config = parse_ini(SAMPLE)
    assert config == {
        "": {"name": "demo app", "debug": "yes"},
        "server": {"host": "example.org", "port": "8080", "motd": "  padded  ", "empty": "",
                   "url": "http://x/?a=b;c#frag"},
        "Paths": {},
        "client": {"retries": "3", "ratio": "0.25"},
    }
    assert list(config) == ["", "server", "Paths", "client"]
    assert list(config["server"]) == ["host", "port", "motd", "empty", "url"]


def test_no_implicit_section_when_unused():
    assert parse_ini("[a]\nx=1\n") == {"a": {"x": "1"}}
    assert parse_ini("") == {}
    assert parse_ini("\n  ; only comments\n#x\n") == {}


def test_value_details():
    config = parse_ini('[s]\na = b = c\nq = "\nlone = "x\nk=\n')
    assert config == {"s": {"a": "b = c", "q": '"', "lone": '"x', "k": ""}}


def test_errors_report_line_numbers():
    assert "line 3" in _error_message("[a]\nx=1\njunk line\n")
    assert "line 2" in _error_message("[a]\n[]\n")
    assert "line 4" in _error_message("[a]\n\n; c\n = 5\n")
    assert "line 3" in _error_message("[a]\n[b]\n[a]\n")
    assert "line 3" in _error_message("[a]\nKey=1\nkey=2\n")
    assert "line 1" in _error_message("[a\n")


def test_same_key_in_different_sections_is_fine():
    assert parse_ini("k=0\n[a]\nk=1\n[b]\nk=2") == {"": {"k": "0"}, "a": {"k": "1"}, "b": {"k": "2"}}


def test_get_typed():
    config = parse_ini(SAMPLE)
    assert get_typed(config, "client", "retries", int) == 3
    assert get_typed(config, "client", "RATIO", float) == 0.25
    assert get_typed(config, "", "debug", bool) is True
    assert get_typed(config, "server", "host", str) == "example.org"
    assert get_typed({"s": {"f": "Off"}}, "s", "f", bool) is False


def test_get_typed_errors():
    config = parse_ini(SAMPLE)
    assert _raises(KeyError, get_typed, config, "nope", "x", str)
    assert _raises(KeyError, get_typed, config, "client", "missing", int)
    assert _raises(ValueError, get_typed, config, "server", "host", int)
    assert _raises(ValueError, get_typed, config, "server", "host", bool)
    assert _raises(TypeError, get_typed, config, "client", "retries", list)
