"""Where an SWE-bench instance runs: the repository's environment, for the local and the docker sandbox.

A repository environment is built once per repository and version, offline from the sandboxes' point of view:

- `site/`: the test dependencies (pytest and the project's own), pip-installed from PyPI with `--target`
  into a plain folder on the host cache (`polar.cache`: `$POLAR_CACHE/swe`, as root `/var/cache/polar/swe`).
  A `--target` folder holds no absolute paths, so the same folder works read-only at `/opt/polar-env/site` everywhere:
  bind-mounted by bubblewrap (its host is read-only, and a venv, whose scripts and `pyvenv.cfg` name the
  host's paths, would not survive the move), and copied into the docker image
  `polar/swe-env:<repo>-<version>-<hash>` (the debootstrap base plus that folder, built and cached in the
  engine by `polar images build`).
- the source: the project's sdist, unpacked on the host.

Each instance's repository is made on the host: the source, less the instance's `test_patch` and gold `patch`
(applied in reverse), committed as one root commit with a fixed author and date, so its hash is the
instance's `base_commit` (checked). The sandbox gets that repository as a tarball written into `/testbed`:
the fixed source never enters the agent's sandbox, which is why it is not baked into the image, where the
agent could read it. Instances that name an official `swebench/sweb.eval.x86_64.*` image run in that image
(repository at `/testbed`) when the engine already has it; polar never pulls one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from polar.cache import cache_dir, locked
from polar.errors import SandboxError, TaskFormatError
from polar.protocols import Mount, SandboxSpec
from polar.tasks.swe import BUNDLED, SweTask

WORKDIR = "/testbed"
PYTEST = "python3 -m pytest"
"""How every environment's `test_command` begins: polar's grader runs pytest its own way with the same arguments."""
SITE = "/opt/polar-env/site"
SANDBOX_PYTHON = "3.11"
"""The python3 of the docker base image (Debian bookworm) and of the hosts the local sandbox runs on."""
COMMIT_ENV = {"GIT_AUTHOR_NAME": "polar", "GIT_AUTHOR_EMAIL": "polar@localhost", "GIT_COMMITTER_NAME": "polar",
              "GIT_COMMITTER_EMAIL": "polar@localhost", "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
              "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000"}
GIT = ["git", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false",
       "-c", "core.autocrlf=false", "-c", "user.useConfigOnly=false"]
ENVIRONMENTS_FILE = BUNDLED / "environments.json"


def cache_root() -> Path:
    """Where environments and base repositories are kept (`polar.cache`: outside /root when polar runs as root,
    where the local sandbox's own uid can read it)."""
    return cache_dir("swe")


def _locked(name: str) -> AbstractContextManager[None]:
    """One builder of a cache entry at a time on this machine (parallel admission shares the cache)."""
    return locked(cache_root() / f".{name}.lock")


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, what: str = "") -> str:
    step = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if step.returncode != 0:
        raise SandboxError(f"{what or argv[0]} failed (exit {step.returncode}):\n{(step.stdout + step.stderr)[-3000:]}")
    return step.stdout


def commit_tree(directory: Path, message: str) -> str:
    """Make `directory` a git repository with one root commit of everything in it; returns the commit hash.
    The author, committer and dates are fixed, so the same tree always gives the same hash."""
    shutil.rmtree(directory / ".git", ignore_errors=True)
    _run([*GIT, "init", "-q"], directory, what="git init")
    _run([*GIT, "add", "-A", "--force"], directory, what="git add")
    _run([*GIT, "commit", "-q", "--no-verify", "-m", message], directory, COMMIT_ENV, what="git commit")
    return _run([*GIT, "rev-parse", "HEAD"], directory).strip()


def _readable(tree: Path) -> None:
    """World-readable (and the folders searchable), for sandboxes that run as another uid."""
    for path in [tree, *tree.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | (0o555 if path.is_dir() else 0o444))


