"""The edited file must equal the expected one, line for line."""

from pathlib import Path

EXPECTED = """; Service configuration. Edited by ops; keep the comments.
[server]
host = 0.0.0.0
port = 8443
; port = 9090 was the old staging port

[database]
host = db.internal
port = 5432
name = orders

[replica]
host = replica.local
port = 5432

[cache]
ttl = 300
"""


def test_file_is_as_expected():
    got = [ln.rstrip() for ln in Path("/app/app.ini").read_text().strip().splitlines()]
    assert got == EXPECTED.strip().splitlines(), got


def test_parses_as_ini():
    import configparser

    parser = configparser.ConfigParser()
    parser.read("/app/app.ini")
    assert parser["server"]["port"] == "8443" and parser["cache"]["ttl"] == "300"
    assert parser["replica"]["host"] == "replica.local"


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
