"""The files come back over HTTP, from the process /app/serve.sh started and named in /app/server.pid."""

import os
import urllib.request
from pathlib import Path


def get(path):
    with urllib.request.urlopen(f"http://127.0.0.1:8000{path}", timeout=5) as response:
        return response.status, response.read().decode()


def test_index():
    status, body = get("/")
    assert status == 200 and "It works" in body


def test_status_file():
    assert get("/status.txt") == (200, "all systems nominal\n")


def listening_inodes(port):
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if os.path.exists(table):
            for line in open(table).read().splitlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                    inodes.add(fields[9])
    return inodes


def test_pid_file_names_the_server():
    pid = int(Path("/app/server.pid").read_text().strip())
    sockets = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert {f"socket:[{inode}]" for inode in listening_inodes(8000)} & sockets, "that process does not listen on 8000"


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
