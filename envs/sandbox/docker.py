"""The docker sandbox: one container per sandbox, with no network, capped memory, process count, CPU and disk.

The container runs `sleep infinity` under a tiny init that reaps zombies; commands go through one persistent
`docker exec -i <id> bash` running the shared driver (`shell.py`), so a round trip is a pipe write, not a new
exec. The driver's processes belong to the container runtime, not to the `docker exec` client, so the session
finds a command's processes as those in the container's cgroup born since it began (a double-forked daemon that
the container's init adopted included): the engine runs on this machine's kernel, and its /proc shows them.
Every container is labelled with its owner process; `reap_orphans`, run whenever a backend is made, removes
those whose owner died without stopping them (a SIGKILL), so nothing outlives polar for long. A container's
writable layer is capped (`disk.py`) when dockerd keeps its layers as btrfs subvolumes on polar's volume, as
`scripts/docker.sh` sets it up.

The agent's shell, and everything else `exec` runs, is the image's `USER`, as the image's authors meant; polar's own
set-up (a task's /logs and /tests) goes through `exec_as_root`. The sandbox also says what it runs on: `image`, and
`bases`, the base images its Dockerfile was built on (`dockerfile/build.py` labels them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from polar.envs.sandbox.disk import cap_subvolume, hollow, lift, release, warn_uncapped
from polar.envs.sandbox.dockerfile.build import describe_bases, image_bases, image_for_dockerfile
from polar.envs.sandbox.images import build_base_image
from polar.envs.sandbox.shell import (
    DRIVER,
    ShellSandbox,
    ShellSession,
    descendants,
    kill_quietly,
    proc_stat,
    sealed_folders,
)
from polar.errors import SandboxError
from polar.protocols import ExecResult, SandboxSpec

LABEL = "polar.sandbox"
START_ENGINE = "start one with `bash scripts/docker.sh` (as root) or `dockerd --bridge=none --iptables=false &`"


def owner_labels(pid: int | None = None) -> dict[str, str]:
    """The labels that tie a container to the polar process owning it (pid, its start time, this host)."""
    pid = os.getpid() if pid is None else pid
    started = proc_stat(pid)
    return {LABEL: "1", "polar.owner_pid": str(pid), "polar.owner_start": str(started[1] if started else -1),
            "polar.owner_host": socket.gethostname()}


def reap_orphans(client: Any) -> list[str]:
    """Remove this host's polar containers whose owner process is gone; returns their ids."""
    filters = {"label": [f"{LABEL}=1", f"polar.owner_host={socket.gethostname()}"]}
    removed = []
    for container in client.api.containers(all=True, filters=filters):
        labels = container.get("Labels") or {}
        owner = proc_stat(int(labels.get("polar.owner_pid", "0") or 0) or -1)
        if owner is None or str(owner[1]) != labels.get("polar.owner_start"):
            _remove(client, container["Id"])
            removed.append(container["Id"])
    return removed


REMOVE_TRIES = 4
"""How often a removal the engine refuses is tried again: on a loaded machine `docker rm -f` can give up waiting
for the killed container's exit, or meet the removal another caller started, and succeed a moment later."""


def layer_path(data_root: Path, container_id: str, record: str = "mount-id") -> Path:
    """The btrfs subvolume of one of a container's layers, as dockerd records it under its data root: `mount-id` the
    writable layer, `init-id` the init layer under it. `OSError` when dockerd has no such record."""
    mount = (data_root / "image" / "btrfs" / "layerdb" / "mounts" / container_id / record).read_text().strip()
    return data_root / "btrfs" / "subvolumes" / mount


def _hollow_layers(client: Any, data_root: Path, container_id: str) -> None:
    """Kill the container, then empty its two btrfs layers (its writable one and the init one under it) before
    dockerd removes them: dockerd's btrfs driver looks at every file of a layer for a nested subvolume before it
    deletes it, 0.3 s a layer of polar's base image (and more of a task's), where the kernel drops one whole
    (`disk.hollow`). A layer the kernel keeps, and a container still running, are left to dockerd as they are."""
    import docker

    with contextlib.suppress(docker.errors.APIError):  # not running (or gone): nothing to kill
        client.api.kill(container_id)
    try:
        if client.api.inspect_container(container_id)["State"]["Running"]:
            return
    except docker.errors.APIError:
        return
    for record in ("mount-id", "init-id"):
        with contextlib.suppress(OSError):
            hollow(layer_path(data_root, container_id, record))


