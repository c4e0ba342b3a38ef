from cases import split_words, to_camel, to_snake


def test_split_camel_and_acronyms():
    assert split_words("fooBar") == ["foo", "Bar"]
    assert split_words("HTTPServer") == ["HTTP", "Server"]
    assert split_words("getHTTPResponseCode") == ["get", "HTTP", "Response", "Code"]
    assert split_words("ABC") == ["ABC"]


def test_split_digits():
    assert split_words("v2Beta") == ["v2", "Beta"]
    assert split_words("HTTP2Server") == ["HTTP2", "Server"]
    assert split_words("version2update") == ["version2update"]
    assert split_words("x86_64") == ["x86", "64"]


def test_split_separators():
    assert split_words("__leading--and trailing__") == ["leading", "and", "trailing"]
    assert split_words("Mixed_caseWords-here") == ["Mixed", "case", "Words", "here"]
    assert split_words("___") == []


def test_to_snake():
    assert to_snake("getHTTPResponseCode") == "get_http_response_code"
    assert to_snake("already_snake_case") == "already_snake_case"
    assert to_snake("Foo-Bar baz") == "foo_bar_baz"
    assert to_snake("A") == "a"
    assert to_snake("") == ""


def test_to_camel():
    assert to_camel("http_server_error") == "httpServerError"
    assert to_camel("HTTPServer") == "httpServer"
    assert to_camel("XMLHttpRequest") == "xmlHttpRequest"
    assert to_camel("some-mixed_Input here") == "someMixedInputHere"


def test_to_camel_upper_first():
    assert to_camel("HTTPServer", upper_first=True) == "HttpServer"
    assert to_camel("user_id", upper_first=True) == "UserId"
    assert to_camel("-", upper_first=True) == ""


def test_roundtrip_snake_camel():
    for name in ("parse_json_value", "a_bc_d", "load2_items"):
        camel = to_camel(name)
        assert type(camel) is str  # the text itself, not an object that remembers the name
        assert to_snake(camel) == name


def test_single_letter_words_merge_when_recamelled():
    # "aBC": B follows a lowercase letter (new word); C follows B with nothing after it (same word).
    assert to_snake(to_camel("a_b_c")) == "a_bc"
