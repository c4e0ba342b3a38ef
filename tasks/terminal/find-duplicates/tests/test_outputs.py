"""Groups of identical files, recomputed from the tree, must match /app/duplicates.txt."""

import hashlib
from collections import defaultdict
from pathlib import Path


def expected():
    groups = defaultdict(list)
    for path in Path("/app/files").rglob("*"):
        if path.is_file():
            groups[hashlib.sha256(path.read_bytes()).hexdigest()].append(str(path))
    return sorted(" ".join(sorted(paths)) for paths in groups.values() if len(paths) > 1)


def test_groups_match():
    lines = [" ".join(ln.split()) for ln in Path("/app/duplicates.txt").read_text().splitlines() if ln.strip()]
    assert lines == expected(), (lines, expected())


def test_there_are_groups():
    assert len(expected()) >= 3


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
