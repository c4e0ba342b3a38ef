"""What a container changed against its image, read from btrfs: a `btrfs send` stream between two layers.

The engine's diff (`GET /containers/{id}/changes`) walks the whole image and the container's writable layer under
the btrfs storage driver, which has no diff of its own: about half a second of dockerd's CPU per call on polar's base
image, twice per graded Terminal-v0 episode. btrfs knows what differs: `btrfs send -p` compares two trees and visits
only the blocks they do not share. polar snapshots the container's writable layer read-only (constant time, one
transaction commit), makes the init layer under it read-only (nothing writes it once the container exists), takes
the paths a send stream between the two names, and decides each as the engine does (moby's `pkg/archive` changes:
mode, owner and device, and for what is not a folder size and modification time, and the file capability; a folder
that holds a change is itself changed; only the topmost deleted path is listed). Same answer, in tens of
milliseconds (`benchmarks/layer_diff.py`).

The snapshot lives in a folder of its own in the storage driver's folder (the layers' file system) and is deleted
before the call returns. Where dockerd keeps its layers elsewhere (another storage driver), where polar cannot
snapshot them (not root, no `btrfs` command), and for a layer holding a subvolume made inside the container (a
snapshot holds an empty folder in its place), `container_changes` asks the engine; where the btrfs way fails, it
warns once, saying why, and asks the engine from then on.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import struct
import subprocess
import uuid
import warnings
from pathlib import Path
from typing import Any

from polar.envs.sandbox.disk import destroy
from polar.envs.sandbox.docker import layer_path

MODIFIED, ADDED, DELETED = 0, 1, 2
"""The engine's change kinds (`Kind` in its diff)."""
_EMPTY_SUBVOLUME_INODE = 2
"""The inode of the empty folder a snapshot holds where its source had a subvolume nested in it."""
_failed: str | None = None
"""Why reading changes from btrfs failed once in this process (then the engine is asked), else None."""

_STREAM_MAGIC = b"btrfs-stream\0"
_LINK = 10
"""The send stream's `link` command: a new name (its path) for an inode that has another (its link attribute)."""
_PATH, _PATH_TO, _PATH_LINK = 15, 16, 17
"""The send stream's attributes that name a path in the tree: the path acted on, a rename's new name, the other
name of a hard link (a symlink's target uses the same attribute, and is not a path in the tree)."""
_CAPABILITY = "security.capability"


def container_changes(client: Any, container_id: str, btrfs_root: Path | None) -> list[dict[str, Any]]:
    """The container's changes against its image in the engine's format (`[{"Path": ..., "Kind": ...}]`), read by
    the kernel where dockerd keeps its layers as btrfs subvolumes under `btrfs_root`, else by the engine."""
    global _failed
    if btrfs_root is not None and _failed is None and os.geteuid() == 0 and shutil.which("btrfs"):
        try:
            layer, parent = layer_path(btrfs_root, container_id), layer_path(btrfs_root, container_id, "init-id")
        except OSError:
            pass  # no record of the layers under this id (a short id, a name): the engine knows it
        else:
            try:
                return [{"Path": path, "Kind": kind} for path, kind in layer_changes(parent, layer).items()]
            except NestedSubvolume:
                pass  # a snapshot holds an empty folder in its place: the engine walks into it
            except (OSError, ValueError, subprocess.CalledProcessError) as e:
                said = e.stderr.decode(errors="replace").strip() if isinstance(e, subprocess.CalledProcessError) else ""
                _failed = f"{e}: {said}" if said else str(e)
                warnings.warn(f"polar could not read a container's changes from btrfs ({_failed}); the engine's "
                              "slower diff is used instead", stacklevel=2)
    return client.api.diff(container_id) or []


class NestedSubvolume(Exception):
    """The layer holds a subvolume made inside it (a snapshot of the layer shows an empty folder in its place)."""


def layer_changes(parent: Path, layer: Path) -> dict[str, int]:
    """{path: kind} for what the btrfs subvolume `layer` changed against `parent`, the subvolume it was made from.
    `parent` is made read-only (a container's init layer is never written once the container exists); `layer` is
    snapshotted read-only, which costs a transaction commit, and the snapshot deleted afterwards."""
    if not _read_only(parent):
        _btrfs("property", "set", "-ts", str(parent), "ro", "true")
    work = layer.parent.parent / f"polar-layer-diff-{uuid.uuid4().hex}"  # the driver's folder: the same file system
    work.mkdir()
    new = work / "new"
    try:
        _btrfs("subvolume", "snapshot", "-r", str(layer), str(new))
        stream = _btrfs("send", "--no-data", "-q", "-p", str(parent), str(new))
        return _decide(parent, new, _stream_paths(stream))
    finally:
        if new.exists():
            destroy(new)
        with contextlib.suppress(OSError):
            work.rmdir()


def _read_only(subvolume: Path) -> bool:
    return _btrfs("property", "get", "-ts", str(subvolume), "ro").strip() == b"ro=true"


def _btrfs(*args: str) -> bytes:
    return subprocess.run(["btrfs", *args], capture_output=True, check=True).stdout


