"""Every camera file is in its dated place with its content; nothing else moved."""

from pathlib import Path

STAMPS = ["20230415_1200", "20221231_0900", "20230101_0000", "20230415_0730", "20240229_2359", "20211105_1515"]


def test_files_moved_with_content():
    for stamp in STAMPS:
        day, time = stamp.split("_")
        target = Path(f"/app/sorted/{day[:4]}/{day[4:6]}/{day[6:]}_{time}.jpg")
        assert target.is_file(), target
        assert target.read_text() == f"jpeg bytes of {stamp}\n", target


def test_originals_gone():
    assert not list(Path("/app/photos").glob("IMG_*.jpg"))


def test_other_files_stay():
    assert Path("/app/photos/notes.txt").read_text() == "remember to back these up\n"
    assert Path("/app/photos/holiday IMG_20230101_1111.png").is_file()


def test_nothing_extra_in_sorted():
    files = sorted(p for p in Path("/app/sorted").rglob("*") if p.is_file())
    assert len(files) == len(STAMPS), files


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
