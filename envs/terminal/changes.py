"""What a Terminal-v0 agent changed in its sandbox since setup: the episode's artefact, and how a re-grade puts it back.

Harbor's tests grade the sandbox's file system (and the task's own processes), so the artefact is that state as a
difference from the state setup left: a `Snapshot` is taken at the end of setup and again at grading, after the
process reset and before the tests are copied in, and what differs is recorded (`Changes`). **Docker**: the engine
lists what differs from the image (`docker diff`) and streams those paths out (its archive API: nothing inside the
container answers); setup's own part is what the first snapshot saw. **Local**: only the sandbox's writable places
can differ (the working directory, /tmp, HOME, /solution), listed and hashed by the host's read-only tools. Neither
records /tests and /logs (grading fills the one and empties the other) nor the harness's mounts. Regular files,
directories and symlinks with their modes are kept, and the deleted paths; other special files (a FIFO, a socket, a
device node) cannot be, and are listed by kind (`Changes.specials`: grading calls one `tampered`). Past
`CONTENT_CAP` bytes of content the artefact only says how large the changes were: such an episode cannot be
re-graded.

`apply` writes recorded changes into a fresh sandbox through the sandbox's own shell (one tar, extracted there), never
on the host; `decode` refuses a malformed artefact with a `ValueError` naming what is wrong.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import io
import math
import posixpath
import shlex
import tarfile
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polar.envs.sandbox.layer_diff import container_changes
from polar.envs.terminal.tamper import DIFF_KINDS, engine_stat
from polar.errors import SandboxError
from polar.protocols import Sandbox

CONTENT_CAP = 16 << 20
SNAPSHOT_CAP = 1 << 30
"""What grading's snapshot of the final state may hold (the two runs replay it); only `CONTENT_CAP` of it goes into
the trace's artefact."""
"""Bytes of file content an artefact keeps (21 MiB of base64 in the trace); past it the episode cannot be re-graded."""
ENGINE_FILES = ("/etc/hosts",)
"""A file the engine bind-mounts into every container, which its diff never lists: an honest edit of it (a name the
task's service answers to) is read into the snapshot too, and put back in place (a mount point cannot be replaced)."""
GRADING_DIRS = ("/tests", "/logs")
"""Grading's own: emptied and refilled before the tests run, so never the agent's state."""
_GO_DIR, _GO_SETUID, _GO_SETGID, _GO_STICKY = 1 << 31, 1 << 23, 1 << 22, 1 << 20
_GO_SPECIAL = (1 << 26) | (1 << 25) | (1 << 24) | (1 << 21) | (1 << 19)
"""Go's os.FileMode bits (the engine's path stat): device, pipe, socket, char device, irregular."""


class TooLarge(Exception):
    """The changes hold more than `CONTENT_CAP` bytes of content (at least `size`)."""

    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


@dataclass(frozen=True)
class Entry:
    """One path's state: what it is, its mode, and what it holds (a file's hash, a link's target)."""

    kind: str
    """`file`, `dir` or `symlink`."""
    mode: int
    digest: str = ""
    mtime: int = 0
    owner: tuple[int, int] | None = None


@dataclass
class Snapshot:
    """What a sandbox's changeable places hold: entries by absolute path, paths deleted from the image (docker), and
    the content of those entries that differ from the snapshot it was compared with."""

    entries: dict[str, Entry]
    deleted: set[str] = field(default_factory=set)
    contents: dict[str, bytes] = field(default_factory=dict)
    specials: dict[str, str] = field(default_factory=dict)
    """Special files by path: `fifo`, `socket` or `device`."""
    engine_diff: dict[str, str] | None = None
    """docker: the container's whole diff against its image as it was read (`container_changes`), {path: added,
    changed or deleted}; the tamper checks read it rather than read it a second time."""


