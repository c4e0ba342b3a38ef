"""Disk caps: one btrfs file system polar mounts from a sparse image, a quota group per sandbox.

A sandbox that fills the disk must fail with EDQUOT, not take the host's space. XFS and ext4 project quotas need
kernel options that many kernels are built without (CONFIG_XFS_QUOTA, CONFIG_QFMT_V2); btrfs quota groups are part
of btrfs. polar uses btrfs *simple* quotas (kernel 6.7+): each extent is charged to the subvolume that wrote it, and
a subvolume created inside a capped one joins the same group, so `btrfs subvolume create` is no way around a cap.
Each sandbox's files live in a subvolume that is a member of a level-1 group `1/<subvolume id>` holding the limit:
a local sandbox's whole root (workspace, /tmp, HOME, writable dirs), or a container's writable layer when dockerd
keeps its data on this volume (`scripts/docker.sh` puts it there).

The image is sparse and sized to half the host's free space when it is made, so even every sandbox together cannot
fill the host's disk; deleted files give their blocks back (the loop device passes discards through). Where the
volume cannot be had (not root, no loop device, no mkfs.btrfs, an older kernel), sandboxes run uncapped and polar
warns once, saying why.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import struct
import subprocess
import sys
import warnings
from functools import cache
from pathlib import Path

from polar.errors import SandboxError

VOLUME_DIR = Path("/var/lib/polar")
IMAGE, MOUNT = VOLUME_DIR / "volume.btrfs", VOLUME_DIR / "volume"


def _ioc(direction: int, nr: int, size: int) -> int:
    return direction << 30 | size << 16 | 0x94 << 8 | nr  # 0x94: btrfs's ioctl magic


_W, _R, _RW = 1, 2, 3
_SUBVOL_CREATE, _SNAP_DESTROY = _ioc(_W, 14, 4096), _ioc(_W, 15, 4096)
_INO_LOOKUP = _ioc(_RW, 18, 4096)
_QUOTA_CTL, _QGROUP_ASSIGN = _ioc(_RW, 40, 16), _ioc(_W, 41, 24)
_QGROUP_CREATE, _QGROUP_LIMIT = _ioc(_W, 42, 16), _ioc(_R, 43, 48)
_ENABLE_SIMPLE_QUOTA, _LIMIT_MAX_RFER, _CLEAR = 4, 1, (1 << 64) - 1
_LEVEL1 = 1 << 48


def _ioctl(path: Path, request: int, args: bytes) -> bytearray:
    buf = bytearray(args)  # mutable: the kernel writes results back, and structs may exceed 1024 bytes
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, request, buf)
    finally:
        os.close(fd)
    return buf


def _vol_args(name: str) -> bytes:
    return struct.pack("q4088s", 0, name.encode())


def subvolume_id(path: Path) -> int:
    """The btrfs subvolume id of the directory `path` (the tree its root inode, 256, belongs to)."""
    return struct.unpack_from("Q", _ioctl(path, _INO_LOOKUP, struct.pack("QQ4080s", 0, 256, b"")))[0]


def cap_subvolume(path: Path, limit_bytes: int) -> int:
    """Put the subvolume at `path` into a new group holding `limit_bytes`; returns the group's id for `release`."""
    sub = subvolume_id(path)
    group = _LEVEL1 | sub
    # each ioctl goes through the parent: its transaction is charged to the parent's subvolume, never to a group
    # that may be full (a full group cannot pay for the change of its own limit)
    _ioctl(path.parent, _QGROUP_CREATE, struct.pack("QQ", 1, group))
    with contextlib.suppress(OSError):  # a positive return asks for a rescan that simple quotas never need
        _ioctl(path.parent, _QGROUP_ASSIGN, struct.pack("QQQ", 1, sub, group))
    _ioctl(path.parent, _QGROUP_LIMIT, struct.pack("QQQQQQ", group, _LIMIT_MAX_RFER, limit_bytes, 0, 0, 0))
    return group


def lift(path: Path) -> None:
    """Clear the cap of the group holding the subvolume at `path`, once nothing runs in it any more: a group at its
    limit cannot pay for deleting a subvolume nested in it, so removing a full sandbox needs the cap gone first."""
    group = _LEVEL1 | subvolume_id(path)
    _ioctl(path.parent, _QGROUP_LIMIT, struct.pack("QQQQQQ", group, _LIMIT_MAX_RFER, _CLEAR, 0, 0, 0))


_unreleased: set[tuple[Path, int]] = set()
"""Groups the kernel would not drop yet (a subvolume the agent nested still in them); retried at each release."""


def release(volume: Path, group: int) -> None:
    """Drop a sandbox's group once its subvolume is deleted. The deleted subvolume stays a member until the kernel
    has cleaned it up, so it is taken out of the group first; a group that still will not go is retried later, and
    one that outlives its process costs a few bytes."""
    with contextlib.suppress(OSError):
        _ioctl(volume, _QGROUP_ASSIGN, struct.pack("QQQ", 0, group & (_LEVEL1 - 1), group))
    _unreleased.add((volume, group))
    for pending in list(_unreleased):
        with contextlib.suppress(OSError):
            _ioctl(pending[0], _QGROUP_CREATE, struct.pack("QQ", 0, pending[1]))
            _unreleased.discard(pending)


