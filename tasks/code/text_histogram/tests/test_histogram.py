from histogram import render_histogram


def _raises_value_error(*args, **kwargs):
    try:
        render_histogram(*args, **kwargs)
    except ValueError:
        return True
    return False


def test_example():
    out = render_histogram({"apple": 8, "fig": 2, "kiwi": 8}, width=10)
    assert out == "apple | ########## | 8\nkiwi  | ########## | 8\nfig   | ###        | 2"


def test_default_width_and_char():
    out = render_histogram({"a": 1, "b": 4})
    assert out.split("\n") == ["b | " + "#" * 20 + " | 4", "a | " + "#" * 5 + " " * 15 + " | 1"]


def test_custom_char_and_rounding():
    out = render_histogram({"x": 3, "y": 1, "z": 0}, width=5, char="*")
    # 1 * 5 / 3 = 1.67 -> 2 ; 0 -> 0
    assert out == "x | ***** | 3\ny | **    | 1\nz |       | 0"


def test_half_rounds_up():
    out = render_histogram({"a": 4, "b": 1}, width=2)
    # 1 * 2 / 4 = 0.5 -> 1
    assert out == "a | ## | 4\nb | #  | 1"


def test_all_zero_and_empty():
    assert render_histogram({"b": 0, "a": 0}, width=3) == "a |     | 0\nb |     | 0"
    assert render_histogram({}) == ""


def test_exact_rounding_with_big_numbers():
    big = 10**17
    out = render_histogram({"m": 2 * big, "h": big}, width=1)
    assert out == "m | # | 200000000000000000\nh | # | 100000000000000000"
    out = render_histogram({"m": 2 * big + 2, "h": big}, width=1)
    assert out.split("\n")[1] == "h |   | 100000000000000000"


def test_errors():
    assert _raises_value_error({"a": -1})
    assert _raises_value_error({"a": 1}, width=0)
    assert _raises_value_error({"a": 1}, char="")
    assert _raises_value_error({"a": 1}, char="##")