@dataclass(frozen=True)
class RepoEnvironment:
    """A repository at a version: its source (an sdist), the packages its tests need, the command that runs them."""

    repo: str
    version: str
    sdist: Path
    sha256: str
    requirements: tuple[str, ...]
    test_command: str
    licence: str = ""

    @property
    def key(self) -> str:
        spec = json.dumps([self.sha256, self.requirements, SANDBOX_PYTHON])
        slug = self.repo.replace("/", "__").lower()
        return f"{slug}-{self.version}-{hashlib.sha256(spec.encode()).hexdigest()[:10]}"

    @property
    def image(self) -> str:
        return f"polar/swe-env:{self.key}"

    @property
    def root(self) -> Path:
        return cache_root() / "envs" / self.key

    def site_dir(self) -> Path:
        """The test dependencies, pip-installed once into the host cache."""
        site = self.root / "site"
        if site.is_dir():
            return site
        with _locked(self.key):
            if not site.is_dir():
                self._install(site)
        return site

    def _install(self, site: Path) -> None:
        staging = Path(tempfile.mkdtemp(prefix="site-", dir=self.root.parent if self.root.parent.is_dir() else None))
        try:
            _run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
                  "--target", str(staging), "--python-version", SANDBOX_PYTHON, "--only-binary", ":all:",
                  *self.requirements], what=f"pip install of {self.repo} {self.version}'s test dependencies")
            for script in (staging / "bin").glob("*") if (staging / "bin").is_dir() else ():
                text = script.read_bytes()
                if text.startswith(b"#!"):  # pip wrote the host interpreter's path; the sandbox has its own
                    script.write_bytes(b"#!/usr/bin/env python3" + text[text.index(b"\n"):])
            self.root.mkdir(parents=True, exist_ok=True)
            _readable(staging)
            staging.rename(site)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def source_dir(self) -> Path:
        """The sdist, unpacked once (its top folder stripped)."""
        source = self.root / "source"
        if source.is_dir():
            return source
        if not self.sdist.is_file():
            raise TaskFormatError(f"{self.repo} {self.version}: the sdist {self.sdist} is missing")
        if hashlib.sha256(self.sdist.read_bytes()).hexdigest() != self.sha256:
            raise TaskFormatError(f"{self.repo} {self.version}: {self.sdist} does not match its recorded sha256")
        with _locked(self.key):
            if not source.is_dir():
                self.root.mkdir(parents=True, exist_ok=True)
                staging = Path(tempfile.mkdtemp(prefix="source-", dir=self.root))
                with tarfile.open(self.sdist) as tar:
                    tar.extractall(staging, filter="data")
                (top,) = staging.iterdir()
                _readable(top)
                top.rename(source)
                staging.rmdir()
        return source

    def base_archive(self, task: SweTask) -> bytes:
        """The instance's repository at `base_commit`, .git included, as a gzipped tarball (cached)."""
        path = cache_root() / "bases" / f"{task.instance_id}-{task.base_commit[:12]}.tar.gz"
        if path.is_file():
            return path.read_bytes()
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="polar-base-") as tmp:
            repo = Path(tmp) / "repo"
            shutil.copytree(self.source_dir(), repo, symlinks=True)
            for name in ("test_patch", "patch"):
                diff = getattr(task, name)
                if not diff:
                    continue
                (Path(tmp) / f"{name}.diff").write_text(diff)
                step = subprocess.run([*GIT, "apply", "-R", str(Path(tmp) / f"{name}.diff")], cwd=repo,
                                      capture_output=True, text=True)
                if step.returncode != 0:
                    raise TaskFormatError(f"instance {task.instance_id!r}: field {name!r} does not apply (in "
                                          f"reverse) to {self.repo} {self.version}: {step.stderr.strip()[:500]}")
            commit = commit_tree(repo, f"{self.repo} {self.version}")
            if commit != task.base_commit:
                raise TaskFormatError(f"instance {task.instance_id!r}: the source of {self.repo} {self.version} less "
                                      f"its patches commits as {commit}, not base_commit {task.base_commit}")
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
                tar.add(repo, arcname=".")
            staged = path.with_suffix(f".{os.getpid()}.tmp")
            staged.write_bytes(buffer.getvalue())
            staged.rename(path)
        return path.read_bytes()

    def build_image(self) -> str:
        """The docker image (base image + this environment's site folder), built once and kept in the engine."""
        from polar.envs.sandbox.images import build_base_image, image_exists

        if image_exists(self.image):
            return self.image
        base = build_base_image()
        site = self.site_dir()
        with _locked(f"image-{self.key}"), tempfile.TemporaryDirectory(prefix="polar-image-") as context:
            if image_exists(self.image):
                return self.image
            shutil.copytree(site, Path(context) / "site", symlinks=True)
            (Path(context) / "Dockerfile").write_text(
                f"FROM {base}\nCOPY site {SITE}\nENV PYTHONPATH={SITE}\nWORKDIR {WORKDIR}\n"
                f'LABEL polar.swe.repo="{self.repo}" polar.swe.version="{self.version}"\n')
            _run([shutil.which("docker") or "docker", "build", "-q", "--network", "none", "-t", self.image, context],
                 env={"DOCKER_BUILDKIT": "0"}, what=f"docker build of {self.image}")
        return self.image

    def sandbox_spec(self, backend: str | None) -> SandboxSpec:
        """docker: the environment's image. Otherwise the site folder mounted read-only (on docker, over the base
        image), which is what the local sandbox needs and what works on any backend."""
        env = {"PYTHONPATH": SITE}
        if backend == "docker":
            return SandboxSpec(image=self.build_image(), workdir=WORKDIR, env=env)
        return SandboxSpec(workdir=WORKDIR, env=env, mounts=(Mount(str(self.site_dir()), SITE),))


def load_environments(path: Path = ENVIRONMENTS_FILE) -> dict[tuple[str, str], RepoEnvironment]:
    """The repository environments polar knows how to build, by (repo, version)."""
    if not path.is_file():
        return {}
    found = {}
    for entry in json.loads(path.read_text()):
        env = RepoEnvironment(repo=entry["repo"], version=entry["version"], sdist=path.parent / entry["sdist"],
                              sha256=entry["sha256"], requirements=tuple(entry["requirements"]),
                              test_command=entry["test_command"], licence=entry.get("licence", ""))
        if not env.test_command.startswith(PYTEST + " "):
            raise TaskFormatError(f"{path}: {env.repo} {env.version}'s test_command must run `{PYTEST} ...` (the "
                                  f"grader runs pytest with its own verdict plugin), got {env.test_command!r}")
        found[(env.repo, env.version)] = env
    return found


def official_image(task: SweTask) -> str | None:
    """The official swebench evaluation image for the instance, if the Docker engine already has it."""
    from polar.envs.sandbox.images import image_exists

    if shutil.which("docker") is None:
        return None
    key = f"sweb.eval.x86_64.{task.instance_id}:latest".lower().replace("__", "_1776_")
    for image in dict.fromkeys(filter(None, (task.image, f"swebench/{key}"))):
        if image_exists(image):
            return image
    return None
