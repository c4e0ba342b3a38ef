from table import render_table


def test_basic_example():
    rows = [{"name": "apple", "qty": 3}, {"name": "pear", "qty": 12}]
    expected = "\n".join([
        "+-------+-----+",
        "| name  | qty |",
        "+-------+-----+",
        "| apple |   3 |",
        "| pear  |  12 |",
        "+-------+-----+",
    ])
    assert render_table(rows) == expected


def test_column_discovery_order_and_missing_cells():
    rows = [{"b": "x"}, {"a": "long text", "b": None}]
    expected = "\n".join([
        "+---+-----------+",
        "| b | a         |",
        "+---+-----------+",
        "| x |           |",
        "|   | long text |",
        "+---+-----------+",
    ])
    assert render_table(rows) == expected


def test_floats_bools_and_alignment():
    rows = [{"item": "tea", "price": 2.5, "stock": True}, {"item": "coffee", "price": 10, "stock": False}]
    expected = "\n".join([
        "+--------+-------+-------+",
        "| item   | price | stock |",
        "+--------+-------+-------+",
        "| tea    |  2.50 | yes   |",
        "| coffee |    10 | no    |",
        "+--------+-------+-------+",
    ])
    assert render_table(rows) == expected


def test_mixed_column_is_left_aligned():
    rows = [{"v": 1}, {"v": "n/a"}, {"v": 100}]
    assert render_table(rows).split("\n")[3:6] == ["| 1   |", "| n/a |", "| 100 |"]


def test_column_of_only_empty_cells_is_left_aligned():
    rows = [{"id": 7, "note": None}, {"id": 8}]
    lines = render_table(rows).split("\n")
    assert lines[1] == "| id | note |"
    assert lines[3] == "|  7 |      |"


def test_explicit_columns():
    rows = [{"a": 1, "b": 2, "c": 3}]
    expected = "\n".join(["+---+---+", "| c | a |", "+---+---+", "| 3 | 1 |", "+---+---+"])
    assert render_table(rows, columns=["c", "a"]) == expected


def test_no_rows():
    assert render_table([], columns=["id", "name"]) == "\n".join(
        ["+----+------+", "| id | name |", "+----+------+"]
    )
    assert render_table([]) == ""
    assert render_table([{}, {}]) == ""


def test_negative_and_large_numbers():
    rows = [{"n": -5}, {"n": 12345.678}, {"n": 0.004}]
    lines = render_table(rows).split("\n")
    assert lines[3:6] == ["|       -5 |", "| 12345.68 |", "|     0.00 |"]
