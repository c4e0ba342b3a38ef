"""The local (bubblewrap) sandbox, for real: what it must keep from the host, and its Dockerfile replay. The contract
every backend keeps is in test_sandbox_contract.py."""

import asyncio
import io
import os
import shutil
import tarfile
import tempfile
from pathlib import Path

import pytest
from support import REPO

from polar.envs.sandbox import make_backend
from polar.envs.sandbox.dockerfile.replay import plan
from polar.errors import SandboxError, TaskFormatError, UnknownNameError
from polar.protocols import SandboxSpec
from polar.tasks.harbor import load_task


def run(coro):
    return asyncio.run(coro)


async def with_sandbox(fn, spec=None, backend="local"):
    sandbox = await make_backend(backend).start(spec or SandboxSpec())
    try:
        return await fn(sandbox)
    finally:
        await sandbox.stop()


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
    project = str(REPO)

    async def body(s):
        for path in (os.path.expanduser("~"), project, "/work", "/root", "/opt", "/var"):
            r = await s.exec(f"ls {path}")
            assert r.exit_code != 0, f"{path} is visible inside the sandbox: {r.output}"
        # a symlink planted in the workspace resolves inside the sandbox, not on the host
        await s.exec(f"ln -s {project}/pyproject.toml link")
        with pytest.raises(FileNotFoundError):
            await s.read("link")
    run(with_sandbox(body))


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


# --- the Dockerfile's COPY in the local sandbox: only from the build context, as docker ------------------------


@pytest.mark.parametrize("copy", ["COPY ../secret.txt /app/", "COPY ../* /app/", "ADD link /app/x",
                                  "COPY linkdir/ /app/d/"])
def test_the_replay_refuses_to_copy_from_outside_the_build_context(tmp_path, copy):
    task = tmp_path / "t"
    for rel, text in {"instruction.md": "Do it.\n", "task.toml": 'version = "1.0"\n', "tests/test.sh": "true\n",
                      "environment/Dockerfile": f"FROM polar/base:bookworm\nWORKDIR /app\n{copy}\n",
                      "environment/ok.txt": "fine\n", "secret.txt": "the host's\n"}.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    (task / "environment" / "link").symlink_to(task / "secret.txt")
    (task / "environment" / "linkdir").symlink_to(tmp_path)
    (task / "environment" / "inside").symlink_to("ok.txt")
    loaded = load_task(task)
    with pytest.raises(TaskFormatError, match="outside the build context"):
        plan(loaded.dockerfile, loaded.workdir, ())
    # a link that stays inside the context copies, and so does an absolute source, which docker also reads there
    loaded.dockerfile.write_text("FROM polar/base:bookworm\nWORKDIR /app\nCOPY inside /ok.txt /app/\n")
    loaded = load_task(task)
    archive = next(step.archive for step in plan(loaded.dockerfile, loaded.workdir, ()) if step.archive is not None)
    assert sorted(tarfile.open(fileobj=io.BytesIO(archive)).getnames()) == ["app/inside", "app/ok.txt"]


HIDDEN_PROBE = """
import asyncio, sys
import polar
from polar.envs.sandbox import make_backend
from polar.protocols import SandboxSpec

async def main():
    box = await make_backend("local").start(SandboxSpec())
    try:
        here = polar.__path__[0].rsplit("/polar", 1)[0]
        seen = await box.exec(f"find {here} -mindepth 1 -path {here}/bin -prune -o -size +0 "
                              "\\( -type f -o -type l \\) -print | head -3; "
                              "grep -rl 'csv-group-totals' /usr/local 2>/dev/null | head -3; echo probe-done")
        print(here, seen.output, sep="\\n")
    finally:
        await box.stop()

asyncio.run(main())
"""


def test_a_wheel_installed_under_usr_shows_no_hidden_test_or_solution(bwrap, tmp_path):
    """Installed non-editable into a folder the sandbox binds (as a wheel under /usr/local is), polar's package data
    holds every bundled suite's hidden tests and solutions; inside the sandbox its folders are empty."""
    import subprocess
    import sys

    wheel = tmp_path / "wheel"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(wheel), str(REPO)], check=True, capture_output=True)
    target = Path(tempfile.mkdtemp(prefix="polar-wheel-", dir="/usr/local/lib"))
    target.chmod(0o755)  # as pip leaves a site folder: readable by every user, the sandbox's own uid too
    try:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                        *wheel.glob("*.whl")], check=True, capture_output=True)
        assert (target / "polar" / "tasks" / "terminal" / "csv-group-totals" / "tests" / "test_outputs.py").is_file()
        probe = subprocess.run([sys.executable, "-c", HIDDEN_PROBE], capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(target)}, timeout=120, cwd=tmp_path)
        assert probe.returncode == 0, probe.stderr[-3000:]
        where, *seen = filter(None, probe.stdout.splitlines())  # bin/: --target's console script, no data
        assert where == str(target), "the probe must run the wheel's polar, not this checkout's"
        assert seen == ["probe-done"], seen
    finally:
        shutil.rmtree(target)
