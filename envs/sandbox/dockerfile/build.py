"""A sandbox image built from a task's Dockerfile, the way Harbor builds it, cached by content.

The build runs with the machine's network (`NETWORK`): a `RUN pip install` or `apt-get install` reaches whatever
registry this machine reaches, while the sandbox's own container runs with none. A base image the engine lacks is
pulled; where no registry answers, a base polar has an offline stand-in for (`SUBSTITUTES`: `python:*` becomes
`polar/python:bookworm`, `debian:*` and `ubuntu:*` become `polar/base:bookworm`, both built by `sandbox/images.py`, and
so do Terminal-Bench 1's bases, with the WORKDIR they set) is built on that, with a warning once per base; any other
base is an error that names it. The bases used are labelled
on the image (`BASES_LABEL`), so the docker sandbox can say on what the task's environment was built.

The image is tagged with a hash of what it is built from (the Dockerfile after rewriting, every file of the build
context with its mode, and the ids of the base images), so an unchanged task is built once per engine and a changed
one is built again. A build that fails is recorded under `cache_dir("images")/failed` with its log and reason, and
that record is the answer until the inputs change (a new hash) or the record is removed, so a broken task costs one
build, not one per episode.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import time
import warnings
from functools import cache
from pathlib import Path
from typing import Any

from polar.cache import cache_dir, locked
from polar.dockerfile import BASE_WORKDIRS, parse, repository, stages
from polar.envs.sandbox.images import BASE_IMAGE, IMAGES, PYTHON_IMAGE, build_base_image
from polar.errors import SandboxError, TaskFormatError

NETWORK = "host"
"""The network a build's RUN steps get: the machine's own (the engine's bridge may be off, as `scripts/docker.sh`
starts it), so they reach what the machine reaches. The sandbox's container never gets it."""
PROXY_ARGS = ("HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "NO_PROXY", "ALL_PROXY",
              "http_proxy", "https_proxy", "ftp_proxy", "no_proxy", "all_proxy")
"""The machine's proxy settings, passed to a build as the builder's predefined args (kept out of the image)."""
SUBSTITUTES = {"python": PYTHON_IMAGE, "debian": BASE_IMAGE, "ubuntu": BASE_IMAGE,
               "laude-institute/t-bench/ubuntu-24-04": BASE_IMAGE, "laude-institute/t-bench/python-3-13": PYTHON_IMAGE}
"""The one mapping from a base that can be neither found nor pulled (by its repository, any tag) to the polar image
built in its place. Nothing else is ever substituted."""
BASES_LABEL = "polar.bases"
"""The image label holding {base as written: image used} as JSON."""

