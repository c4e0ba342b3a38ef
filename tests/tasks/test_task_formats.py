"""Task formats written by others: the older Terminal-Bench layout converted and admitted, suites with bad task
folders, environment/docker-compose.yaml, and the SWE row shapes of SWE-Gym, SWE-smith and SWE-rebench."""

from __future__ import annotations

import asyncio
import json
import tomllib
import zipfile
from pathlib import Path

import pytest

from polar.errors import TaskFormatError
from polar.evaluation.admission import admit_suite
from polar.tasks import code, harbor
from polar.tasks.convert import convert
from polar.tasks.folders import TaskFormatWarning, require_all

TASK_YAML = """\
instruction: |
  Write the sum of the numbers in /app/numbers.txt to /app/total.txt, as one integer.
author_name: A. Writer
author_email: writer@example.com
difficulty: easy
category: file-operations
tags: [arithmetic, files]
parser_name: pytest
max_agent_timeout_sec: 120
max_test_timeout_sec: 45
run_tests_in_same_shell: false
expert_time_estimate_min: 2
"""
COMPOSE = """\
services:
  client:
    build:
      dockerfile: Dockerfile
    image: ${T_BENCH_TASK_DOCKER_CLIENT_IMAGE_NAME}
    container_name: ${T_BENCH_TASK_DOCKER_CLIENT_CONTAINER_NAME}
    command: [ "sh", "-c", "sleep infinity" ]
    environment:
      - TEST_DIR=${T_BENCH_TEST_DIR}
      - GREETING=hello there
    volumes:
      - ${T_BENCH_TASK_LOGS_PATH}:${T_BENCH_CONTAINER_LOGS_PATH}
"""
TEST_OUTPUTS = """\
import os
from pathlib import Path


def test_total():
    assert Path("/app/total.txt").read_text().strip() == "10"


def test_environment_from_compose():
    assert os.environ.get("GREETING") == "hello there"
"""


def _pytest_zip(path: Path) -> None:
    """pytest and what it imports, zipped: this task's tests bring their own pytest, as Terminal-Bench tasks install
    theirs in run-tests.sh (here without a network)."""
    import _pytest
    import iniconfig
    import packaging
    import pluggy
    import pytest as pytest_module

    site = Path(pytest_module.__file__).parent.parent
    with zipfile.ZipFile(path, "w") as archive:
        for module in (pytest_module, _pytest, pluggy, iniconfig, packaging):
            folder = Path(module.__file__).parent
            for file in folder.rglob("*.py"):
                archive.write(file, file.relative_to(site).as_posix())
        for extra in ("py.py",):
            if (site / extra).is_file():
                archive.write(site / extra, extra)


def _old_task(root: Path, *, solution: str = "yaml") -> Path:
    """A task in the older Terminal-Bench layout, written from its documented shape (task.yaml, a root Dockerfile,
    the `client` compose service with ${T_BENCH_*} variables, run-tests.sh, tests/, solution.yaml or .sh)."""
    task = root / "sum-numbers"
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text(TASK_YAML)
    (task / "docker-compose.yaml").write_text(COMPOSE)
    (task / "numbers.txt").write_text("1\n2\n3\n4\n")
    (task / "Dockerfile").write_text("FROM polar/base:bookworm\nWORKDIR /app\nCOPY numbers.txt /app/numbers.txt\n")
    (task / "run-tests.sh").write_text('#!/bin/bash\nPYTHONPATH="$TEST_DIR/pytest.zip" python3 -m pytest '
                                       '-p no:cacheprovider "$TEST_DIR/test_outputs.py" -rA\n')
    (task / "tests" / "test_outputs.py").write_text(TEST_OUTPUTS)
    _pytest_zip(task / "tests" / "pytest.zip")
    if solution == "yaml":
        (task / "solution.yaml").write_text(
            "- command: cd /app\n- command: python3 -c \"print(sum(map(int, open('numbers.txt'))))\" > total.txt\n"
            "  min_timeout_sec: 1\n")
    else:
        (task / "solution.sh").write_text("#!/bin/bash\npython3 -c \"print(sum(map(int, open('/app/numbers.txt'))))\" "
                                          "> /app/total.txt\n")
    return task


