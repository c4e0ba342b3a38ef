"""Where an SWE-bench instance runs: the repository's environment, for the local and the docker sandbox.

A repository environment is built once per repository and version, offline from the sandboxes' point of view:

- `site/`: the test dependencies (pytest and the project's own), pip-installed from PyPI with `--target`
  into a plain folder on the host cache (`polar.cache`: `$POLAR_CACHE/swe`, as root `/var/cache/polar/swe`).
  A `--target` folder holds no absolute paths, so the same folder works read-only at `/opt/polar-env/site` everywhere:
  bind-mounted by bubblewrap (its host is read-only, and a venv, whose scripts and `pyvenv.cfg` name the
  host's paths, would not survive the move), and copied into the docker image
  `polar/swe-env:<repo>-<version>-<hash>` (the debootstrap base plus that folder, built and cached in the
  engine by `polar images build`).
- the source: the project's sdist, unpacked on the host; or the repository itself, from a local git mirror or
  bundle (`$POLAR_SWE_REPOS/<owner>__<name>.git` or `.bundle`, which `--repos DIR` sets).

Each instance's repository is made on the host. From an sdist: the source, less the instance's `test_patch` and
gold `patch` (applied in reverse; not when the sdist is the base release itself, as in a suite made from real
history), committed as one root commit with a fixed author and date, so its hash is the instance's `base_commit`
(checked). From a mirror: a clone checked out at `base_commit`, a real commit of the repository, with every ref
and object that is not an ancestor of it removed (a later commit holds the fix). The sandbox gets that repository
as a tarball written into `/testbed`: the fixed source never enters the agent's sandbox, which is why it is not
baked into the image, where the agent could read it. Instances that name an official
`swebench/sweb.eval.x86_64.*` image run in that image (repository at `/testbed`) when the engine has it, or after
a pull from `$POLAR_IMAGE_REGISTRY` when that is set.
"""

from __future__ import annotations

import argparse
import configparser
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polar.cache import cache_dir, locked
from polar.envs.sandbox.site import install_site, readable
from polar.errors import SandboxError, TaskFormatError
from polar.protocols import Mount, SandboxSpec
from polar.tasks.swe import BUNDLED, SweTask

WORKDIR = "/testbed"
PYTEST = "python3 -m pytest"
"""How every environment's `test_command` begins: polar's grader runs pytest its own way with the same arguments."""
TEST_FILES = "{test_files}"
"""In a `test_command`, where the test files of the row's `test_patch` go (as SWE-bench's harness appends them); a
command without it names its own targets."""
SITE = "/opt/polar-env/site"
SANDBOX_PYTHON = "3.11"
"""The python3 of the docker base image (Debian bookworm) and of the hosts the local sandbox runs on."""
COMMIT_ENV = {"GIT_AUTHOR_NAME": "polar", "GIT_AUTHOR_EMAIL": "polar@localhost", "GIT_COMMITTER_NAME": "polar",
              "GIT_COMMITTER_EMAIL": "polar@localhost", "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
              "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000"}
GIT = ["git", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false",
       "-c", "core.autocrlf=false", "-c", "user.useConfigOnly=false"]
ENVIRONMENTS_FILES = (BUNDLED / "environments.json", BUNDLED / "real-mini-environments.json")
"""The bundled environments: swe-mini's (written by `build_suite.py`) and swe-real-mini's (`build_real.py`)."""
REPOS_VARIABLE = "POLAR_SWE_REPOS"
"""A folder of git mirrors or bundles (`<owner>__<name>.git`, `<owner>__<name>.bundle`) that SWE-v0 builds an
instance's repository from when it has no image and no bundled environment; `--repos DIR` sets it."""


def cache_root() -> Path:
    """Where environments and base repositories are kept (`polar.cache`: outside /root when polar runs as root,
    where the local sandbox's own uid can read it)."""
    return cache_dir("swe")


def _locked(name: str) -> AbstractContextManager[None]:
    """One builder of a cache entry at a time on this machine (parallel admission shares the cache)."""
    return locked(cache_root() / f".{name}.lock")


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None, what: str = "",
         stdin: str | None = None) -> str:
    step = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, input=stdin,
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


