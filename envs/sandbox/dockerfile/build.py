"""A sandbox image built from a task's Dockerfile, offline, cached by content.

polar's Docker engine reaches no registry, so a base image it lacks cannot be pulled. Each `FROM` whose image
is not in the engine (and is not an earlier stage) is rewritten to polar's offline base, `polar/base:bookworm`
(Debian with python3, git, procps and CA certificates, built by `sandbox/images.py`), which carries what most terminal
tasks need: bash, coreutils, python3, git. A base the engine has (loaded by the user, or pulled on a machine
with a registry) is used unchanged, so a Terminal-Bench image builds as its authors wrote it wherever it can.
A task that relies on something only its own base has fails visibly: at the build, or in its tests.

The image is tagged with a hash of what it is built from (the Dockerfile after rewriting, every file of the
build context with its mode, and the ids of the base images), so an unchanged task is built once per engine
and a changed one is built again. The build uses the engine's default network; the engine that
`scripts/docker.sh` starts has none, so a Dockerfile that downloads packages builds only on an engine with one.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
from pathlib import Path
from typing import Any

from polar.cache import cache_dir, locked
from polar.dockerfile import parse, stages
from polar.envs.sandbox.images import BASE_IMAGE, build_base_image
from polar.errors import SandboxError, TaskFormatError

_KNOWN: dict[str, tuple[Any, str]] = {}
"""Per Dockerfile: what its folder looked like (names, sizes, times) when last hashed, and the image's tag."""
_FROM = re.compile(r"^(\s*FROM\s+(?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE | re.MULTILINE)


def _has_image(client: Any, name: str) -> bool:
    import docker

    try:
        client.images.get(name)
    except docker.errors.ImageNotFound:
        return False
    return True


def resolve_bases(client: Any, text: str, where: str = "Dockerfile") -> tuple[str, dict[str, str]]:
    """The Dockerfile with every base the engine lacks replaced by polar's base image (built if need be), and
    {base as written: image used} for each external base."""
    try:
        names = {s.name.lower() for s in stages(parse(text, where), where) if s.name}
    except TaskFormatError as e:
        raise SandboxError(str(e)) from None
    used: dict[str, str] = {}

    def one(match: re.Match) -> str:
        base = match.group(2)
        if base.lower() in names or base == "scratch" or "$" in base:
            return match.group(0)
        if base not in used:
            if base == BASE_IMAGE or not _has_image(client, base):
                used[base] = build_base_image()
            else:
                used[base] = base
        return match.group(1) + used[base] + match.group(3)

    return _FROM.sub(one, text), used


def _context_tar(context: Path, dockerfile: Path, text: str) -> bytes:
    """The build context as a reproducible tar (sorted, no times or owners), with the rewritten Dockerfile."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(p for p in context.rglob("*") if p != dockerfile):
            info = tar.gettarinfo(str(path), arcname=path.relative_to(context).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
        data = text.encode()
        info = tarfile.TarInfo(dockerfile.relative_to(context).as_posix())
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def image_for_dockerfile(client: Any, dockerfile: str, image: str | None = None) -> str:
    """The image to run a sandbox on: `image` when the engine has it, else the Dockerfile built (once per
    content) on bases the engine has. Build errors raise `SandboxError` with the builder's last lines."""
    if image is not None and _has_image(client, image):
        return image
    path = Path(dockerfile)
    try:
        text = path.read_text()
    except OSError as e:
        raise SandboxError(f"cannot read the Dockerfile {path}: {e}") from None
    stamp = (text, tuple((str(p), (st := p.lstat()).st_size, st.st_mtime_ns, st.st_mode)
                         for p in sorted(path.parent.rglob("*"))))
    if (known := _KNOWN.get(str(path))) and known[0] == stamp and _has_image(client, known[1]):
        return known[1]  # unchanged since this process last hashed it: skip reading the whole context again
    rewritten, bases = resolve_bases(client, text, str(path))
    context = _context_tar(path.parent, path, rewritten)
    digest = hashlib.sha256(context)
    for base in sorted(set(bases.values())):
        digest.update(client.images.get(base).id.encode())
    name = re.sub(r"[^a-z0-9._-]+", "-", path.parent.parent.name.lower()).strip("._-") or "task"
    tag = f"polar-task/{name}:{digest.hexdigest()[:20]}"
    if _has_image(client, tag):
        _KNOWN[str(path)] = (stamp, tag)
        return tag
    with locked(cache_dir("images") / f"{tag.replace('/', '_')}.lock"):  # a concurrent build of it finishes first
        if not _has_image(client, tag):
            _build(client, context, path.relative_to(path.parent).as_posix(), tag, str(path))
    _KNOWN[str(path)] = (stamp, tag)
    return tag


def _build(client: Any, context: bytes, dockerfile: str, tag: str, where: str) -> None:
    import docker

    log: list[str] = []
    try:
        for chunk in client.api.build(fileobj=io.BytesIO(context), custom_context=True, dockerfile=dockerfile,
                                      tag=tag, rm=True, forcerm=True, decode=True):
            if "stream" in chunk:
                log.append(chunk["stream"])
            if "error" in chunk:
                tail = "".join(log)[-3000:]
                raise SandboxError(f"building the image of {where} failed: {chunk['error'].strip()}\n{tail}")
    except docker.errors.APIError as e:
        raise SandboxError(f"building the image of {where} failed: {e}") from e