@dataclass
class Changes:
    """What the agent changed since setup: entries with their contents, deleted paths, and the task's own processes
    (those setup started) that were gone by grading, as (pid inside the sandbox, command line)."""

    entries: dict[str, Entry] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)
    deleted: list[str] = field(default_factory=list)
    ended: list[tuple[int, list[str]]] = field(default_factory=list)
    too_large: int | None = None
    """Set instead of everything else when the content was past `CONTENT_CAP`: at least this many bytes."""
    specials: dict[str, str] = field(default_factory=dict)
    """Special files (`fifo`, `socket`, `device`) that are new since setup: the artefact cannot hold them."""

    def summary(self) -> str:
        if self.too_large is not None:
            return (f"artefact: the changes hold at least {self.too_large} bytes, past the {CONTENT_CAP >> 20} MiB an "
                    "artefact keeps: this episode cannot be re-graded")
        kinds = [e.kind for e in self.entries.values()]
        return (f"artefact: {kinds.count('file')} files, {kinds.count('dir')} directories, {kinds.count('symlink')} "
                f"symlinks changed, {len(self.deleted)} paths deleted, {len(self.ended)} of the task's processes ended")


def under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def compare(base: Snapshot, now: Snapshot, ended: list[tuple[int, list[str]]]) -> Changes:
    """What `now` has that `base` did not (`now.contents` holds the content of each such file)."""
    entries = {p: e for p, e in now.entries.items() if base.entries.get(p) != e
               and (e.kind != "file" or p in now.contents)}  # a file gone while it was read is not there
    gone = {p for p in base.entries if p not in now.entries} | (now.deleted - base.deleted)
    deleted = [p for p in sorted(gone) if not any(under(p, q) and p != q for q in gone)]
    specials = {p: k for p, k in now.specials.items() if base.specials.get(p) != k}
    return Changes(entries, {p: now.contents[p] for p in entries if entries[p].kind == "file"}, deleted, ended,
                   specials=specials)


# --- docker: the layer's diff and the engine's archives --------------------------------------------------------------


def docker_snapshot(client: Any, container_id: str, skip: Iterable[str], base: Snapshot | None = None,
                    cap: int = CONTENT_CAP, btrfs_root: Path | None = None) -> Snapshot:
    """The container's paths that differ from its image (`container_changes`; `btrfs_root`: dockerd's data root
    where it keeps layers as btrfs subvolumes), except those at or under `skip` (and added folders that only hold a
    skipped path, as a mount point's parents). With `base`, the content of every file that differs from it is kept
    (`TooLarge` past the cap); contents and modes are read by the engine."""
    skip = tuple(skip)
    diff = {c["Path"]: DIFF_KINDS[c["Kind"]] for c in container_changes(client, container_id, btrfs_root)}
    keep = {p: k for p, k in diff.items() if not any(under(p, s) for s in skip)}
    holders = {p for p in keep if any(under(s, p) for s in skip)}
    snap = Snapshot({}, {p for p, k in keep.items() if k == "deleted"}, engine_diff=diff)
    budget = [cap]
    whole: list[str] = []
    for path in sorted(p for p, k in keep.items() if k != "deleted"):
        if any(under(path, w) for w in whole) or (path in holders and keep[path] == "added"):
            continue
        stat = engine_stat(client, container_id, path)
        if stat is not None and stat["mode"] & _GO_SPECIAL:
            snap.specials[path] = _go_special(stat["mode"])
        if stat is None or stat["mode"] & _GO_SPECIAL:
            continue
        if stat["mode"] & _GO_DIR and keep[path] != "added":
            snap.entries[path] = Entry("dir", _go_permissions(stat["mode"]))
            continue
        if stat["mode"] & _GO_DIR:
            whole.append(path)
        _read_archive(client, container_id, path, snap, base, budget, cap)
    for path in ENGINE_FILES:
        if path not in snap.entries:
            _read_archive(client, container_id, path, snap, base, budget, cap)
    return snap


def _go_special(mode: int) -> str:
    return "fifo" if mode & (1 << 25) else "socket" if mode & (1 << 24) else "device"


def _go_permissions(mode: int) -> int:
    return ((mode & 0o777) | (0o4000 if mode & _GO_SETUID else 0) | (0o2000 if mode & _GO_SETGID else 0)
            | (0o1000 if mode & _GO_STICKY else 0))


