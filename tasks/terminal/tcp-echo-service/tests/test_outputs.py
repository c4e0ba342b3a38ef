"""Two clients at once, several lines each, each answered in upper case on its own connection."""

import socket
from pathlib import Path


def connect():
    conn = socket.create_connection(("127.0.0.1", 7000), timeout=5)
    return conn, conn.makefile("rwb")


def ask(stream, line):
    stream.write(line.encode() + b"\n")
    stream.flush()
    return stream.readline().decode()


def test_program_exists():
    assert Path("/app/upper_server.py").is_file()


def test_one_client_many_lines():
    conn, stream = connect()
    with conn:
        assert ask(stream, "hello") == "HELLO\n"
        assert ask(stream, "Mixed Case 123") == "MIXED CASE 123\n"


def test_two_clients_at_once():
    first, first_stream = connect()
    second, second_stream = connect()
    with first, second:
        assert ask(second_stream, "second") == "SECOND\n"  # answered while the first is still open
        assert ask(first_stream, "first") == "FIRST\n"


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