def _remove(client: Any, container_id: str, btrfs_root: Path | None = None) -> None:
    """Remove the container and its layers; `btrfs_root`: dockerd's data root, where it keeps layers as btrfs
    subvolumes (`_hollow_layers`)."""
    import docker

    if btrfs_root is not None:
        _hollow_layers(client, btrfs_root, container_id)
    for attempt in range(REMOVE_TRIES):
        try:
            client.api.remove_container(container_id, force=True, v=True)
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as e:
            refusal = e.explanation or str(e)
        # a layer at its disk cap cannot pay for deleting a subvolume the agent nested in it: the container is dead
        # by now (`force` killed it first), so lift the cap before the next try
        with contextlib.suppress(OSError):
            lift(layer_path(btrfs_root or Path(client.info()["DockerRootDir"]), container_id))
        if attempt + 1 < REMOVE_TRIES:
            time.sleep(0.5 * 2 ** attempt)
    raise SandboxError(f"could not remove the sandbox container {container_id[:12]} after {REMOVE_TRIES} tries; "
                       f"the engine says: {refusal}. Remove it with `docker rm -f {container_id[:12]}`")


def _remove_sealed(root: Path | None) -> None:
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)


def _container_pids(container_id: str) -> list[int]:
    """The host pids of every process in the container (its cgroup), whatever started it."""
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{name}/cgroup") as f:
                if container_id in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def _host_pid(container_id: str, ns_pid: int) -> int | None:
    """The host pid of the container's process `ns_pid` (matched by its cgroup and its pid-namespace pids)."""
    for pid in _container_pids(container_id):
        try:
            with open(f"/proc/{pid}/status") as f:
                nspid = next((ln.split()[1:] for ln in f if ln.startswith("NSpid:")), [])
        except OSError:
            continue
        if len(nspid) > 1 and nspid[-1] == str(ns_pid):
            return pid
    return None


def _container_processes(container_id: str) -> dict[int, int]:
    """Every process in the container's cgroup, {host pid: start ticks}: what `docker exec` started as much as
    its init's tree."""
    return {pid: st[1] for pid in _container_pids(container_id) if (st := proc_stat(pid)) is not None}


class ContainerShellSession(ShellSession):
    """A `ShellSession` whose driver runs in a container: a command's processes are the container's processes
    born since it began, and killing the shell kills the driver itself (ending the `docker exec` client)."""

    def __init__(self, argv: Sequence[str], container_id: str, **kwargs: Any):
        super().__init__(argv, members=lambda: _container_processes(container_id), **kwargs)
        self.container_id = container_id
        self.driver: tuple[int, int] | None = None  # host pid and start time of the driver bash

    async def start(self) -> None:
        self.driver = None
        await super().start()
        probe = (await self._run("echo $$", timeout=30.0)).output.strip()
        pid = _host_pid(self.container_id, int(probe)) if probe.isdigit() else None
        started = proc_stat(pid) if pid else None
        if pid is None or started is None:
            await self.close()
            raise SandboxError("the docker sandbox's shell is not in this machine's /proc: the Docker engine must "
                               "run on this machine's kernel (not on a remote host or in a VM)")
        try:
            os.kill(pid, 0)
        except PermissionError as e:
            await self.close()
            raise SandboxError("polar cannot signal the docker sandbox's processes (to stop a timed-out command): "
                               "run it as root, or use rootless Docker") from e
        self.driver = (pid, started[1])

    def _driver_pid(self) -> int | None:
        """The driver's host pid while that process still is the driver (a dead pid may be reused)."""
        if self.driver is None or (st := proc_stat(self.driver[0])) is None or st[1] != self.driver[1]:
            return None
        return self.driver[0]

    def own_pids(self) -> set[int]:
        return super().own_pids() | ({self.driver[0]} if self.driver else set())

    def fresh(self) -> ContainerShellSession:
        return ContainerShellSession(self.argv, self.container_id, env=self.env, cwd=self.cwd,
                                     output_limit=self.output_limit, default_timeout=self.default_timeout)

    async def _kill_shell(self) -> None:
        if (pid := self._driver_pid()) is not None:
            for victim in [*descendants(pid), pid]:
                kill_quietly(victim)
        await super()._kill_shell()


