from csvtext import parse_csv, to_csv


def _raises_value_error(fn, *args):
    try:
        fn(*args)
    except ValueError:
        return True
    return False


def test_parse_simple():
    assert parse_csv("a,b,c\n1,2,3\n") == [["a", "b", "c"], ["1", "2", "3"]]
    assert parse_csv("a,b\r\nc,d") == [["a", "b"], ["c", "d"]]
    assert parse_csv(" x , y ") == [[" x ", " y "]]


def test_parse_empty_things():
    assert parse_csv("") == []
    assert parse_csv("\n") == [[""]]
    assert parse_csv("a\n\nb\n") == [["a"], [""], ["b"]]
    assert parse_csv(",") == [["", ""]]
    assert parse_csv("a,\n,b") == [["a", ""], ["", "b"]]


def test_parse_quoted_fields():
    text = 'name,quote\n"Smith, J.","He said ""hi""\nthen left"\n"",x\n'
    assert parse_csv(text) == [
        ["name", "quote"],
        ["Smith, J.", 'He said "hi"\nthen left'],
        ["", "x"],
    ]


def test_parse_other_delimiter():
    assert parse_csv('a;"b;c";d\n', delimiter=";") == [["a", "b;c", "d"]]
    assert parse_csv("a\tb,c", delimiter="\t") == [["a", "b,c"]]


def test_parse_errors():
    for bad in ['"abc', 'a,"b"c', 'ab"c', '"a"  ,b', "a\rb", '"x""']:
        assert _raises_value_error(parse_csv, bad), bad


def test_to_csv():
    rows = [["a", "b,c"], ['say "x"', ""], ["multi\nline", "end"]]
    assert to_csv(rows) == 'a,"b,c"\n"say ""x""",\n"multi\nline",end\n'
    assert to_csv([]) == ""
    assert to_csv([[""]]) == '""\n'
    assert to_csv([["", ""]]) == ",\n"


def test_roundtrip():
    rows = [[""], ["", ""], ["a"], ['"'], [" lead", "trail "], ["x;y", "1,2", "\r\n"], ["z"]]
    for delim in (",", ";", "|"):
        text = to_csv(rows, delim)
        assert type(text) is str  # the text itself, not an object that remembers the rows
        assert parse_csv(text, delim) == rows


def test_invalid_delimiters_and_rows():
    for delim in ("", ",,", '"', "\n", "\r"):
        assert _raises_value_error(parse_csv, "a", delim), delim
        assert _raises_value_error(to_csv, [["a"]], delim), delim
    assert _raises_value_error(to_csv, [["a"], []])