def test_convert_maps_every_part_of_the_old_layout(tmp_path):
    _old_task(tmp_path / "src")
    (result,) = convert(tmp_path / "src", tmp_path / "out")
    assert result.reason is None, result.reason
    out = result.target
    config = tomllib.loads((out / "task.toml").read_text())
    assert config["agent"]["timeout_sec"] == 120.0 and config["verifier"]["timeout_sec"] == 45.0
    assert config["metadata"]["tags"] == ["arithmetic", "files"] and config["metadata"]["difficulty"] == "easy"
    assert (out / "instruction.md").read_text().startswith("Write the sum")
    dockerfile = (out / "environment" / "Dockerfile").read_text()
    assert 'ENV GREETING="hello there"' in dockerfile and "ENV TEST_DIR=/tests" in dockerfile
    assert sorted(p.name for p in (out / "environment").iterdir()) == ["Dockerfile", "numbers.txt"]
    assert {"test.sh", "run-tests.sh", "test_outputs.py", "pytest.zip"} <= {p.name for p in (out / "tests").iterdir()}
    assert "cd /app" in (out / "solution" / "solve.sh").read_text()
    task = harbor.load_task(out)
    assert task.agent_timeout_s == 120.0 and task.workdir == "/app"


def test_convert_refuses_what_it_cannot_carry_and_leaves_nothing(tmp_path):
    src = tmp_path / "src"
    two = _old_task(src)
    (two / "docker-compose.yaml").write_text(COMPOSE + "  db:\n    image: postgres:16\n")
    keys = _old_task(tmp_path / "keys")
    (keys / "solution.yaml").write_text("- command: vim notes.txt\n- command: ':wq'\n  append_enter: false\n")
    keys.rename(src / "interactive")
    (src / "already-harbor").mkdir()
    (src / "already-harbor" / "task.toml").write_text('version = "1.0"\n')
    results = {r.name: r for r in convert(src, tmp_path / "out")}
    assert "2 services" in results["sum-numbers"].reason and "one container per task" in results["sum-numbers"].reason
    assert "interactive program" in results["interactive"].reason
    assert "already in Harbor's current layout" in results["already-harbor"].reason
    assert [p.name for p in (tmp_path / "out").iterdir()] == []


def test_convert_refuses_a_compose_key_it_cannot_apply(tmp_path):
    task = _old_task(tmp_path / "src")
    (task / "docker-compose.yaml").write_text(COMPOSE + "    ports:\n      - 8080:8080\n")
    (result,) = convert(task, tmp_path / "out")
    assert "ports" in result.reason and "does not apply" in result.reason


@pytest.mark.parametrize("solution", ["yaml", "sh"])
def test_converted_task_admits_in_the_local_sandbox(tmp_path, bwrap, solution):
    _old_task(tmp_path / "src", solution=solution)
    (result,) = convert(tmp_path / "src", tmp_path / "out")
    assert result.reason is None, result.reason
    env_id, (admission,) = asyncio.run(admit_suite(str(tmp_path / "out"), sandbox="local"))
    assert env_id == "polar/Terminal-v0"
    assert admission.admitted, admission.reasons


def test_a_verifier_whose_tests_cannot_run_writes_no_reward(tmp_path, bwrap):
    """run-tests.sh that fails before pytest runs (as a `curl ... | sh` does offline): no pytest summary, no reward
    file, so polar says verifier error; the oracle's admission names it instead of a plain 0."""
    task = _old_task(tmp_path / "src", solution="sh")
    (task / "run-tests.sh").write_text("#!/bin/bash\nset -e\nfalse  # the download of the test runner failed\n")
    (result,) = convert(task, tmp_path / "out")
    _, (admission,) = asyncio.run(admit_suite(str(result.target), env_id="polar/Terminal-v0", sandbox="local"))
    assert any("verifier_error" in reason for reason in admission.reasons), admission.reasons


