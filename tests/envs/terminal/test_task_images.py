"""Task images the way Harbor builds them, for real: builds with the machine's network (a real `pip install` from a
registry), bases the engine lacks pulled or replaced by polar's documented stand-ins, failed builds remembered, and a
Dockerfile's USER honoured for the agent and the tests while polar's own set-up runs as root."""

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from support.harbor_tasks import SUBMIT, admit, episode, make_task

from polar.envs.registration import register_envs
from polar.envs.sandbox import make_backend
from polar.envs.sandbox.dockerfile.build import (
    SUBSTITUTES,
    bases_in_log,
    failure_record,
    image_for_dockerfile,
    repository,
    resolve_bases,
)
from polar.envs.sandbox.images import BASE_IMAGE, PYTHON_IMAGE
from polar.errors import SandboxError
from polar.policies import OraclePolicy
from polar.tasks.harbor import load_task

register_envs()


@pytest.fixture
def client(docker):
    import docker as sdk

    return sdk.from_env()


def test_image_references_name_their_repository():
    assert [repository(r) for r in ("python:3.12-slim", "docker.io/library/python:3.12@sha256:ab", "ubuntu",
                                    "localhost:5000/team/app:1", "ghcr.io/x/y",
                                    "public.ecr.aws/docker/library/ubuntu:24.04@sha256:0d",
                                    "ghcr.io/laude-institute/t-bench/python-3-13:20250620")] == \
        ["python", "python", "ubuntu", "team/app", "x/y", "ubuntu", "laude-institute/t-bench/python-3-13"]
    assert SUBSTITUTES == {"python": PYTHON_IMAGE, "debian": BASE_IMAGE, "ubuntu": BASE_IMAGE,
                           "laude-institute/t-bench/ubuntu-24-04": BASE_IMAGE,
                           "laude-institute/t-bench/python-3-13": PYTHON_IMAGE}


def test_a_base_with_no_stand_in_that_cannot_be_pulled_is_an_error_naming_it(client):
    with pytest.raises(SandboxError, match=r"registry\.invalid/polar-absent:1 is not in the Docker engine.*load"):
        resolve_bases(client, "FROM registry.invalid/polar-absent:1\n")


def test_debian_and_ubuntu_bases_are_pulled_or_built_on_polars_base(client):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text, used = resolve_bases(client, "FROM debian:bookworm-slim AS a\nFROM ubuntu:24.04\nCOPY --from=a / /\n")
    assert used["debian:bookworm-slim"] in ("debian:bookworm-slim", BASE_IMAGE)
    assert used["ubuntu:24.04"] in ("ubuntu:24.04", BASE_IMAGE)
    assert f"FROM {used['ubuntu:24.04']}\n" in text and "COPY --from=a" in text


def admitted_and_solved(task: Path) -> tuple[Path, Any]:
    """The task folder is admitted in docker and the oracle's episode on it scores 1; the folder and the trace."""
    result = admit(task, "docker")
    assert result.admitted, result.reasons
    trace = episode(task, OraclePolicy(), sandbox="docker")
    assert (trace.status, trace.reward) == ("completed", 1.0), trace.error or trace.verifier_log[-2000:]
    return task, trace


def test_a_pip_install_builds_with_network_on_a_python_base_and_the_base_used_is_recorded(docker, tmp_path):
    """`FROM python:3.12-slim` + `RUN pip install`: built for real (pulled, or on polar/python:bookworm), admitted,
    the base recorded in the trace; the agent's own container still has no network."""
    dockerfile = "FROM python:3.12-slim\nRUN pip install --no-cache-dir six==1.17.0\nWORKDIR /app\n"
    test = ('if python3 -c "import six; assert six.__version__ == \'1.17.0\'" && [ -f /app/done ] && '
            '[ "$(ls /sys/class/net)" = lo ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n')
    task, trace = admitted_and_solved(make_task(tmp_path, "pip-task", dockerfile=dockerfile, test=test,
                                                solve="echo ok > /app/done\n"))
    assert bases_in_log(trace.verifier_log)["python:3.12-slim"] in ("python:3.12-slim", PYTHON_IMAGE)


