"""The docker sandbox, for real: a Docker engine, the offline base image, mounts, cleanup, an episode. The contract
every backend keeps is in test_sandbox_contract.py."""

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import types
import uuid

import gymnasium as gym
import pytest
from conftest import CI, require_modules
from support import NESTED_SUBVOLUME

from polar.envs.registration import register_envs
from polar.envs.sandbox import docker as docker_sandbox
from polar.envs.sandbox import make_backend
from polar.envs.sandbox.docker import owner_labels
from polar.envs.sandbox.dockerfile.build import image_for_dockerfile
from polar.envs.sandbox.images import build_base_image, debian_mirror
from polar.errors import SandboxError
from polar.evaluation.runner import run_episode
from polar.policies import OraclePolicy
from polar.protocols import Mount, SandboxSpec

register_envs()


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def image(docker):
    return build_base_image()  # about a minute the first time on a machine, then instant


async def with_sandbox(fn, spec=None):
    sandbox = await make_backend("docker").start(spec or SandboxSpec())
    try:
        return await fn(sandbox)
    finally:
        await sandbox.stop()


def containers(docker, *filters):
    args = [a for f in filters for a in ("--filter", f)]
    return subprocess.run([docker, "ps", "-aq", "--no-trunc", *args], capture_output=True, text=True).stdout.split()


def container_pids(container_id):
    pids = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cgroup") as f:
                if container_id in f.read():
                    pids.append(int(name))
        except OSError:
            pass
    return pids


def test_mounts_are_read_only_or_writable_as_asked(image, tmp_path):
    (tmp_path / "ro").mkdir()
    (tmp_path / "rw").mkdir()
    (tmp_path / "ro" / "in.txt").write_text("from host")
    spec = SandboxSpec(mounts=(Mount(str(tmp_path / "ro"), "/ro"), Mount(str(tmp_path / "rw"), "/rw", read_only=False)))

    async def body(s):
        assert (await s.exec("cat /ro/in.txt")).output == "from host"
        assert "Read-only file system" in (await s.exec("touch /ro/x")).output
        assert (await s.exec("echo out > /rw/out.txt")).exit_code == 0
    run(with_sandbox(body, spec))
    assert (tmp_path / "rw" / "out.txt").read_text() == "out\n"


def test_a_stuck_shell_is_replaced_by_exactly_one_new_driver(image):
    async def body(s):
        r = await s.exec("while :; do :; done", timeout=1)  # killed inside the container; a new shell takes over
        assert r.timed_out and "restarted" in r.output
        assert (await s.exec("echo back")).output.endswith("back\n")
        # one driver is left: `docker exec` gives it parent pid 0 (a forked pipeline child has the driver's)
        assert (await s.exec("ps -eo ppid=,args= | grep -c '^ *0 .*__polar_nonce'")).output == "1\n"
    run(with_sandbox(body))


def test_memory_hog_is_oom_killed_and_fork_bomb_contained(image):
    async def body(s):
        r = await s.exec("python3 -c 'bytearray(1024**3)'; echo rc=$?", timeout=60)
        assert "rc=137" in r.output, r.output
        await s.exec("bomb() { bomb | bomb & }; bomb", timeout=5)
        await asyncio.sleep(1)
        assert 32 <= len(container_pids(s.container_id)) <= 64  # the bomb ran, up to the pids limit
        probe = await asyncio.create_subprocess_exec("true")  # the host stays responsive
        assert await asyncio.wait_for(probe.wait(), 5) == 0
        started = time.monotonic()
        await s.stop()
        assert time.monotonic() - started < 15 and container_pids(s.container_id) == []
    run(with_sandbox(body, SandboxSpec(memory_mb=256, max_processes=64)))