@dataclass(frozen=True)
class RepoEnvironment:
    """A repository at a version: its source (an sdist, or a git mirror), the packages its tests need, the command
    that runs them."""

    repo: str
    version: str
    requirements: tuple[str, ...]
    test_command: str
    sdist: Path | None = None
    sha256: str = ""
    licence: str = ""
    sdist_is_base: bool = False
    """The sdist is the instances' base release as published (a suite made from real history): nothing is reversed."""
    mirror: Path | None = None
    """A git mirror or bundle of the repository; instances are checked out from it at their `base_commit`."""
    origin: str = ""
    """What said what the tests need: the row, an environments.json, or SWE-bench's spec table."""
    python_asked: str | None = None
    """The Python version that origin names (SWE-bench's table does); None: it names none."""

    def describe(self) -> str:
        """One line for the admission report and the grade log: where the environment came from, and the Python
        it asked for beside the one it runs on, so a row graded on another Python says so."""
        python = (f"Python {SANDBOX_PYTHON}" if self.python_asked in (None, SANDBOX_PYTHON) else
                  f"Python {self.python_asked} asked, {SANDBOX_PYTHON} used (polar's sandboxes have only "
                  f"{SANDBOX_PYTHON} yet)")
        return f"environment of {self.repo} {self.version} from {self.origin or 'polar'}; {python}"

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
        install_site(self.requirements, SANDBOX_PYTHON, site, f"{self.repo} {self.version}'s test dependencies")

    def pytest_plugins(self) -> tuple[str, ...]:
        """The modules of the pytest plugins the test dependencies installed (their `pytest11` entry points). polar
        runs pytest with plugin autoload off, so that nothing the repository declares loads; these load by name
        instead (`PYTEST_PLUGINS`), so a repository whose addopts ask for `--cov` finds pytest-cov."""
        plugins = []
        for entry_points in sorted(self.site_dir().glob("*.dist-info/entry_points.txt")):
            parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
            parser.optionxform = str  # type: ignore[assignment,method-assign]
            try:
                parser.read_string(entry_points.read_text())
            except (configparser.Error, UnicodeDecodeError) as e:
                raise TaskFormatError(f"{self.repo} {self.version}: {entry_points} does not parse ({e}); "
                                      "reinstall the environment (delete its folder in polar's cache)") from None
            if parser.has_section("pytest11"):
                plugins += [value.partition(":")[0].strip() for _, value in parser.items("pytest11")]
        return tuple(dict.fromkeys(plugins))

    def source_dir(self) -> Path:
        """The sdist, unpacked once (its top folder stripped)."""
        source = self.root / "source"
        if source.is_dir():
            return source
        if self.sdist is None:
            raise TaskFormatError(f"{self.repo} {self.version}: no sdist (the source is the mirror {self.mirror})")
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
                readable(top)
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
            if self.mirror is not None:
                self._checkout(task.base_commit, repo)
                commit = _run([*GIT, "rev-parse", "HEAD"], repo).strip()
            else:
                shutil.copytree(self.source_dir(), repo, symlinks=True)
                if not self.sdist_is_base:
                    self._reverse(task, repo)
                commit = commit_tree(repo, f"{self.repo} {self.version}")
            if not commit.startswith(task.base_commit):
                raise TaskFormatError(f"instance {task.instance_id!r}: the source of {self.repo} {self.version}"
                                      f"{'' if self.sdist_is_base else ' less its patches'} commits as {commit}, not "
                                      f"base_commit {task.base_commit}")
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
                tar.add(repo, arcname=".")
            staged = path.with_suffix(f".{os.getpid()}.tmp")
            staged.write_bytes(buffer.getvalue())
            staged.rename(path)
        return path.read_bytes()

    def _reverse(self, task: SweTask, repo: Path) -> None:
        """Take the instance's `test_patch` and gold `patch` out of the fixed source in `repo`."""
        for name in ("test_patch", "patch"):
            if not (diff := getattr(task, name)):
                continue
            (repo.parent / f"{name}.diff").write_text(diff)
            step = subprocess.run([*GIT, "apply", "-R", str(repo.parent / f"{name}.diff")], cwd=repo,
                                  capture_output=True, text=True)
            if step.returncode != 0:
                raise TaskFormatError(f"instance {task.instance_id!r}: field {name!r} does not apply (in "
                                      f"reverse) to {self.repo} {self.version}: {step.stderr.strip()[:500]}")

    def _checkout(self, commit: str, repo: Path) -> None:
        """Clone the mirror into `repo` at `commit`, keeping only that commit and its ancestors on branch `main`: no
        remote, tag, other branch, reflog or unreachable object is left for the agent's `git log --all` to find."""
        _run([*GIT, "-c", "safe.directory=*", "clone", "-q", "--no-checkout", "--no-hardlinks", str(self.mirror),
              str(repo)], what=f"git clone of {self.mirror}")
        step = subprocess.run([*GIT, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], cwd=repo,
                              capture_output=True, text=True)
        if step.returncode != 0:
            raise TaskFormatError(f"{self.mirror} has no commit {commit} (the instance's base_commit): fetch the "
                                  "repository's history into the mirror again, or check the instance's repo field")
        _run([*GIT, "checkout", "-q", "--detach", step.stdout.strip()], repo, what=f"git checkout of {commit}")
        _run([*GIT, "remote", "remove", "origin"], repo, what="git remote remove")
        refs = _run([*GIT, "for-each-ref", "--format=delete %(refname)"], repo)
        _run([*GIT, "update-ref", "--stdin"], repo, what="git update-ref", stdin=refs)
        _run([*GIT, "checkout", "-q", "-B", "main"], repo, what="git checkout -B main")
        _run([*GIT, "reflog", "expire", "--expire=now", "--all"], repo, what="git reflog expire")
        _run([*GIT, "gc", "-q", "--prune=now"], repo, what="git gc")

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