def test_a_failed_build_is_remembered_with_its_log_until_the_dockerfile_changes(client, tmp_path, monkeypatch):
    monkeypatch.setenv("POLAR_CACHE", str(tmp_path / "cache"))
    context = tmp_path / "broken" / "environment"
    context.mkdir(parents=True)
    dockerfile = context / "Dockerfile"
    dockerfile.write_text(f"FROM {BASE_IMAGE}\nRUN echo the-build-says-why && exit 3\n")
    with pytest.raises(SandboxError, match="the whole log is") as first:
        image_for_dockerfile(client, str(dockerfile))
    records = list((tmp_path / "cache" / "images" / "failed").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert "returned a non-zero code: 3" in record["reason"] and record["log"] in str(first.value)
    assert "the-build-says-why" in Path(record["log"]).read_text()
    assert failure_record(record["tag"]) == records[0]
    with pytest.raises(SandboxError, match="not retried while the task's environment is unchanged") as again:
        image_for_dockerfile(client, str(dockerfile))
    assert str(records[0]) in str(again.value) and record["log"] in str(again.value)
    dockerfile.write_text(f"FROM {BASE_IMAGE}\nRUN exit 4\n")  # new inputs: built (and failing) afresh
    with pytest.raises(SandboxError, match="non-zero code: 4"):
        image_for_dockerfile(client, str(dockerfile))


def test_a_user_line_is_the_agents_and_the_tests_user_while_setup_runs_as_root(docker, tmp_path):
    dockerfile = (f"FROM {BASE_IMAGE}\nRUN useradd -m -u 1234 app && mkdir -p /app && chown app:app /app\n"
                  "USER app\nWORKDIR /app\n")
    test = ('if [ "$(id -un)" = app ] && [ "$(stat -c %U /app/done)" = app ] && [ "$(cat /app/done)" = app ]; '
            'then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n')
    task, trace = admitted_and_solved(make_task(tmp_path, "user-task", dockerfile=dockerfile, test=test,
                                                solve="id -un > /app/done\n"))
    assert "image user app\n" in trace.verifier_log
    from polar.envs.terminal.family import TerminalFamily

    regraded = asyncio.run(TerminalFamily().regrade(load_task(task), trace.artefact, make_backend("docker")))
    assert regraded.reward(TerminalFamily.reward) == 1.0, regraded.error or regraded.log[-2000:]


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_a_terminal_bench_1_task_builds_on_a_stand_in_with_its_bases_workdir(request, bwrap, tmp_path, sandbox):
    """Terminal-Bench 1's tasks build on its own bases, which set WORKDIR /app, and `COPY` into `.` with none of
    their own: on polar's stand-in the files land in /app, where their tests look."""
    if sandbox == "docker":
        request.getfixturevalue("docker")
    task = make_task(tmp_path, "tb1", dockerfile="FROM ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624\n"
                     "COPY data.txt .\n", files={"data.txt": "3 4\n"},
                     solve="awk '{print $1 + $2}' data.txt > sum.txt\n",
                     test='[ "$(cat /app/sum.txt)" = 7 ] && [ -f /app/data.txt ] && r=1 || r=0\n'
                          "echo $r > /logs/verifier/reward.txt\n")
    assert load_task(task).workdir == "/app"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the stand-in's warning, when the engine lacks the base
        solved, nothing = episode(task, OraclePolicy(), sandbox), episode(task, policy=SUBMIT, sandbox=sandbox)
    assert (solved.status, solved.reward) == ("completed", 1.0), (solved.error, solved.verifier_log[-2000:])
    assert (nothing.status, nothing.reward) == ("completed", 0.0), (nothing.error, nothing.verifier_log[-2000:])