def test_stop_leaves_no_container_and_is_safe_twice(image, docker):
    async def body():
        s = await make_backend("docker").start(SandboxSpec())
        await s.exec("nohup sleep 1000 >/dev/null 2>&1 & setsid sleep 999 >/dev/null 2>&1 &")
        await s.stop()
        await s.stop()
        with pytest.raises(SandboxError, match="stopped"):
            await s.exec("true")
        return s.container_id

    container_id = run(body())
    assert containers(docker, f"id={container_id}") == [] and container_pids(container_id) == []


class WatchedEngine:
    """The engine's client, noting what the container's writable layer holds when polar asks dockerd to remove it."""

    def __init__(self, client, layer):
        self.client, self.layer, self.held = client, layer, None
        self.api = self

    def info(self):
        return self.client.info()

    def __getattr__(self, name):
        return getattr(self.client.api, name)

    def remove_container(self, container_id, **kwargs):
        self.held = sorted(os.listdir(self.layer))
        return self.client.api.remove_container(container_id, **kwargs)


@pytest.mark.parametrize("nested", [False, True], ids=["plain", "a nested subvolume"])
def test_stop_has_the_kernel_drop_the_layers_before_dockerd_walks_them(image, docker, nested):
    """dockerd's btrfs driver looks at every file of a layer for a nested subvolume before it deletes it, most of a
    second a container of the base image (`benchmarks/docker_lifecycle.py`): polar has the kernel drop both layers
    first, so dockerd finds them empty. A layer with a subvolume nested in it, which the kernel keeps, is left to
    dockerd whole. Either way the container and both its layers are gone."""
    backend = make_backend("docker")
    if backend.btrfs_root is None:
        message = f"the Docker engine keeps containers on {backend.driver}, not btrfs: run `bash scripts/docker.sh`"
        pytest.fail(message) if CI else pytest.skip(message)

    async def body():
        sandbox = await backend.start(SandboxSpec(workdir="/srv"))
        layers = [docker_sandbox.layer_path(backend.data_root, sandbox.container_id, record)
                  for record in ("mount-id", "init-id")]
        if nested:
            assert (await sandbox.exec(f"{NESTED_SUBVOLUME} && touch nest/file && echo ok")).output == "ok\n"
        sandbox.client = WatchedEngine(sandbox.client, layers[0])
        await sandbox.stop()
        return sandbox.container_id, layers, sandbox.client.held

    container_id, layers, held = run(body())
    assert "srv" in held if nested else held == []
    assert containers(docker, f"id={container_id}") == [] and [p for p in layers if p.exists()] == []


CHANGES = r"""set -e
echo new > /root/added; rm -f /etc/issue; mkdir -p /app/a/b; echo z > /app/a/b/c; chmod 700 /usr/bin/apt
rm -rf /usr/share/doc/bash; mv /usr/share/doc/sed /usr/share/doc/sed2; ln -s /etc /app/etclink
ln /app/a/b/c /app/hard; touch -d 2000-01-01 /etc/debian_version; chown 1:1 /etc/motd; cat /etc/passwd >/dev/null
echo x >> /usr/bin/perl; rm -rf /var/log/apt; touch /var/log/apt; mkfifo /app/fifo; echo sp > '/app/with space'
printf n > '/app/new
line'; mkdir /app/empty; rmdir /var/tmp; touch /var/tmp; truncate -s 0 /etc/shells; touch /etc/shells
mkdir /app/dir-to-be; rm -f /etc/subuid; mkdir /etc/subuid; echo in > /etc/subuid/file
touch -r /etc/group /etc/group; cp -p /etc/gai.conf /tmp/g; echo same-size-same-time > /dev/null
"""
"""Every kind of change the engine's diff tells apart: added, deleted and moved files and folders, a folder replaced
by a file and a file by a folder, modes, owners, times set back, hard links, symlinks, a FIFO, odd names, a read."""


