"""The local (bubblewrap) sandbox, for real: commands, limits, and what it must contain."""

import asyncio
import os
import socket
import time

import pytest

from polar.envs.sandbox import make_backend
from polar.errors import SandboxError, UnknownNameError
from polar.protocols import SandboxSpec


def run(coro):
    return asyncio.run(coro)


async def with_sandbox(fn, spec=None):
    sandbox = await make_backend("local").start(spec or SandboxSpec())
    try:
        return await fn(sandbox)
    finally:
        await sandbox.stop()


def test_shell_state_persists_and_output_is_exact(bwrap):
    async def body(s):
        assert (await s.exec("cd /tmp && export X=1")).exit_code == 0
        assert (await s.exec("pwd; echo $X")).output == "/tmp\n1\n"
        r = await s.exec("printf 'no newline'; echo err >&2; (exit 7)")
        assert (r.output, r.exit_code) == ("no newlineerr\n", 7)
        assert (await s.exec("echo é; python3 -c 'print(2+2)'")).output == "é\n4\n"
    run(with_sandbox(body))


def test_files_round_trip_and_missing_files_raise(bwrap):
    async def body(s):
        await s.write("deep/dir/f.txt", "héllo\n")
        assert await s.read("deep/dir/f.txt") == "héllo\n".encode()
        assert (await s.exec("cat /workspace/deep/dir/f.txt")).output == "héllo\n"
        with pytest.raises(FileNotFoundError):
            await s.read("nope.txt")
    run(with_sandbox(body))


def test_timeout_kills_the_command_tree_but_not_earlier_background_jobs(bwrap):
    async def body(s):
        await s.exec("sleep 300 >/dev/null 2>&1 &")
        await asyncio.sleep(0.05)
        started = time.monotonic()
        r = await s.exec("bash -c 'sleep 100 & sleep 100; wait'", timeout=1)
        assert r.timed_out and time.monotonic() - started < 5
        ps = (await s.exec("ps -eo args")).output
        assert "sleep 100" not in ps and "sleep 300" in ps
        assert (await s.exec("echo alive")).output == "alive\n"
    run(with_sandbox(body))


def test_a_stuck_shell_is_restarted_and_says_so(bwrap):
    async def body(s):
        r = await s.exec("while :; do :; done", timeout=1)
        assert r.timed_out and "restarted" in r.output
        assert (await s.exec("echo back")).output.endswith("back\n")
        r = await s.exec("exit 3")
        assert r.exit_code == 3 and "shell exited" in r.output
        assert "new one" in (await s.exec("true")).output
    run(with_sandbox(body))


def test_output_is_capped_and_the_command_stopped(bwrap):
    async def body(s):
        r = await s.exec("yes", timeout=30)
        assert r.truncated and not r.timed_out and len(r.output) < 4200
    run(with_sandbox(body, SandboxSpec(output_limit_bytes=4096)))


def test_writes_outside_the_workspace_do_not_reach_the_host(bwrap, tmp_path):
    async def body(s):
        r = await s.exec("touch /usr/polar-x; touch /etc/polar-x; touch /polar-x; touch /tmp/polar-x; echo done")
        assert "Read-only file system" in r.output
        assert (await s.exec("ls /tmp/polar-x")).exit_code == 0  # the sandbox's own /tmp
        await s.write("/tmp/polar-y", "x")
    run(with_sandbox(body))
    assert not any(os.path.exists(p) for p in ("/usr/polar-x", "/etc/polar-x", "/polar-x", "/tmp/polar-x",
                                                 "/tmp/polar-y"))


def test_host_home_and_project_files_are_invisible(bwrap):
    project = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    async def body(s):
        for path in (os.path.expanduser("~"), project, "/work", "/root", "/opt", "/var"):
            r = await s.exec(f"ls {path}")
            assert r.exit_code != 0, f"{path} is visible inside the sandbox: {r.output}"
        # a symlink planted in the workspace resolves inside the sandbox, not on the host
        await s.exec(f"ln -s {project}/pyproject.toml link")
        with pytest.raises(FileNotFoundError):
            await s.read("link")
    run(with_sandbox(body))


def test_no_network_even_to_the_hosts_loopback(bwrap):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    async def body(s):
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')"
        r = await s.exec(f'python3 -c "{code}"')
        assert "CONNECTED" not in r.output and r.exit_code != 0
        assert "lo" in (await s.exec("ls /sys/class/net 2>/dev/null || cat /proc/net/dev")).output

    try:
        run(with_sandbox(body))
    finally:
        server.close()


def test_fork_bomb_and_memory_hog_are_contained(bwrap):
    async def body(s):
        r = await s.exec("python3 -c 'bytearray(3 * 1024**3)'; echo rc=$?", timeout=30)
        assert "MemoryError" in r.output or "rc=137" in r.output, r.output  # rlimit, or the cgroup's OOM kill
        started = time.monotonic()
        await s.exec("bomb() { bomb | bomb & }; bomb", timeout=5)
        assert time.monotonic() - started < 15
        # the host stays responsive while the bomb is running
        probe = await asyncio.create_subprocess_exec("true")
        assert await asyncio.wait_for(probe.wait(), 5) == 0
    run(with_sandbox(body, SandboxSpec(memory_mb=1024, max_processes=64)))


@pytest.mark.skipif(os.geteuid() != 0, reason="per-sandbox uids are used when polar runs as root")
def test_no_process_outlives_the_sandbox(bwrap):
    async def body():
        s = await make_backend("local").start(SandboxSpec())
        await s.exec("nohup sleep 1000 >/dev/null 2>&1 & setsid sleep 999 >/dev/null 2>&1 & disown -a")
        uid, root = s.uid, s.root
        await s.stop()
        return uid, root

    uid, root = run(body())
    leftover = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.stat(f"/proc/{name}").st_uid == uid:
                with open(f"/proc/{name}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                        leftover.append(name)
        except OSError:
            pass
    assert leftover == [] and not root.exists()


def test_missing_bubblewrap_says_how_to_install_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxError, match="apt-get install bubblewrap"):
        make_backend("local")


def test_unknown_backend_lists_the_valid_ones():
    with pytest.raises(UnknownNameError, match="local, process"):
        make_backend("vm")


def test_process_backend_warns_that_it_is_unisolated():
    async def body():
        with pytest.warns(UserWarning, match="no isolation"):
            s = await make_backend("process").start(SandboxSpec())
        try:
            assert (await s.exec("echo hi")).output == "hi\n"
        finally:
            await s.stop()
    run(body())