class _Chunks(io.RawIOBase):
    """A readable stream over the engine's archive chunks, for tarfile's streaming mode."""

    def __init__(self, chunks: Iterator[bytes]):
        self.chunks, self.rest = chunks, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.rest:
            try:
                self.rest = next(self.chunks)
            except StopIteration:
                return 0
        n = min(len(buffer), len(self.rest))
        buffer[:n], self.rest = self.rest[:n], self.rest[n:]
        return n


def _read_archive(client: Any, container_id: str, path: str, snap: Snapshot, base: Snapshot | None,
                  budget: list[int], cap: int) -> None:
    """Add what the engine's archive of `path` holds to `snap`, keeping the content of files that differ from `base`
    while `budget` (bytes left under the cap) lasts."""
    import docker

    try:
        stream, _ = client.api.get_archive(container_id, path)
    except docker.errors.NotFound:
        return
    parent, links = posixpath.dirname(path), []
    with tarfile.open(fileobj=io.BufferedReader(_Chunks(iter(stream))), mode="r|") as tar:
        for member in tar:
            name, owner = posixpath.join(parent, member.name), (member.uid, member.gid)
            if member.isdir():
                snap.entries[name] = Entry("dir", member.mode & 0o7777, owner=owner)
            elif member.issym():
                snap.entries[name] = Entry("symlink", 0o777, member.linkname, owner=owner)
            elif member.islnk():  # a second name of a file: read on its own, it is a regular file
                links.append(name)
            elif member.isfifo() or member.isdev():
                snap.specials[name] = "fifo" if member.isfifo() else "device"
            elif member.isfile():
                digest, data = _hashed(tar, member, keep=base is not None and member.size <= budget[0])
                entry = Entry("file", member.mode & 0o7777, digest, int(member.mtime), owner)
                snap.entries[name] = entry
                if base is not None and base.entries.get(name) != entry:
                    budget[0] -= member.size
                    if data is None:
                        raise TooLarge(cap - budget[0])
                    snap.contents[name] = data
    for name in links:
        _read_archive(client, container_id, name, snap, base, budget, cap)


def _hashed(tar: tarfile.TarFile, member: tarfile.TarInfo, keep: bool) -> tuple[str, bytes | None]:
    """A regular member's sha256, read in chunks, and its bytes when `keep`."""
    handle, digest, parts = tar.extractfile(member), hashlib.sha256(), []
    while handle is not None and (chunk := handle.read(1 << 20)):
        digest.update(chunk)
        if keep:
            parts.append(chunk)
    return digest.hexdigest(), b"".join(parts) if keep else None


# --- local: the sandbox's writable places ------------------------------------------------------------------


async def local_snapshot(sandbox: Sandbox, roots: Iterable[str], base: Snapshot | None = None,
                         cap: int = CONTENT_CAP) -> Snapshot:
    """Everything under `roots` (not the roots themselves), listed and hashed inside the sandbox by the host's
    read-only tools; with `base`, the content of every file that differs from it (`TooLarge` past the cap). A file
    the sandbox cannot read has no hash and no content: it is left out of the changes."""
    folders = " ".join(shlex.quote(r) for r in _outermost(roots))
    listing = await _captured(sandbox, f"/usr/bin/find {folders} -mindepth 1 \\( -type f -o -type d -o -type l \\) "
                                       "-printf '%y\\0%m\\0%s\\0%T@\\0%p\\0%l\\0' 2>/dev/null; "
                                       f"/usr/bin/find {folders} -mindepth 1 \\( -type p -o -type s -o -type b -o "
                                       "-type c \\) -printf 'special-%y  %p\\0' >\"$out.sums\" 2>/dev/null; "
                                       f"/usr/bin/find {folders} -type f -print0 2>/dev/null | "
                                       "/usr/bin/xargs -0 -r /usr/bin/sha256sum -z >>\"$out.sums\" 2>/dev/null; true")
    listed, sums = listing
    digests, specials = {}, {}
    for line in sums.split(b"\0"):
        if line:
            digest, _, name = line.partition(b"  ")
            if digest.startswith(b"special-"):  # a FIFO, socket or device node (hashes are hex)
                specials[name.decode(errors="surrogateescape")] = _SPECIAL_KINDS[digest[8:].decode()]
            else:
                digests[name.decode(errors="surrogateescape")] = digest.decode()
    fields = listed.split(b"\0")
    snap, sizes = Snapshot({}, specials=specials), {}
    for i in range(0, len(fields) - 5, 6):
        kind, mode, size, mtime, raw, target = fields[i:i + 6]
        path = raw.decode(errors="surrogateescape")
        if kind == b"d":
            snap.entries[path] = Entry("dir", int(mode, 8))
        elif kind == b"l":
            snap.entries[path] = Entry("symlink", 0o777, target.decode(errors="surrogateescape"))
        else:
            snap.entries[path] = Entry("file", int(mode, 8), digests.get(path, ""), math.floor(float(mtime)))
            sizes[path] = int(size)
    if base is not None:
        wanted = sorted(p for p, e in snap.entries.items() if e.kind == "file" and base.entries.get(p) != e)
        if (total := sum(sizes[p] for p in wanted)) > cap:
            raise TooLarge(total)
        snap.contents = await _local_contents(sandbox, wanted)
    return snap


