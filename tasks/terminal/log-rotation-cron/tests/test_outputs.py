"""Runs rotate.sh four times over fresh logs, then checks the crontab line means every 15 minutes."""

import subprocess
from pathlib import Path

LOGS = Path("/app/logs")


def test_rotation_keeps_three():
    for old in LOGS.glob("app.log*"):
        old.unlink()
    for run in range(1, 5):
        (LOGS / "app.log").write_text(f"generation {run}\n")
        done = subprocess.run(["bash", "/app/rotate.sh"], capture_output=True, text=True, timeout=10)
        assert done.returncode == 0, done.stderr
        assert (LOGS / "app.log").read_text() == ""
    assert (LOGS / "app.log.1").read_text() == "generation 4\n"
    assert (LOGS / "app.log.2").read_text() == "generation 3\n"
    assert (LOGS / "app.log.3").read_text() == "generation 2\n"
    assert sorted(p.name for p in LOGS.iterdir()) == ["app.log", "app.log.1", "app.log.2", "app.log.3"]


def minutes(field):
    """The minutes of the hour a crontab minute field matches."""
    found = set()
    for part in field.split(","):
        spec, _, step = part.partition("/")
        first, last = (0, 59) if spec == "*" else (int(spec.split("-")[0]), int(spec.split("-")[-1]))
        if step and "-" not in spec and spec != "*":
            last = 59
        found.update(range(first, last + 1, int(step or 1)))
    return found


def test_crontab_every_15_minutes():
    lines = [ln for ln in Path("/app/crontab").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(lines) == 1, lines
    fields = lines[0].split(None, 5)
    assert minutes(fields[0]) == {0, 15, 30, 45}, fields
    assert fields[1:5] == ["*", "*", "*", "*"], fields
    assert "/app/rotate.sh" in fields[5]


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