def is_root(user: str) -> bool:
    """Whether an image's `USER` (`name`, `uid`, `name:group`; empty for none) is root."""
    return user.split(":", 1)[0] in ("", "root", "0")


def _shell_argv(cli: str, container_id: str, root: bool = False) -> list[str]:
    # an absolute path: a `bash` the agent puts earlier on the container's PATH never becomes a later shell
    return [cli, "exec", *(["--user", "0"] if root else []), "-i", container_id,
            "/bin/bash", "--noprofile", "--norc", "-c", DRIVER]


class DockerSandbox(ShellSandbox):
    backend = "docker"

    def __init__(self, spec: SandboxSpec, session: ShellSession, client: Any, container_id: str,
                 disk_group: tuple[Path, int] | None = None, image: str = "", user: str = "",
                 bases: dict[str, str] | None = None, owner: str | None = None, btrfs_root: Path | None = None):
        super().__init__(spec, session)
        self.client, self.container_id, self.disk_group = client, container_id, disk_group
        self.image, self.user, self.bases = image, user, bases or {}
        """The image the container runs, its `USER` (empty for root), and {base as written: image used}."""
        self.owner = owner
        """`uid:gid` of a USER that is not root (what polar's set-up hands its directories to), else None."""
        self.btrfs_root = btrfs_root
        """dockerd's data root where it keeps layers as btrfs subvolumes (`_remove` empties them first), else None."""
        self.sealed_root: Path | None = None
        """The host folder that holds the sealed dirs' folders (`sealed`), removed with the container."""

    def describe(self) -> str:
        """What the sandbox runs on, for a grade's log: its Dockerfile's bases (`describe_bases`) and a USER."""
        return describe_bases(self.bases) + (f"image user {self.user}\n" if self.user else "")

    async def exec_as_root(self, command: str, timeout: float | None = None) -> ExecResult:
        """Run one of polar's own set-up commands as root, in a shell of its own that ends with it, when the image's
        USER is another; else in the sandbox's shell like `exec`."""
        if self.owner is None:
            return await self.exec(command, timeout)
        if self.stopped:
            raise SandboxError("this sandbox was stopped; start a new one (env.reset() does)")
        session = ContainerShellSession(_shell_argv(self.session.argv[0], self.container_id, root=True),
                                        self.container_id, output_limit=self.spec.output_limit_bytes,
                                        default_timeout=self.spec.command_timeout_s)
        await session.start()
        try:
            return await session.run(command, timeout)
        finally:
            await session.close()

    def processes(self) -> dict[int, int]:
        return _container_processes(self.container_id)

    async def stop(self) -> None:
        if self.stopped:
            return
        await super().stop()
        await asyncio.to_thread(_remove, self.client, self.container_id, self.btrfs_root)
        if self.disk_group is not None:
            release(*self.disk_group)
        _remove_sealed(self.sealed_root)


