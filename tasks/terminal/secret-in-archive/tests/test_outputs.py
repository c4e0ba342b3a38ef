"""The token must be the one hidden in the innermost archive."""

import tarfile
from pathlib import Path


def test_token():
    assert Path("/app/token.txt").read_text().strip() == "9f3c2a7e41b8d05c"


def test_bundle_untouched():
    with tarfile.open("/app/bundle.tar.gz") as tar:
        names = sorted(tar.getnames())
    assert names == ["level1/other.tar", "level1/pack.tar.gz", "misc/empty.gz", "notes.txt"], names


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