_SPECIAL_KINDS = {"p": "fifo", "s": "socket", "b": "device", "c": "device"}
"""find's `%y` of a special file."""


def _outermost(roots: Iterable[str]) -> list[str]:
    ordered = sorted({posixpath.normpath(r) for r in roots})
    return [r for r in ordered if not any(under(r, o) and r != o for o in ordered)]


@contextlib.asynccontextmanager
async def _scratch(sandbox: Sandbox) -> AsyncIterator[str]:
    """A fresh folder in /logs (grading's: never listed, never the agent's), removed afterwards."""
    made = await sandbox.exec("/bin/mkdir -p /logs && /bin/mktemp -d /logs/.polar-artefact.XXXXXXXX", timeout=30)
    folder = made.output.strip()
    if made.exit_code != 0 or not folder.startswith("/logs/.polar-artefact."):
        raise SandboxError(f"could not make a folder for the artefact in /logs: {made.output[-500:]}")
    try:
        yield folder
    finally:
        await sandbox.exec(f"/bin/rm -rf {shlex.quote(folder)}", timeout=60)


async def _captured(sandbox: Sandbox, command: str, extra: bytes = b"") -> tuple[bytes, bytes]:
    """Run `command` with `$out` a fresh file in a scratch folder and `$out.in` holding `extra`; return what it left
    in `$out` and `$out.sums`, read back through the sandbox."""
    async with _scratch(sandbox) as folder:
        out = f"{folder}/out"
        if extra:
            await sandbox.write(f"{out}.in", extra)
        result = await sandbox.exec(f"cd / && out={shlex.quote(out)} && : >\"$out.sums\" && {{ {command}; }} >\"$out\"",
                                    timeout=600)
        if result.exit_code != 0:
            raise SandboxError(f"recording the artefact failed: {result.output[-2000:]}")
        return await sandbox.read(out), await sandbox.read(f"{out}.sums")


async def _local_contents(sandbox: Sandbox, paths: list[str]) -> dict[str, bytes]:
    if not paths:
        return {}
    names = b"\0".join(p.encode(errors="surrogateescape") for p in paths) + b"\0"
    # a file the sandbox cannot read (mode 000) is left out, as one that vanished: the tests could not read it either
    packed, _ = await _captured(sandbox, "/bin/tar -cf - --no-recursion --hard-dereference --null -T \"$out.in\" "
                                         "2>/dev/null; true", names)
    contents = {}
    with tarfile.open(fileobj=io.BytesIO(packed)) as tar:
        for member in tar:
            if member.isfile() and (handle := tar.extractfile(member)) is not None:
                contents["/" + member.name] = handle.read()
    return contents


# --- the artefact: encoding, checking, applying ---------------------------------------------------------------


def recorded(changes: Changes) -> Changes:
    """What of `changes` the trace keeps: all of them, or only their size when their content is past `CONTENT_CAP`."""
    if changes.too_large is None and (size := sum(map(len, changes.contents.values()))) > CONTENT_CAP:
        return Changes(too_large=size)
    return changes