@pytest.mark.parametrize("nested", [False, True], ids=["plain", "a nested subvolume"])
def test_btrfs_reads_a_container_s_changes_as_the_engine_does(image, docker, nested, monkeypatch):
    """Where dockerd keeps layers as btrfs subvolumes, polar reads a container's changes from a btrfs send stream
    between read-only snapshots (`layer_diff`) instead of the engine's walk of the whole image: the same answer,
    path for path and kind for kind, and the snapshots are gone afterwards. A subvolume made inside the container,
    which a snapshot holds as an empty folder, has the engine asked."""
    from polar.envs.sandbox import layer_diff

    backend = make_backend("docker")
    if backend.btrfs_root is None:
        message = f"the Docker engine keeps containers on {backend.driver}, not btrfs: run `bash scripts/docker.sh`"
        pytest.fail(message) if CI else pytest.skip(message)
    made = []  # the names of the folders the snapshots were made in

    def fresh():
        made.append(uuid.uuid4())
        return made[-1]

    monkeypatch.setattr(layer_diff, "uuid", types.SimpleNamespace(uuid4=fresh))

    async def body(sandbox):
        script = CHANGES + (f"cd /app && {NESTED_SUBVOLUME} && echo inside > nest/file\n" if nested else "")
        assert (await sandbox.exec(script + "echo done")).output.endswith("done\n")
        engine = {c["Path"]: c["Kind"] for c in sandbox.client.api.diff(sandbox.container_id)}
        layers = [docker_sandbox.layer_path(backend.data_root, sandbox.container_id, record)
                  for record in ("init-id", "mount-id")]
        try:
            kernel = await asyncio.to_thread(layer_diff.layer_changes, *layers)
        except layer_diff.NestedSubvolume:
            kernel = None
        answered = await asyncio.to_thread(layer_diff.container_changes, sandbox.client, sandbox.container_id,
                                           backend.btrfs_root)
        return engine, kernel, {c["Path"]: c["Kind"] for c in answered}

    engine, kernel, answered = run(with_sandbox(body, SandboxSpec(workdir="/srv")))
    assert {"/app/new\nline", "/etc/subuid/file", "/usr/share/doc/bash", "/app/hard", "/app/with space"} <= set(engine)
    assert answered == engine and kernel == (None if nested else engine)
    folders = [backend.data_root / "btrfs" / f"polar-layer-diff-{name.hex}" for name in made]
    assert len(folders) == 2 and [f for f in folders if f.exists()] == []


class RefusingEngine:
    """The engine's client, refusing the first `refusals` removals as a loaded dockerd does ("did not receive an
    exit event")."""

    def __init__(self, client, refusals: int):
        import docker as sdk

        self.client, self.refusals, self.api, self.sdk = client, refusals, self, sdk

    def info(self):
        return self.client.info()

    def remove_container(self, container_id, **kwargs):
        if self.refusals:
            self.refusals -= 1
            raise self.sdk.errors.APIError("500 Server Error", explanation="tried to kill container, but did not "
                                           "receive an exit event")
        return self.client.api.remove_container(container_id, **kwargs)


@pytest.mark.parametrize("refusals", [docker_sandbox.REMOVE_TRIES - 1, docker_sandbox.REMOVE_TRIES])
def test_a_removal_the_engine_refuses_a_while_is_retried_then_named(image, docker, refusals):
    import docker as sdk

    client = sdk.from_env()
    container = client.containers.create(image, ["sleep", "infinity"], network_mode="none", labels=owner_labels())
    container.start()
    try:
        if refusals < docker_sandbox.REMOVE_TRIES:
            docker_sandbox._remove(RefusingEngine(client, refusals), container.id)
            assert containers(docker, f"id={container.id}") == []
        else:
            with pytest.raises(SandboxError, match="did not receive an exit event.*docker rm -f"):
                docker_sandbox._remove(RefusingEngine(client, refusals), container.id)
    finally:
        with contextlib.suppress(sdk.errors.NotFound):
            container.remove(force=True)


