"""python3 -m calc on expressions that exercise imports, precedence and associativity."""

import subprocess

CASES = {"2 + 3 * 4": "14", "(2 + 3) * 4": "20", "8 / 4 / 2": "1", "10 - 4 - 3": "3", "2 * 3 / 4": "1.5",
         "-(1 + 2) * 2": "-6", "7": "7", "1 / 4 + 1 / 4": "0.5", "100 / 10 / 5 * 2": "4"}


def calc(expression, cwd="/app"):
    return subprocess.run(["python3", "-m", "calc", expression], cwd=cwd, capture_output=True, text=True, timeout=10)


def test_expressions():
    wrong = {e: calc(e).stdout.strip() or calc(e).stderr[-200:] for e, want in CASES.items()
             if calc(e).stdout.strip() != want}
    assert not wrong, wrong


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
