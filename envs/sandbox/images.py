"""polar's own images, built offline: debootstrap from the machine's own Debian mirror.

No registry is needed: `debootstrap --variant=minbase` fetches a minimal Debian (plus the image's packages) from
the mirror this machine's apt already uses, and `docker import` turns the tree into an image. It takes one to three
minutes (the mirror sets the pace) once; the image then stays in the engine. Two images: `polar/base:bookworm`, the
docker sandbox's base (python3, git, procps, CA certificates), and `polar/python:bookworm`, the offline stand-in for
a task's `FROM python:*` (also pip, venv and curl, `python` naming python3, and no PEP 668 marker, so `pip install`
installs system-wide as it does in the official python images). Their apt sources name that same mirror, so an
`apt-get install` in a task's Dockerfile works wherever the machine's apt does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from polar.cache import cache_dir, locked
from polar.errors import SandboxError

BASE_IMAGE = "polar/base:bookworm"
PYTHON_IMAGE = "polar/python:bookworm"
PACKAGES = ("python3", "ca-certificates", "procps", "git")
IMAGES: dict[str, tuple[str, ...]] = {
    BASE_IMAGE: PACKAGES,
    PYTHON_IMAGE: (*PACKAGES, "python3-pip", "python3-venv", "python-is-python3", "curl"),
}
"""polar's images and the Debian packages each adds to a minimal bookworm."""
LOCAL_CAS = Path("/usr/local/share/ca-certificates")
"""The certificate authorities this machine trusts beyond Debian's (a proxy's): polar's images trust them too, so a
build's `pip install` or `curl` gets through wherever the machine's own do."""
REVISION_LABEL, REVISION = "polar.image-revision", "3"
"""How polar's images are made, labelled on them; one of an older revision is built again. Revision 3: the root
directory is 0755 (before, 0700: a task's non-root `USER` could not even start) and `LOCAL_CAS` are trusted."""
APT_SOURCES = Path("/etc/apt")


def debian_mirror(apt_dir: Path = APT_SOURCES) -> str | None:
    """The first Debian mirror with a `main` component in apt's sources (deb822 files, then sources.list);
    release suites only, so a security or updates archive is never picked."""
    stanzas: list[tuple[list[str], list[str], list[str], list[str]]] = []  # types, uris, suites, components
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        for block in re.split(r"\n\s*\n", path.read_text(errors="replace")):
            fields = dict(re.findall(r"^([A-Za-z-]+):[ \t]*(.*)$", block, re.M))
            if fields.get("Enabled", "yes").lower() != "no":
                stanzas.append(tuple(fields.get(k, "").split() for k in ("Types", "URIs", "Suites", "Components")))
    lists = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in filter(Path.is_file, lists):
        for line in path.read_text(errors="replace").splitlines():
            words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(words) >= 4:
                stanzas.append(([words[0]], [words[1]], [words[2]], words[3:]))
    for types, uris, suites, components in stanzas:
        if "deb" in types and "main" in components and any("-" not in s and "/" not in s for s in suites) and uris:
            return uris[0]
    return None


def image_exists(tag: str) -> bool:
    docker = shutil.which("docker") or "docker"
    return subprocess.run([docker, "image", "inspect", tag], capture_output=True).returncode == 0


def _revision(tag: str) -> str | None:
    """The revision of polar's image `tag` in the engine ("1" for one made before revisions), None if it is not."""
    found = subprocess.run([shutil.which("docker") or "docker", "image", "inspect", "--format",
                            "{{json .Config.Labels}}", tag], capture_output=True, text=True)
    if found.returncode != 0:
        return None
    return (json.loads(found.stdout or "null") or {}).get(REVISION_LABEL, "1")


def _import(source: list[str], tag: str) -> None:
    """`docker import` the tar that `source` writes to its stdout as `tag`, with polar's image settings."""
    docker = shutil.which("docker") or "docker"
    tar = subprocess.Popen(source, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    imported = subprocess.run(
        [docker, "import", "--change", "ENV LANG=C.UTF-8", "--change", f"LABEL {REVISION_LABEL}={REVISION}",
         "--change", 'CMD ["bash"]', "-", tag],
        stdin=tar.stdout, capture_output=True, text=True,
    )
    assert tar.stdout is not None and tar.stderr is not None
    tar.stdout.close()
    said = tar.stderr.read().decode(errors="replace")
    if tar.wait() != 0 or imported.returncode != 0:
        raise SandboxError(f"importing the image {tag} failed: {(said + imported.stderr).strip()[-2000:]}")


def build_base_image(tag: str = BASE_IMAGE, suite: str = "bookworm") -> str:
    """Return `tag`, one of polar's `IMAGES`, building it first if the engine lacks it (one build at a time on this
    machine)."""
    if tag not in IMAGES:
        raise SandboxError(f"{tag} is not one of polar's images ({', '.join(IMAGES)})")
    if _revision(tag) == REVISION:
        return tag
    with locked(cache_dir("images") / "base.lock"):  # a concurrent build finishes first, then this one finds it
        if _revision(tag) != REVISION:
            _build(tag, suite, IMAGES[tag])
    return tag


def _build(tag: str, suite: str, packages: tuple[str, ...]) -> None:
    root = Path(tempfile.mkdtemp(prefix="polar-rootfs-", dir="/var/tmp"))
    try:
        bootstrap(root, suite, packages, f"the image {tag}")
        _import(["tar", "-C", str(root), "-c", "."], tag)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def bootstrap(root: Path, suite: str, packages: tuple[str, ...], what: str) -> None:
    """Fill the empty folder `root` with a minimal Debian `suite` plus `packages` from this machine's mirror (what
    polar's images and the harnesses' Debian 13 root are made of), trusting `LOCAL_CAS`; `what` names the result in
    errors."""
    debootstrap = shutil.which("debootstrap") or shutil.which("debootstrap", path="/usr/sbin:/sbin")
    if debootstrap is None:
        raise SandboxError(f"building {what} needs debootstrap: run `apt-get install debootstrap` (or "
                           "`bash scripts/docker.sh`), or pass an image in SandboxSpec")
    if os.geteuid() != 0:
        raise SandboxError(f"building {what} with debootstrap needs root; run "
                           f"`sudo python -c 'from polar.envs.sandbox.images import build_base_image as b; b()'` once")
    mirror = debian_mirror()
    if mirror is None:
        raise SandboxError(f"no Debian mirror with a `main` component found in {APT_SOURCES}/sources.list(.d); "
                           "configure apt with one, or pass an image in SandboxSpec")
    step = subprocess.run(
        [debootstrap, "--variant=minbase", f"--include={','.join(packages)}", suite, str(root), mirror],
        capture_output=True, text=True,
    )
    if step.returncode != 0:
        raise SandboxError(f"debootstrap {suite} from {mirror} failed:\n{(step.stdout + step.stderr)[-3000:]}")
    for deb in (root / "var/cache/apt/archives").glob("*.deb"):
        deb.unlink()
    for marker in (root / "usr/lib").glob("python3*/EXTERNALLY-MANAGED"):
        marker.unlink()
    root.chmod(0o755)  # mkdtemp made it 0700: the image's / would shut out every user but root
    if cas := sorted(LOCAL_CAS.glob("*.crt")):
        for ca in cas:
            shutil.copy(ca, root / "usr/local/share/ca-certificates" / ca.name)
        trusted = subprocess.run(["chroot", str(root), "update-ca-certificates"], capture_output=True, text=True)
        if trusted.returncode != 0:
            raise SandboxError(f"trusting {LOCAL_CAS} in {what} failed: {trusted.stderr.strip()[-2000:]}")
