"""/app/users.csv parses back to exactly the expected rows."""

import csv

EXPECTED = [
    ["id", "name", "email", "city"],
    ["1", "Edsger Dijkstra", "ewd@example.org", ""],
    ["3", "Grace Hopper", "grace@example.org", "New York"],
    ["7", "Alan Turing", "", "Wilmslow"],
    ["12", "Ada Lovelace", "ada@example.org", "London"],
    ["25", 'Katherine "Kate" Johnson', "kj@example.org", "Hampton, VA"],
    ["100", "Hopper, Grace (again)", "dup@example.org", ""],
]


def test_rows():
    with open("/app/users.csv", newline="") as f:
        rows = [row for row in csv.reader(f) if row]
    assert rows == EXPECTED, rows


if __name__ == "__main__":
    import sys

    failed = 0
    for name, check in list(globals().items()):
        if name.startswith("test_") and callable(check):
            try:
                check()
                print("PASS", name)
            except Exception as e:  # noqa: BLE001 - every failure is reported, then the verdict
                failed += 1
                print("FAIL", name, repr(e))
    sys.exit(1 if failed else 0)