def _checked(env: RepoEnvironment, where: str) -> RepoEnvironment:
    if not env.test_command.startswith(PYTEST + " "):
        raise TaskFormatError(f"{where}: {env.repo} {env.version}'s test_command must run `{PYTEST} ...` (the "
                              f"grader runs pytest with its own verdict plugin), got {env.test_command!r}")
    return env


def load_environments(paths: tuple[Path, ...] = ENVIRONMENTS_FILES) -> dict[tuple[str, str], RepoEnvironment]:
    """The repository environments polar knows how to build, by (repo, version). An entry without `sdist` says
    only what the tests need (for a repository that comes from a mirror)."""
    found = {}
    for path in paths:
        for entry in json.loads(path.read_text()) if path.is_file() else ():
            env = RepoEnvironment(repo=entry["repo"], version=entry["version"],
                                  sdist=path.parent / entry["sdist"] if "sdist" in entry else None,
                                  sha256=entry.get("sha256", ""), requirements=tuple(entry["requirements"]),
                                  test_command=entry["test_command"], licence=entry.get("licence", ""),
                                  sdist_is_base=entry.get("sdist_is_base", False), origin=str(path))
            found[(env.repo, env.version)] = _checked(env, str(path))
    return found


class ReposOption(argparse.Action):
    """`--repos DIR` of `polar run`, `polar eval` and `polar tasks admit`: exported as `$POLAR_SWE_REPOS` when the
    command line is read. A variable, like `$POLAR_IMAGE_REGISTRY`, reaches every SWE family the run makes (through
    `gym.make`, sandbox pools, admission workers, child processes) without a parameter through each of them."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        folder = Path(str(values)).resolve()
        if not folder.is_dir():
            parser.error(f"{option_string} {values}: no such folder (it holds <owner>__<name>.git or .bundle)")
        os.environ[REPOS_VARIABLE] = str(folder)
        setattr(namespace, self.dest, str(folder))


REPOS_HELP = ("a folder of local git mirrors or bundles (<owner>__<name>.git or .bundle): SWE-bench instances with no "
              "image and no bundled environment are checked out from them at base_commit (sets $POLAR_SWE_REPOS)")


def mirror_of(repo: str) -> Path | None:
    """The local mirror or bundle of `repo` in `$POLAR_SWE_REPOS`, if there is one."""
    folder = os.environ.get(REPOS_VARIABLE)
    slug = repo.replace("/", "__")
    return next((p for p in (Path(folder) / f"{slug}.git", Path(folder) / f"{slug}.bundle") if p.exists()),
                None) if folder else None


def repository_environment(task: SweTask) -> RepoEnvironment | None:
    """The instance's environment built from its repository's mirror (`mirror_of`), or None when it has none. What
    its tests need comes from the row's own `requirements` and `test_command`, else from the entry for its repo
    and version in `$POLAR_SWE_REPOS/environments.json`, else from SWE-bench's table (`swebench_specs`)."""
    from polar.envs.swe.swebench_specs import PACKAGE as SPEC_SOURCE
    from polar.envs.swe.swebench_specs import environment_from_spec, spec_for

    if (mirror := mirror_of(task.repo)) is None:
        return None
    where = f"instance {task.instance_id!r}"
    requirements, command = task.extra.get("requirements"), task.extra.get("test_command")
    origin, python = "the row's requirements and test_command", None
    if requirements is None or command is None:
        listed = load_environments((mirror.parent / "environments.json",)).get((task.repo, task.version))
        spec = spec_for(task.repo, task.version)
        fix = (f"give the row `requirements` (pip specifiers) and `test_command` (`{PYTEST} ... {TEST_FILES}`), or "
               f"add an entry for {task.repo} {task.version} to {mirror.parent}/environments.json")
        if listed is not None:
            requirements, command, origin = listed.requirements, listed.test_command, listed.origin
        elif spec is None:
            raise TaskFormatError(f"{where}: its repository is {mirror}, but nothing says what its tests need "
                                  f"(SWE-bench's table has no {task.repo} {task.version}): {fix}")
        else:
            try:
                requirements, command = environment_from_spec(spec, PYTEST, TEST_FILES)
            except ValueError as e:
                raise TaskFormatError(f"{where}: {e}: {fix}") from None
            origin, python = f"SWE-bench's spec table ({SPEC_SOURCE})", spec.get("python")
    if not isinstance(requirements, list | tuple) or not all(isinstance(r, str) for r in requirements) \
            or not isinstance(command, str):
        raise TaskFormatError(f"{where}: `requirements` must be a list of pip specifiers and `test_command` a string")
    return _checked(RepoEnvironment(repo=task.repo, version=task.version, requirements=tuple(requirements),
                                    test_command=command, mirror=mirror, origin=origin,
                                    python_asked=None if python is None else str(python)), where)


