"""The docker sandbox's base image, built offline: debootstrap from the machine's own Debian mirror.

No registry is needed: `debootstrap --variant=minbase` fetches a minimal Debian (plus python3, git, procps and
CA certificates) from the mirror this machine's apt already uses, and `docker import` turns the tree into an
image. It takes one to three minutes (the mirror sets the pace) once; the image then stays in the engine.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from polar.cache import cache_dir, locked
from polar.errors import SandboxError

BASE_IMAGE = "polar/base:bookworm"
PACKAGES = ("python3", "ca-certificates", "procps", "git")
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


def build_base_image(tag: str = BASE_IMAGE, suite: str = "bookworm") -> str:
    """Return `tag`, building it first if the engine lacks it (one build at a time on this machine)."""
    if image_exists(tag):
        return tag
    with locked(cache_dir("images") / "base.lock"):  # a concurrent build finishes first, then this one finds it
        if not image_exists(tag):
            _build(tag, suite)
    return tag


def _build(tag: str, suite: str) -> None:
    debootstrap = shutil.which("debootstrap") or shutil.which("debootstrap", path="/usr/sbin:/sbin")
    if debootstrap is None:
        raise SandboxError("building the docker sandbox's base image needs debootstrap: run `apt-get install "
                           "debootstrap` (or `bash scripts/docker.sh`), or pass an image in SandboxSpec")
    if os.geteuid() != 0:
        raise SandboxError(f"building the base image {tag} with debootstrap needs root; run "
                           f"`sudo python -c 'from polar.envs.sandbox.images import build_base_image as b; b()'` once")
    mirror = debian_mirror()
    if mirror is None:
        raise SandboxError(f"no Debian mirror with a `main` component found in {APT_SOURCES}/sources.list(.d); "
                           "configure apt with one, or pass an image in SandboxSpec")
    root = Path(tempfile.mkdtemp(prefix="polar-rootfs-", dir="/var/tmp"))
    try:
        step = subprocess.run(
            [debootstrap, "--variant=minbase", f"--include={','.join(PACKAGES)}", suite, str(root), mirror],
            capture_output=True, text=True,
        )
        if step.returncode != 0:
            raise SandboxError(f"debootstrap {suite} from {mirror} failed:\n{(step.stdout + step.stderr)[-3000:]}")
        for deb in (root / "var/cache/apt/archives").glob("*.deb"):
            deb.unlink()
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(
            [shutil.which("docker") or "docker", "import", "--change", "ENV LANG=C.UTF-8",
             "--change", 'CMD ["bash"]', "-", tag],
            stdin=tar.stdout, capture_output=True, text=True,
        )
        assert tar.stdout is not None
        tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise SandboxError(f"importing the base image {tag} failed: {imported.stderr.strip()[-2000:]}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