def destroy(path: Path) -> None:
    """Delete the subvolume at `path` with everything in it, subvolumes the agent nested in it included."""
    try:
        _ioctl(path.parent, _SNAP_DESTROY, _vol_args(path.name))
        return
    except OSError:
        pass
    for parent, dirs, _ in os.walk(path, topdown=False):  # deepest first: a subvolume's root inode is 256
        for name in dirs:
            nested = Path(parent, name)
            if not nested.is_symlink() and nested.stat().st_ino == 256:
                with contextlib.suppress(OSError):
                    _ioctl(nested.parent, _SNAP_DESTROY, _vol_args(name))
    with contextlib.suppress(OSError):
        _ioctl(path.parent, _SNAP_DESTROY, _vol_args(path.name))
    shutil.rmtree(path, ignore_errors=True)


def hollow(path: Path) -> bool:
    """Replace the subvolume at `path`, which nothing may run on any more, with an empty one of the same name. The
    kernel drops a subvolume whole in milliseconds, where a caller that first walks its files (dockerd's btrfs
    driver, looking for nested subvolumes) spends most of a second on a root file system. False, with nothing
    changed, when the kernel will not drop it (a subvolume nested in it, a mount on it)."""
    try:
        _ioctl(path.parent, _SNAP_DESTROY, _vol_args(path.name))
    except OSError:
        return False
    _ioctl(path.parent, _SUBVOL_CREATE, _vol_args(path.name))
    return True


class CappedDir:
    """A sandbox's root: a subvolume on polar's volume, capped at `limit_mb`, removed whole by `remove`."""

    def __init__(self, path: Path, group: int):
        self.path, self.group = path, group

    @classmethod
    def create(cls, name: str, limit_mb: int) -> CappedDir | None:
        """None (after a one-time warning) when this machine cannot cap disk use."""
        if (root := volume()) is None:
            return None
        path = root / "sandboxes" / name
        try:
            path.parent.mkdir(exist_ok=True)
            _ioctl(path.parent, _SUBVOL_CREATE, _vol_args(name))
        except OSError as e:
            raise SandboxError(f"could not make the sandbox's directory {path} on polar's volume: {e}") from e
        try:
            return cls(path, cap_subvolume(path, limit_mb << 20))
        except OSError as e:
            destroy(path)
            raise SandboxError(f"could not cap the disk of the sandbox at {path}: {e}") from e

    def remove(self) -> None:
        """Delete the sandbox's files; call it once every process of the sandbox is dead."""
        with contextlib.suppress(OSError):
            lift(self.path)
        destroy(self.path)
        release(self.path.parent.parent, self.group)


def _mounted(path: Path) -> bool:
    target = str(path)
    with open("/proc/self/mounts") as f:
        return any(line.split()[1] == target for line in f)


def _run(*argv: str) -> None:
    step = subprocess.run(argv, capture_output=True, text=True)
    if step.returncode != 0:
        raise OSError(f"`{' '.join(argv)}` failed: {(step.stdout + step.stderr).strip()[-500:]}")


def _mount() -> Path:
    """Mount polar's volume (making its image first if there is none) and enable simple quotas on it."""
    if os.geteuid() != 0:
        raise OSError("polar is not running as root, which mounting a file system needs")
    VOLUME_DIR.mkdir(parents=True, exist_ok=True)
    with open(VOLUME_DIR / "volume.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process sets the volume up; the others find it mounted
        if not _mounted(MOUNT):
            if not IMAGE.exists():
                mkfs = shutil.which("mkfs.btrfs") or shutil.which("mkfs.btrfs", path="/usr/sbin:/sbin")
                if mkfs is None:
                    raise OSError("mkfs.btrfs is missing (apt-get install btrfs-progs)")
                size = shutil.disk_usage(VOLUME_DIR).free // 2
                with open(IMAGE.with_suffix(".new"), "wb") as f:
                    f.truncate(size)
                _run(mkfs, "-q", str(IMAGE.with_suffix(".new")))
                IMAGE.with_suffix(".new").rename(IMAGE)
            MOUNT.mkdir(exist_ok=True)
            _run("mount", "-o", "loop,discard", str(IMAGE), str(MOUNT))  # discards give freed blocks back
        try:
            _ioctl(MOUNT, _QUOTA_CTL, struct.pack("QQ", _ENABLE_SIMPLE_QUOTA, 0))
        except OSError as e:
            raise OSError(f"this kernel ({os.uname().release}) offers no btrfs simple quotas, which need 6.7 "
                          f"or later ({e})") from e
    return MOUNT


@cache
def warn_uncapped(why: str) -> None:
    """Say once (per reason) that sandboxes here run without a disk cap, and why."""
    warnings.warn(f"sandboxes get no disk cap on this machine: {why}. Their writes count against the host's disk",
                  stacklevel=3)


@cache
def volume() -> Path | None:
    """polar's capped volume, mounted; None, with a one-time warning saying why, where this machine has none."""
    try:
        return _mount()
    except OSError as e:
        warn_uncapped(f"{e}; polar caps disk use when it runs as root on Linux 6.7+ with btrfs-progs")
        return None


if __name__ == "__main__":  # `python3 -m polar.envs.sandbox.disk`: mount the volume, print where (docker.sh)
    where = volume()
    print(where or "", end="")
    sys.exit(0 if where else 1)