REGISTRY_VARIABLE = "POLAR_IMAGE_REGISTRY"
"""A registry (`host[:port]`) SWE-v0 may pull a missing official image from, on demand; unset: never pull."""


def official_names(task: SweTask) -> list[str]:
    """The names the instance's official evaluation image goes by: its row's own image field, then swebench's."""
    key = f"sweb.eval.x86_64.{task.instance_id}:latest".lower().replace("__", "_1776_")
    return list(dict.fromkeys(filter(None, (task.image, f"swebench/{key}"))))


def official_image(task: SweTask) -> str | None:
    """The official swebench evaluation image for the instance, if the Docker engine has it, or pulled from the
    registry `$POLAR_IMAGE_REGISTRY` names when it is set."""
    from polar.envs.sandbox.images import image_exists

    if shutil.which("docker") is None:
        return None
    for image in official_names(task):
        if image_exists(image):
            return image
    if (registry := os.environ.get(REGISTRY_VARIABLE)) and (registry, task.instance_id) not in _FAILED_PULLS:
        try:
            return pull_official(task, registry)
        except SandboxError as e:  # said once; the instance falls back to the other ways to build its environment
            _FAILED_PULLS[(registry, task.instance_id)] = str(e)
            warnings.warn(f"{e} (not retried in this run)", stacklevel=2)
    return None


_FAILED_PULLS: dict[tuple[str, str], str] = {}
"""{(registry, instance id): why} of the on-demand pulls that failed in this process: each is tried once per run."""


def pull_official(task: SweTask, registry: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> str:
    """Pull the instance's official image (from `registry`, else the engine's default) under its own name and
    return it. Layers the engine already has are not fetched again, so an interrupted pull resumes where it
    stopped; `progress(done_bytes, total_bytes)` follows it. `SandboxError` names each name tried and why."""
    import docker

    client = docker.from_env()
    errors = []
    for name in official_names(task):
        source = f"{registry.rstrip('/')}/{name}" if registry else name
        repository, _, tag = source.rpartition(":") if ":" in source.rsplit("/", 1)[-1] else (source, "", "latest")
        layers: dict[str, tuple[int, int]] = {}
        try:
            for event in client.api.pull(repository, tag=tag or "latest", stream=True, decode=True):
                if "error" in event:
                    raise docker.errors.APIError(event["error"])
                detail = event.get("progressDetail") or {}
                if event.get("id") and detail.get("total"):
                    layers[event["id"]] = (detail.get("current", 0), detail["total"])
                    if progress is not None:
                        progress(sum(c for c, _ in layers.values()), sum(t for _, t in layers.values()))
            if source != name:
                client.images.get(source).tag(name)
                client.images.remove(source)
            return name
        except docker.errors.APIError as e:
            errors.append(f"{source}: {getattr(e, 'explanation', None) or e}")
    raise SandboxError(f"instance {task.instance_id}: no official image could be pulled ("
                       + "; ".join(errors) + "). Pass --registry HOST:PORT for a registry that has them, or let polar "
                       "build the environment from the repository (the suite's environments file)")