class DockerBackend:
    name = "docker"

    def __init__(self) -> None:
        try:
            import docker
        except ImportError as e:
            raise SandboxError("the docker sandbox needs the docker SDK: pip install 'polar-gym[docker]'") from e
        self.cli = shutil.which("docker")
        if self.cli is None:
            raise SandboxError(f"the docker sandbox needs the docker CLI and a Docker engine; {START_ENGINE}")
        try:
            self.client = docker.from_env()
            self.client.ping()
        except docker.errors.DockerException as e:
            raise SandboxError(f"no Docker engine answers ({e}); {START_ENGINE}") from e
        self.base_image: str | None = None
        info = self.client.info()
        self.driver, self.data_root = info.get("Driver", "?"), Path(info.get("DockerRootDir", "/var/lib/docker"))
        self.btrfs_root = self.data_root if self.driver == "btrfs" else None
        reap_orphans(self.client)

    def _cap_layer(self, container_id: str, disk_mb: int) -> tuple[Path, int] | None:
        """Cap the container's writable layer, one of dockerd's btrfs subvolumes, before anything runs in it."""
        if self.driver != "btrfs":
            warn_uncapped(f"the Docker engine keeps containers on {self.driver}, not btrfs; `bash scripts/docker.sh` "
                          "restarts it with its data on polar's volume")
            return None
        try:
            return self.data_root, cap_subvolume(layer_path(self.data_root, container_id), disk_mb << 20)
        except OSError as e:
            warn_uncapped(f"cannot cap the Docker engine's btrfs layers in {self.data_root} ({e})")
            return None

    def _create(self, spec: SandboxSpec, image: str, sealed: dict[str, Path]) -> tuple[str, tuple[Path, int] | None]:
        import docker

        memory = {"mem_limit": f"{spec.memory_mb}m", "memswap_limit": f"{spec.memory_mb}m"} if spec.memory_mb else {}
        cpus = {"nano_cpus": round(spec.cpus * 1e9)} if spec.cpus else {}
        try:
            container = self.client.containers.create(  # `create`, unlike `run`, never pulls from a registry
                image, ["sleep", "infinity"], init=True, network_mode="none", pids_limit=spec.max_processes,
                working_dir=spec.workdir, hostname="polar", labels=owner_labels(), **memory, **cpus,
                environment={"LANG": "C.UTF-8", "TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat", **spec.env},
                volumes={**{m.host_path: {"bind": m.sandbox_path, "mode": "ro" if m.read_only else "rw"}
                            for m in spec.mounts},
                         **{str(folder): {"bind": path, "mode": "ro"} for path, folder in sealed.items()}},
            )
        except docker.errors.ImageNotFound as e:
            raise SandboxError(f"image {image!r} is not in the Docker engine; build or load it first") from e
        except docker.errors.APIError as e:
            raise SandboxError(f"could not create the sandbox container: {e}") from e
        disk_group = self._cap_layer(container.id, spec.disk_mb) if spec.disk_mb else None
        try:
            container.start()
        except docker.errors.APIError as e:
            _remove(self.client, container.id, self.btrfs_root)
            if disk_group is not None:
                release(*disk_group)
            raise SandboxError(f"could not start the sandbox container: {e}") from e
        return container.id, disk_group

    def image_for(self, spec: SandboxSpec) -> str:
        """The image a sandbox for `spec` runs on, built first when the engine lacks it: the spec's Dockerfile (on
        bases the engine has), else its image as named, else polar's offline base image (`polar images build`)."""
        if spec.dockerfile is not None:
            return image_for_dockerfile(self.client, spec.dockerfile, spec.image, spec.build_steps)
        if spec.image is not None:
            return spec.image
        if self.base_image is None:
            self.base_image = build_base_image()
        return self.base_image

    async def start(self, spec: SandboxSpec) -> DockerSandbox:
        image = spec.image if spec.dockerfile is None and spec.image else await asyncio.to_thread(self.image_for, spec)
        sealed_root = Path(tempfile.mkdtemp(prefix="polar-sealed-")) if spec.sealed_dirs else None
        sealed = sealed_folders(spec, sealed_root) if sealed_root else {}
        try:
            container_id, disk_group = await asyncio.to_thread(self._create, spec, image, sealed)
        except BaseException:
            _remove_sealed(sealed_root)
            raise
        # the container's cgroup caps memory and processes, so the driver needs no rlimits of its own
        session = ContainerShellSession(_shell_argv(self.cli, container_id), container_id,
                                        output_limit=spec.output_limit_bytes, default_timeout=spec.command_timeout_s)
        try:
            attrs = await asyncio.to_thread(self.client.api.inspect_image, image)
            user = (attrs.get("Config") or {}).get("User") or ""
            await session.start()
            owner = None
            if not is_root(user):
                probe = await session.run("echo \"$(id -u):$(id -g)\"", timeout=30)
                owner = probe.output.strip()
                if probe.exit_code != 0 or not re.fullmatch(r"\d+:\d+", owner):
                    raise SandboxError(f"the image {image}'s USER {user!r} has no uid and gid in it: {owner[-500:]}")
        except BaseException:
            await session.close()
            await asyncio.to_thread(_remove, self.client, container_id, self.btrfs_root)
            if disk_group is not None:
                release(*disk_group)
            _remove_sealed(sealed_root)
            raise
        sandbox = DockerSandbox(spec, session, self.client, container_id, disk_group, image=image, user=user,
                                bases=image_bases(attrs), owner=owner, btrfs_root=self.btrfs_root)
        sandbox.sealed, sandbox.sealed_root = sealed, sealed_root
        await sandbox.mark_processes()
        return sandbox