_KNOWN: dict[str, tuple[Any, str]] = {}
"""Per Dockerfile: what its folder looked like (names, sizes, times) when last hashed, and the image's tag."""
_UNPULLABLE: dict[str, str] = {}
"""Bases a pull already failed for in this process, with why: not asked again."""
_FROM = re.compile(r"^(\s*FROM\s+(?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE | re.MULTILINE)


def _has_image(client: Any, name: str) -> bool:
    import docker

    try:
        client.images.get(name)
    except docker.errors.ImageNotFound:
        return False
    return True


def _pull(client: Any, base: str) -> str | None:
    """Pull `base`; None when it came, else why not (remembered for this process). The client's timeout bounds the
    wait for an engine that hears nothing from the registry."""
    import docker
    import requests

    if base in _UNPULLABLE:
        return _UNPULLABLE[base]
    try:
        for event in client.api.pull(base, stream=True, decode=True):
            if "error" in event:
                raise docker.errors.APIError(event["error"])
    except (docker.errors.DockerException, requests.RequestException) as e:
        _UNPULLABLE[base] = (str(e).strip().splitlines() or [type(e).__name__])[-1][:500]
        return _UNPULLABLE[base]
    return None if _has_image(client, base) else _UNPULLABLE.setdefault(base, "the pull ended without the image")


@cache
def _warn_substituted(base: str, used: str, why: str) -> None:
    warnings.warn(f"the Docker engine lacks the base image {base} and could not pull it ({why}); building on polar's "
                  f"offline stand-in {used} instead (recorded in the episode's verifier log and the run's summary)",
                  stacklevel=4)


def _base_for(client: Any, base: str, where: str) -> str:
    """The image a FROM of `base` builds on: polar's own (built if need be), the engine's, a pulled one, or the
    substitute `SUBSTITUTES` maps it to."""
    if base in IMAGES:
        return build_base_image(base)
    if _has_image(client, base):
        return base
    why = _pull(client, base)
    if why is None:
        return base
    substitute = SUBSTITUTES.get(repository(base))
    if substitute is None:
        offline = ", ".join(f"{r}:*" for r in SUBSTITUTES)
        raise SandboxError(f"{where}: the base image {base} is not in the Docker engine and could not be pulled "
                           f"({why}). Load it into the engine (`docker load -i image.tar`, or `docker pull {base}` "
                           f"where a registry answers), or start FROM a base polar builds offline ({offline})")
    _warn_substituted(base, substitute, why)
    return build_base_image(substitute)


def resolve_bases(client: Any, text: str, where: str = "Dockerfile") -> tuple[str, dict[str, str]]:
    """The Dockerfile with every external base replaced by the image it builds on (`_base_for`), and
    {base as written: image used} for each."""
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
            used[base] = _base_for(client, base, where)
        workdir = BASE_WORKDIRS.get(repository(base)) if used[base] != base else None
        return match.group(1) + used[base] + match.group(3) + (f"\nWORKDIR {workdir}" if workdir else "")

    return _FROM.sub(one, text), used


def image_bases(attrs: dict[str, Any]) -> dict[str, str]:
    """{base as written: image used} that polar labelled an image with (its `docker inspect` attributes); empty for
    an image polar did not build from a Dockerfile."""
    labels = (attrs.get("Config") or {}).get("Labels") or {}
    try:
        found = json.loads(labels.get(BASES_LABEL, "{}"))
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def describe_bases(bases: dict[str, str]) -> str:
    """One line per base for a log, `base image <as written> -> <used>`, which `bases_in_log` reads back."""
    return "".join(f"base image {written} -> {used}\n" for written, used in sorted(bases.items()))


def bases_in_log(log: str) -> dict[str, str]:
    """The bases a log written with `describe_bases` names."""
    return dict(re.findall(r"^base image (\S+) -> (\S+)$", log, re.MULTILINE))


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


def image_for_dockerfile(client: Any, dockerfile: str, image: str | None = None, steps: tuple[str, ...] = ()) -> str:
    """The image to run a sandbox on: `image` when the engine has it, else the Dockerfile, with `steps` appended,
    built (once per content) on bases the engine has. Build errors raise `SandboxError` with the builder's last
    lines."""
    if image is not None and _has_image(client, image):
        return image
    path = Path(dockerfile)
    try:
        text = path.read_text() + "".join(f"\n{step}" for step in steps)
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
    record = failure_record(tag)
    with locked(cache_dir("images") / f"{tag.replace('/', '_')}.lock"):  # a concurrent build of it finishes first
        if not _has_image(client, tag):
            _raise_recorded(record, str(path))
            _build(client, context, path.relative_to(path.parent).as_posix(), tag, str(path), bases, record)
    _KNOWN[str(path)] = (stamp, tag)
    return tag


def failure_record(tag: str) -> Path:
    """Where a failed build of `tag` is recorded (JSON: reason, log file, time); its log lies beside it."""
    return cache_dir("images") / "failed" / f"{tag.replace('/', '_').replace(':', '_')}.json"


def _raise_recorded(record: Path, where: str) -> None:
    """Raise the recorded failure of this very build, if there is one."""
    try:
        failed = json.loads(record.read_text())
    except (OSError, json.JSONDecodeError):
        return
    raise SandboxError(f"building the image of {where} failed (recorded {failed.get('at', '?')}, not retried while "
                       f"the task's environment is unchanged; remove {record} to build it again): "
                       f"{failed.get('reason', '?')}; the build log is {failed.get('log', '?')}")


def _build(client: Any, context: bytes, dockerfile: str, tag: str, where: str, bases: dict[str, str],
           record: Path) -> None:
    """Build `tag` with the machine's network; on failure record it (`failure_record`) and raise, naming the log."""
    import docker

    log: list[str] = []
    reason = None
    try:
        for chunk in client.api.build(fileobj=io.BytesIO(context), custom_context=True, dockerfile=dockerfile,
                                      tag=tag, rm=True, forcerm=True, decode=True, network_mode=NETWORK,
                                      labels={BASES_LABEL: json.dumps(bases, sort_keys=True)},
                                      buildargs={k: os.environ[k] for k in PROXY_ARGS if k in os.environ}):
            if "stream" in chunk:
                log.append(chunk["stream"])
            if "error" in chunk:
                reason = chunk["error"].strip()
                break
    except docker.errors.APIError as e:
        reason = str(e)
    if reason is None:
        return
    record.parent.mkdir(parents=True, exist_ok=True)
    log_path = record.with_suffix(".log")
    log_path.write_text("".join(log) + f"\n{reason}\n")
    record.write_text(json.dumps({"tag": tag, "dockerfile": where, "reason": reason, "log": str(log_path),
                                  "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}, indent=1) + "\n")
    tail = "".join(log)[-3000:]
    raise SandboxError(f"building the image of {where} failed: {reason} (the whole log is {log_path}; this build is "
                       f"not retried until the task's environment changes)\n{tail}")
