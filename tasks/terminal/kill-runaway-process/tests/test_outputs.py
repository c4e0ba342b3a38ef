"""The reports worker is gone, the other workers live, and runaway.pid names the one that was killed."""

from pathlib import Path


def workers():
    alive = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if b"/app/worker.py" in args and state != "Z":
                alive[int(proc.name)] = args[args.index(b"--queue") + 1].decode()
    return alive


def started():
    return [line.split() for line in Path("/tmp/.workers").read_text().splitlines()]


def test_runaway_killed():
    assert "reports" not in workers().values(), workers()


def test_others_alive():
    assert {"emails", "thumbnails", "invoices"} <= set(workers().values()), workers()


def test_pid_file():
    reports = {int(pid) for queue, pid in started() if queue == "reports"}
    assert int(Path("/app/runaway.pid").read_text().strip()) in reports


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
