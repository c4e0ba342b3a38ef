"""Drives /app/svc.sh through start, a second start, status, a crash, and stop."""

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

PIDFILE = Path("/app/daemon.pid")


def svc(command):
    return subprocess.run(["bash", "/app/svc.sh", command], capture_output=True, text=True, timeout=15)


def daemons():
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                args = (proc / "cmdline").read_bytes()
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if b"/app/daemon.py" in args and state != "Z":
                found.append(int(proc.name))
    return found


def wait_for(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def single_daemon(seconds=10.0):
    """The pid of the one daemon, once exactly one runs. Read from one scan, then kept: a fresh scan can miss it
    while it is still being exec'd (nohup, then setsid, then python3, all one pid)."""
    deadline = time.monotonic() + seconds
    while True:
        found = daemons()
        if len(found) == 1 or time.monotonic() > deadline:
            return found[0] if len(found) == 1 else None
        time.sleep(0.05)


def test_lifecycle():
    assert daemons() == [], "the daemon must be left stopped"
    status = svc("status")
    assert status.returncode == 3 and status.stdout.strip() == "stopped", status
    assert svc("start").returncode == 0
    pid = single_daemon()
    assert pid is not None and pid == int(PIDFILE.read_text().strip()), (pid, daemons())
    assert svc("start").returncode == 0 and wait_for(lambda: daemons() == [pid], 1.0), "a second copy started"
    status = svc("status")
    assert status.returncode == 0 and status.stdout.strip() == "running", status
    heartbeat = Path("/app/heartbeat")
    assert wait_for(heartbeat.exists, 10.0), "no heartbeat"
    beat = heartbeat.read_text()
    assert wait_for(lambda: heartbeat.read_text() != beat, 10.0), "the heartbeat does not change"
    assert svc("stop").returncode == 0
    assert daemons() == [] and not PIDFILE.exists()
    assert svc("stop").returncode == 0


def test_stale_pid_file_is_not_running():
    assert svc("start").returncode == 0
    pid = single_daemon()
    assert pid is not None, daemons()
    with contextlib.suppress(ProcessLookupError):  # gone already is the same crash
        os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: daemons() == [])
    status = svc("status")
    assert status.returncode == 3 and status.stdout.strip() == "stopped", status
    assert svc("start").returncode == 0 and single_daemon() is not None
    assert svc("stop").returncode == 0 and daemons() == []


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