def test_reaper_removes_containers_whose_owner_died(image, docker):
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = [a for k, v in owner_labels(dead.pid).items() for a in ("--label", f"{k}={v}")]
    live = [a for k, v in owner_labels().items() for a in ("--label", f"{k}={v}")]
    orphan = subprocess.run([docker, "create", *labels, image, "sleep", "infinity"],
                            capture_output=True, text=True, check=True).stdout.strip()
    mine = subprocess.run([docker, "create", *live, image, "sleep", "infinity"],
                          capture_output=True, text=True, check=True).stdout.strip()
    try:
        make_backend("docker")
        assert containers(docker, f"id={orphan}") == [] and containers(docker, f"id={mine}") == [mine]
    finally:
        subprocess.run([docker, "rm", "-f", orphan, mine], capture_output=True)


def test_nothing_outlives_a_sigkilled_owner(image, docker):
    code = ("import asyncio, sys\n"
            "from polar.envs.sandbox import make_backend\n"
            "from polar.protocols import SandboxSpec\n"
            "async def main():\n"
            "    s = await make_backend('docker').start(SandboxSpec())\n"
            "    print(s.container_id, flush=True)\n"
            "    await asyncio.sleep(300)\n"
            "asyncio.run(main())\n")
    owner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    container_id = owner.stdout.readline().strip()
    assert containers(docker, f"id={container_id}") == [container_id]
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    make_backend("docker")
    assert containers(docker, f"id={container_id}") == []


def test_code_env_runs_in_docker(image):
    env = gym.make("polar/Code-v0", sandbox="docker", max_turns=6)
    try:
        trace = run_episode(env, OraclePolicy(), seed=0, task_id=env.unwrapped.task_ids[0])
    finally:
        env.close()
    assert trace.reward == 1.0 and trace.sandbox == "docker"


def test_claude_code_runs_as_root_in_a_container_on_the_web_env(image, node, chromium):
    """Containers run as root, where Claude Code refuses to skip permissions unless told it is sandboxed."""
    env = gym.make("polar/Web-v0", sandbox="docker", harness="claude-code", max_turns=40, time_limit_s=300)
    try:
        trace = run_episode(env, OraclePolicy(), seed=0, task_id="shop-towels-to-cart")
    finally:
        env.close()
    assert (trace.status, trace.reward, trace.sandbox) == ("completed", 1.0, "docker"), trace.error


@pytest.mark.parametrize("copy", ["COPY ../secret.txt /x", "COPY link /x", "COPY linkdir/ /x/"])
def test_a_dockerfile_copies_nothing_from_outside_its_build_context(image, tmp_path, copy):
    import docker

    context = tmp_path / "environment"
    context.mkdir()
    (tmp_path / "secret.txt").write_text("the host's")
    (context / "link").symlink_to(tmp_path / "secret.txt")
    (context / "linkdir").symlink_to(tmp_path)
    (context / "Dockerfile").write_text(f"FROM {image}\n{copy}\n")
    with pytest.raises(SandboxError, match="outside the build context|not found in build context"):
        image_for_dockerfile(docker.from_env(), str(context / "Dockerfile"))


def test_missing_image_is_an_error_not_a_pull(image):
    with pytest.raises(SandboxError, match="not in the Docker engine"):
        run(make_backend("docker").start(SandboxSpec(image="polar/no-such-image:0")))


def test_no_engine_says_how_to_start_one(monkeypatch):
    require_modules("docker")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxError, match="scripts/docker.sh"):
        make_backend("docker")


def test_the_mirror_comes_from_apts_sources(tmp_path):
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n"
        "Components: main\n\nTypes: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n"
    )
    assert debian_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list.d" / "debian.sources").unlink()
    (tmp_path / "sources.list").write_text("deb-src http://src.example/debian bookworm main\n"
                                           "deb [arch=amd64] http://list.example/debian bookworm main contrib\n")
    assert debian_mirror(tmp_path) == "http://list.example/debian"
    (tmp_path / "sources.list").unlink()
    assert debian_mirror(tmp_path) is None