def encode(changes: Changes) -> dict[str, Any]:
    """The JSON-safe artefact (contents in base64)."""
    if changes.too_large is not None:
        return {"too_large": {"bytes": changes.too_large, "cap": CONTENT_CAP}}
    out = []
    for path, e in sorted(changes.entries.items()):
        item: dict[str, Any] = {"path": path, "type": e.kind}
        if e.kind == "symlink":
            item["target"] = e.digest
        else:
            item["mode"] = e.mode
        if e.kind == "file":
            item |= {"mtime": e.mtime, "content": base64.b64encode(changes.contents[path]).decode()}
        if e.owner is not None and e.kind != "symlink":
            item |= {"uid": e.owner[0], "gid": e.owner[1]}
        out.append(item)
    return {"changes": out, "deleted": list(changes.deleted),
            "ended": [{"pid": pid, "args": args} for pid, args in changes.ended]}


def decode(artefact: Any) -> Changes:
    """The changes an artefact records; `ValueError` naming what is wrong when it is not a Terminal-v0 artefact."""
    shape = ("a Terminal-v0 artefact is {'changes': [{path, type, ...}], 'deleted': [path], 'ended': [{pid, args}]} "
             "or {'too_large': {...}}")
    if not isinstance(artefact, dict):
        raise ValueError(f"{shape}; got {type(artefact).__name__}")
    if "too_large" in artefact:
        size = artefact["too_large"].get("bytes") if isinstance(artefact["too_large"], dict) else None
        if set(artefact) != {"too_large"} or not _integer(size):
            raise ValueError(f"{shape}; its too_large must be {{'bytes': n, 'cap': n}} and stand alone")
        return Changes(too_large=size)
    if set(artefact) != {"changes", "deleted", "ended"}:
        raise ValueError(f"{shape}; got the keys {sorted(artefact)}")
    changes = Changes()
    for i, item in enumerate(_listed(artefact, "changes")):
        where = f"changes[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"artefact {where} is not an object")
        path = _path(item.get("path"), f"{where}.path")
        if path in changes.entries:
            raise ValueError(f"artefact {where}.path {path!r} is listed twice")
        kind = item.get("type")
        fields = {"file": {"mode", "mtime", "content"}, "dir": {"mode"}, "symlink": {"target"}}.get(kind)
        if fields is None:
            raise ValueError(f"artefact {where}.type must be file, dir or symlink, got {kind!r}")
        owner = {"uid", "gid"} & set(item)
        if set(item) - {"path", "type", "uid", "gid"} != fields or owner not in (set(), {"uid", "gid"}) \
                or (owner and kind == "symlink"):
            raise ValueError(f"artefact {where}: a {kind} has path, type and {', '.join(sorted(fields))}"
                             f"{'' if kind == 'symlink' else ' (and uid with gid)'}; got {sorted(item)}")
        if owner and not (_integer(item["uid"]) and _integer(item["gid"])):
            raise ValueError(f"artefact {where}: uid and gid must be integers >= 0")
        if kind == "symlink":
            target = item["target"]
            if not isinstance(target, str) or not target or "\0" in target:
                raise ValueError(f"artefact {where}.target must be a non-empty string without NUL")
            changes.entries[path] = Entry("symlink", 0o777, target)
            continue
        mode = item["mode"]
        if not _integer(mode) or mode > 0o7777:
            raise ValueError(f"artefact {where}.mode must be an integer from 0 to 0o7777, got {mode!r}")
        owner_ids = (item["uid"], item["gid"]) if owner else None
        if kind == "dir":
            changes.entries[path] = Entry("dir", mode, owner=owner_ids)
            continue
        if not _integer(item["mtime"]):
            raise ValueError(f"artefact {where}.mtime must be an integer >= 0 (seconds), got {item['mtime']!r}")
        try:
            data = base64.b64decode(item["content"], validate=True) if isinstance(item["content"], str) else None
        except binascii.Error:
            data = None
        if data is None:
            raise ValueError(f"artefact {where}.content must be base64 text")
        changes.entries[path] = Entry("file", mode, hashlib.sha256(data).hexdigest(), item["mtime"], owner_ids)
        changes.contents[path] = data
    if (size := sum(map(len, changes.contents.values()))) > CONTENT_CAP:
        raise ValueError(f"artefact holds {size} bytes of file content, past the {CONTENT_CAP >> 20} MiB an artefact "
                         "may hold")
    changes.deleted = [_path(p, f"deleted[{i}]") for i, p in enumerate(_listed(artefact, "deleted"))]
    for i, item in enumerate(_listed(artefact, "ended")):
        if not (isinstance(item, dict) and set(item) == {"pid", "args"} and _integer(item["pid"])
                and isinstance(item["args"], list) and all(isinstance(a, str) for a in item["args"])):
            raise ValueError(f"artefact ended[{i}] must be {{'pid': n, 'args': [str, ...]}}, got {item!r}")
        changes.ended.append((item["pid"], item["args"]))
    return changes