def test_harbor_suite_with_bad_folders_loads_the_good_ones(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    good = harbor.BUNDLED / "csv-group-totals"
    import shutil

    shutil.copytree(good, suite / "good")
    (suite / "no-tests").mkdir()
    (suite / "no-tests" / "task.toml").write_text('version = "1.0"\n')
    (suite / "no-tests" / "instruction.md").write_text("do it\n")
    _old_task(suite / "old")
    (suite / "old" / "sum-numbers").rename(suite / "old-layout")
    (suite / "old").rmdir()
    with pytest.warns(TaskFormatWarning, match="2 task folder"):
        tasks = harbor.load_suite(suite)
    assert [t.id for t in tasks] == ["good"]
    assert set(tasks.rejected) == {"no-tests", "old-layout"}
    assert "tests/test.sh" in tasks.rejected["no-tests"] and "polar tasks convert" in tasks.rejected["old-layout"]
    with pytest.raises(TaskFormatError, match="--strict"):
        require_all(tasks, str(suite))
    with pytest.raises(TaskFormatError, match="no task folder loads"):
        harbor.load_suite(_only(suite, "no-tests"))


def _only(suite: Path, name: str) -> Path:
    """A dataset folder holding only `name` of `suite`'s task folders."""
    import shutil

    alone = suite.parent / f"only-{name}"
    shutil.copytree(suite / name, alone / name)
    return alone


def test_admission_rejects_bad_folders_and_strict_refuses(tmp_path, bwrap):
    suite = tmp_path / "suite"
    import shutil

    shutil.copytree(harbor.BUNDLED / "csv-group-totals", suite / "csv-group-totals")
    (suite / "broken").mkdir()
    (suite / "broken" / "task.toml").write_text("not = [valid\n")
    with pytest.warns(TaskFormatWarning):
        env_id, admissions = asyncio.run(admit_suite(str(suite), sandbox="local"))
    by_id = {a.task_id: a for a in admissions}
    assert env_id == "polar/Terminal-v0" and by_id["csv-group-totals"].admitted
    assert "does not load" in by_id["broken"].reasons[0] and "TOML" in by_id["broken"].reasons[0]
    with pytest.warns(TaskFormatWarning), pytest.raises(TaskFormatError, match="--strict"):
        asyncio.run(admit_suite(str(suite), sandbox="local", strict=True))


def test_code_suite_with_a_bad_folder_loads_the_good_ones(tmp_path):
    import shutil

    shutil.copytree(code.BUNDLED / "caesar_cipher", tmp_path / "caesar_cipher")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "task.toml").write_text('id = "half"\n')
    with pytest.warns(TaskFormatWarning):
        tasks = code.load_suite(tmp_path)
    assert [t.id for t in tasks] == ["caesar_cipher"] and "'title'" in tasks.rejected["half"]


def _harbor_task(root: Path, compose: str) -> Path:
    import shutil

    task = root / "csv-group-totals"
    shutil.copytree(harbor.BUNDLED / "csv-group-totals", task)
    (task / "environment" / "docker-compose.yaml").write_text(compose)
    return task


def test_environment_compose_that_restates_the_dockerfile_loads(tmp_path):
    task = _harbor_task(tmp_path, "services:\n  main:\n    build:\n      context: ${CONTEXT_DIR}\n"
                                  "    image: ${MAIN_IMAGE_NAME}\n    environment:\n      - TEST_DIR=${TEST_DIR}\n"
                                  "    volumes:\n      - ${HOST_VERIFIER_LOGS_PATH}:${ENV_VERIFIER_LOGS_PATH}\n")
    assert harbor.load_task(task).id == "csv-group-totals"


@pytest.mark.parametrize(("compose", "says"), [
    ("services:\n  main:\n    build: .\n  redis:\n    image: redis:7\n", "2 services"),
    ("services:\n  main:\n    environment:\n      MODE: fast\n", "ENV lines"),
    ("services:\n  main:\n    ports: ['80:80']\n", "ports"),
    ("services:\n  main:\n    volumes: ['./data:/data']\n", "mounts"),
])
def test_environment_compose_that_adds_something_is_refused(tmp_path, compose, says):
    with pytest.raises(TaskFormatError, match=says):
        harbor.load_task(_harbor_task(tmp_path, compose))



