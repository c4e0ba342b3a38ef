"""Recomputes the top server-error paths from the log and compares them with /app/report.txt."""

import re
from collections import Counter
from pathlib import Path

LINE = re.compile(r'^\S+ \S+ \S+ \[[^]]+\] "(\S+) (\S+) [^"]*" (\d{3}) ')


def expected():
    counts = Counter()
    for line in Path("/app/access.log").read_text().splitlines():
        match = LINE.match(line)
        if match and match.group(3).startswith("5"):
            counts[match.group(2).split("?")[0]] += 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    return [f"{n} {path}" for path, n in ranked]


def test_report_matches():
    lines = [" ".join(ln.split()) for ln in Path("/app/report.txt").read_text().strip().splitlines()]
    assert lines == expected(), (lines, expected())


def test_log_untouched():
    assert len(Path("/app/access.log").read_text().splitlines()) == 2000


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