def _listed(artefact: dict, key: str) -> list:
    if not isinstance(artefact[key], list):
        raise ValueError(f"artefact {key} must be a list, got {type(artefact[key]).__name__}")
    return artefact[key]


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _path(value: Any, where: str) -> str:
    """An absolute, normalised path inside the sandbox, without `..` or NUL (never `/` itself)."""
    if not (isinstance(value, str) and value.startswith("/") and value != "/" and "\0" not in value
            and posixpath.normpath(value) == value and ".." not in value.split("/")):
        raise ValueError(f"artefact {where} {value!r} is not an absolute, normalised path inside the sandbox "
                         "(no `..`, no NUL, not /)")
    return value


def _tar(changes: Changes, paths: Iterable[str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, e in sorted((p, changes.entries[p]) for p in paths):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.mode, info.mtime = e.mode, e.mtime if e.kind == "file" else int(time.time())
            info.uid, info.gid = e.owner or (0, 0)
            if e.kind == "dir":
                info.type = tarfile.DIRTYPE
            elif e.kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, e.digest
            else:
                info.size = len(changes.contents[path])
            tar.addfile(info, io.BytesIO(changes.contents[path]) if e.kind == "file" else None)
    return out.getvalue()


async def apply(sandbox: Sandbox, changes: Changes) -> None:
    """Write `changes` into the sandbox through its own shell: deleted paths removed, a path whose kind changed
    cleared, then one tar of the rest extracted at `/` with modes (and owners, where the shell is root).
    `ValueError` when the sandbox refuses (a path it cannot write is one the agent could not have written)."""
    def each(paths: list[str], test: str) -> str:  # remove what stands where an entry of another kind goes
        return f"for p in {' '.join(map(shlex.quote, paths))}; do if {test}; then /bin/rm -rf -- \"$p\"; fi; done"

    steps = ["cd /"]
    if changes.deleted:
        steps.append(f"/bin/rm -rf -- {' '.join(map(shlex.quote, changes.deleted))}")
    if files := [p for p, e in changes.entries.items() if e.kind != "dir"]:
        steps.append(each(files, '[ -d "$p" ] && [ ! -L "$p" ]'))
    if folders := [p for p, e in changes.entries.items() if e.kind == "dir"]:
        steps.append(each(folders, '[ -L "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }'))
    in_place = [p for p, e in changes.entries.items() if p in ENGINE_FILES and e.kind == "file"]
    async with _scratch(sandbox) as folder:
        await sandbox.write(f"{folder}/changes.tar", _tar(changes, [p for p in changes.entries if p not in in_place]))
        steps.append(f"/bin/tar -xpf {shlex.quote(folder)}/changes.tar -C / --numeric-owner 2>&1")
        for i, path in enumerate(in_place):
            await sandbox.write(f"{folder}/in-place.{i}", changes.contents[path])
            steps.append(f"/bin/cat {shlex.quote(folder)}/in-place.{i} > {shlex.quote(path)}")
        result = await sandbox.exec(" && ".join(steps), timeout=600)
    if result.exit_code != 0:
        said = "; ".join(line.strip() for line in result.output.splitlines() if line.strip())
        raise ValueError(f"the artefact cannot be applied in a fresh sandbox: {said[-1500:]}")

