"""Checks /app/totals.csv against the totals of /app/sales.csv."""

from pathlib import Path

EXPECTED = ["region,total", "South,300.00", "West,300.00", "North,140.50", "East,125.25"]


def test_totals_file_exists():
    assert Path("/app/totals.csv").is_file(), "/app/totals.csv is missing"


def test_totals_are_exact_and_sorted():
    lines = Path("/app/totals.csv").read_text().strip().splitlines()
    assert [ln.strip() for ln in lines] == EXPECTED, lines


def test_input_untouched():
    assert "Widget, large" in Path("/app/sales.csv").read_text()


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