PATCH = ("diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n"
         "-def add(a, b): return a - b\n+def add(a, b): return a + b\n")
TEST_PATCH = ("diff --git a/tests/test_core.py b/tests/test_core.py\nnew file mode 100644\n--- /dev/null\n"
              "+++ b/tests/test_core.py\n@@ -0,0 +1,2 @@\n+from pkg.core import add\n"
              "+def test_add(): assert add(1, 2) == 3\n")
COMMON = {"repo": "example/pkg", "base_commit": "0123456789abcdef0123456789abcdef01234567", "patch": PATCH,
          "test_patch": TEST_PATCH, "problem_statement": "add() subtracts.", "hints_text": "",
          "created_at": "2024-05-01T00:00:00Z"}


def _load_rows(tmp_path: Path, rows: list[dict]) -> list:
    from polar.tasks.swe import load_instances

    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return load_instances(path)


def test_swe_gym_row_loads(tmp_path):
    """SWE-Gym (dataset `SWE-Gym/SWE-Gym`, card: SWE-bench's columns, FAIL_TO_PASS/PASS_TO_PASS as lists, no image
    column; its images are named by the harness that runs it, not by the row)."""
    (task,) = _load_rows(tmp_path, [{**COMMON, "instance_id": "example__pkg-1", "version": "0.1",
                                     "environment_setup_commit": COMMON["base_commit"],
                                     "FAIL_TO_PASS": ["tests/test_core.py::test_add"], "PASS_TO_PASS": []}])
    assert task.FAIL_TO_PASS == ("tests/test_core.py::test_add",) and task.image == ""


def test_swe_rebench_row_maps_docker_image(tmp_path):
    """SWE-rebench (dataset `nebius/SWE-rebench`, card: SWE-bench's columns plus `install_config` (a struct: python,
    install, test_cmd, ...), `requirements`, `environment`, `license_name`, `meta` and `docker_image`, the prebuilt
    evaluation image)."""
    from polar.envs.swe.environment import official_image

    row = {**COMMON, "instance_id": "example__pkg-2", "version": 0.2, "FAIL_TO_PASS": ["tests/test_core.py::test_add"],
           "PASS_TO_PASS": [], "install_config": {"python": "3.11", "install": "pip install -e .",
                                                  "test_cmd": "pytest -rA"},
           "requirements": "pytest\n", "license_name": "MIT", "meta": {"has_test_patch": True},
           "docker_image": "swerebench/sweb.eval.x86_64.example_1776_pkg-2"}
    (task,) = _load_rows(tmp_path, [row])
    assert task.image == row["docker_image"] and task.version == "0.2"
    assert task.extra["install_config"]["test_cmd"] == "pytest -rA" and task.extra["license_name"] == "MIT"
    assert task.to_record()["docker_image"] == row["docker_image"]
    assert official_image(task) is None  # the engine does not hold it: official_image reads `image`, never pulls


def test_swe_smith_rows_map_image_name_or_say_why_not(tmp_path):
    """SWE-smith (dataset `SWE-bench/SWE-smith`, card: instance_id, repo, patch, FAIL_TO_PASS, PASS_TO_PASS,
    image_name, problem_statement; its `patch` introduces the bug into the image's repository)."""
    smith = {"instance_id": "example__pkg.01234567.func_pm_op_swap__abc", "repo": "swesmith/example__pkg.01234567",
             "patch": PATCH, "FAIL_TO_PASS": ["tests/test_core.py::test_add"], "PASS_TO_PASS": [],
             "image_name": "jyangballin/swesmith.x86_64.example_1776_pkg.01234567",
             "problem_statement": "add() is off."}
    with pytest.raises(TaskFormatError, match="SWE-smith row"):
        _load_rows(tmp_path, [smith])
    # a SWE-smith-derived row in SWE-bench's shape (a base commit and a test patch) keeps its image
    (task,) = _load_rows(tmp_path, [{**COMMON, "instance_id": "example__pkg-3", "FAIL_TO_PASS": ["t::a"],
                                     "PASS_TO_PASS": [], "image_name": smith["image_name"]}])
    assert task.image == smith["image_name"]