def _stream_paths(stream: bytes) -> set[str]:
    """Every path of the tree a send stream (version 1) names, as an absolute path; a rename's temporary names
    (which exist in neither tree) included."""
    if not stream.startswith(_STREAM_MAGIC):
        raise ValueError("btrfs send wrote no send stream")
    if (version := struct.unpack_from("<I", stream, len(_STREAM_MAGIC))[0]) != 1:
        raise ValueError(f"btrfs send wrote a version {version} stream, where polar reads version 1")
    pos, paths = len(_STREAM_MAGIC) + 4, set()
    while pos < len(stream):
        length, command, _crc = struct.unpack_from("<IHI", stream, pos)
        pos, end = pos + 10, pos + 10 + length
        while pos < end:
            kind, size = struct.unpack_from("<HH", stream, pos)
            value, pos = stream[pos + 4:pos + 4 + size], pos + 4 + size
            if kind in (_PATH, _PATH_TO) or (kind == _PATH_LINK and command == _LINK):
                paths.add("/" + os.fsdecode(value).strip("/"))
    return paths


class _Tree:
    """A read-only snapshot, looked up the way the tree holds it: no symlink in a path's folders is followed."""

    def __init__(self, root: Path):
        self.root = root
        self._stats: dict[str, os.stat_result | None] = {}

    def host(self, path: str) -> str:
        return str(self.root) + path if path != "/" else str(self.root)

    def lstat(self, path: str) -> os.stat_result | None:
        if path not in self._stats:
            folder = os.path.dirname(path)
            up = self.lstat(folder) if path != "/" else None
            if path != "/" and (up is None or not stat.S_ISDIR(up.st_mode)):
                self._stats[path] = None
            else:
                try:
                    self._stats[path] = os.lstat(self.host(path))
                except OSError:
                    self._stats[path] = None
        return self._stats[path]

    def capability(self, path: str) -> bytes | None:
        try:
            return os.getxattr(self.host(path), _CAPABILITY, follow_symlinks=False)
        except OSError:
            return None

    def below(self, path: str) -> list[str]:
        """Every path under the folder `path`, which `lstat` found to be one."""
        found = []
        for folder, dirs, files in os.walk(self.host(path)):
            if os.lstat(folder).st_ino == _EMPTY_SUBVOLUME_INODE:
                raise NestedSubvolume(folder)
            inside = folder[len(str(self.root)):] or "/"
            found += [os.path.join(inside, name) for name in dirs + files]
        return found

    def names(self, path: str) -> list[str]:
        """The folder `path`'s entries, as paths."""
        return [os.path.join(path, name) for name in os.listdir(self.host(path))]

    def links(self, path: str, inode: int) -> list[str]:
        """Every name of the inode at `path` (a file with more than one)."""
        done = subprocess.run(["btrfs", "inspect-internal", "inode-resolve", str(inode), str(self.root)],
                              capture_output=True, check=False)
        return ["/" + os.path.relpath(os.fsdecode(line), self.root) for line in done.stdout.splitlines()
                if line.strip()] or [path]


def _same_time(a: int, b: int) -> bool:
    """The engine's comparison of two times: equal, or the same second where one of them has no nanoseconds."""
    return a == b or (a // 10**9 == b // 10**9 and (a % 10**9 == 0 or b % 10**9 == 0))


def _different(old: os.stat_result, new: os.stat_result) -> bool:
    if (old.st_mode, old.st_uid, old.st_gid, old.st_rdev) != (new.st_mode, new.st_uid, new.st_gid, new.st_rdev):
        return True
    return not stat.S_ISDIR(old.st_mode) and (not _same_time(old.st_mtime_ns, new.st_mtime_ns)
                                               or old.st_size != new.st_size)


def _decide(old_root: Path, new_root: Path, named: set[str]) -> dict[str, int]:
    """The engine's changes among the paths a send stream named (and what those imply: an added folder's contents,
    every name of a changed file with several)."""
    old, new = _Tree(old_root), _Tree(new_root)
    changes: dict[str, int] = {}
    todo = sorted(named - {"/"})
    seen: set[str] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        before, after = old.lstat(path), new.lstat(path)
        if after is None:
            if before is not None and new.lstat(os.path.dirname(path)) is not None:
                changes[path] = DELETED
            continue
        if stat.S_ISDIR(after.st_mode) and after.st_ino == _EMPTY_SUBVOLUME_INODE:
            raise NestedSubvolume(path)
        if stat.S_ISREG(after.st_mode) and after.st_nlink > 1:
            todo += [link for link in new.links(path, after.st_ino) if link not in seen]
        if before is None:
            changes[path] = ADDED
            if stat.S_ISDIR(after.st_mode):
                changes.update(dict.fromkeys(new.below(path), ADDED))
            continue
        if _different(before, after) or old.capability(path) != new.capability(path):
            changes[path] = MODIFIED
            if stat.S_ISDIR(after.st_mode) and not stat.S_ISDIR(before.st_mode):
                changes.update(dict.fromkeys(new.below(path), ADDED))
            elif stat.S_ISDIR(before.st_mode) and not stat.S_ISDIR(after.st_mode):
                changes.update(dict.fromkeys(old.names(path), DELETED))
    for path in list(changes):
        folder = os.path.dirname(path)
        while folder != "/" and folder not in changes:
            changes[folder] = MODIFIED
            folder = os.path.dirname(folder)
    return changes
