"""polar/SWE-v0 for real: the loaders, swebench's grading in real sandboxes, admission of the bundled suite in
the local and the docker sandbox, episodes end to end (on docker in the instance's image; through every external
harness), and bad input. Environments and images are cached (`$POLAR_CACHE`), so only the first run on a machine
pays for building them."""

import asyncio
import io
import json
import os
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import jsonschema
import pandas as pd
import pytest
from conftest import harness_env, require_modules

from polar.envs.registration import register_envs
from polar.envs.sandbox import make_backend
from polar.envs.swe.admission import admit
from polar.envs.swe.environment import SITE
from polar.envs.swe.family import SweFamily, filter_patch
from polar.errors import TaskFormatError
from polar.evaluation.admission import admit_suite
from polar.evaluation.runner import run_episode
from polar.harnesses import declarations
from polar.harnesses.matrix import proofs
from polar.policies import OraclePolicy, ScriptedPolicy
from polar.tasks.swe import load_instances, load_jsonl, load_parquet, parse_instance, patch_files
from polar.trace import load_schema

register_envs()
FAMILY = SweFamily()
TASKS = load_instances("swe-mini")
ROWS = [t.to_record() for t in TASKS]


def one_per_project(nth: int = 0):
    """The nth instance of each project (the first when it has fewer)."""
    by_repo: dict[str, list] = {}
    for task in TASKS:
        by_repo.setdefault(task.repo, []).append(task)
    return [tasks[min(nth, len(tasks) - 1)] for tasks in by_repo.values()]


def run(coro):
    return asyncio.run(coro)


# --- the format and its loaders ---------------------------------------------------------------------------

def test_the_bundled_suite_spans_several_real_projects():
    assert len(TASKS) >= 8 and len({t.repo for t in TASKS}) >= 2
    for task in TASKS:
        assert task.FAIL_TO_PASS and task.PASS_TO_PASS and task.eval_script and task.log_parser == "parse_log_pytest"
        assert set(task.test_files()).isdisjoint(patch_files(task.patch))  # the gold patch is source only


def test_jsonl_and_parquet_round_trip(tmp_path):
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS[:3]))
    assert load_jsonl(tmp_path / "s.jsonl") == TASKS[:3]
    frame = pd.DataFrame(ROWS[:3])
    frame["FAIL_TO_PASS"] = [list(t.FAIL_TO_PASS) for t in TASKS[:3]]  # real lists, as some exports store them
    frame.to_parquet(tmp_path / "s.parquet")
    assert load_parquet(tmp_path / "s.parquet") == TASKS[:3]
    assert load_instances(str(tmp_path / "s.parquet")) == TASKS[:3]


def test_a_local_dataset_in_hugging_face_layout_loads_through_datasets(tmp_path, monkeypatch):
    require_modules("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    (tmp_path / "SWE-bench_Lite" / "data").mkdir(parents=True)
    pd.DataFrame(ROWS[:2]).to_parquet(tmp_path / "SWE-bench_Lite" / "data" / "test-00000-of-00001.parquet")
    pd.DataFrame(ROWS[2:3]).to_parquet(tmp_path / "SWE-bench_Lite" / "data" / "dev-00000-of-00001.parquet")
    assert load_instances(str(tmp_path / "SWE-bench_Lite")) == TASKS[:2]
    assert load_instances(f"{tmp_path / 'SWE-bench_Lite'}@dev") == TASKS[2:3]


@pytest.mark.parametrize(("change", "message"), [
    ({"FAIL_TO_PASS": "[]"}, "field 'FAIL_TO_PASS' is empty"),
    ({"FAIL_TO_PASS": "not json"}, "field 'FAIL_TO_PASS' is a string but not a JSON list"),
    ({"patch": "just prose"}, "field 'patch' is not a git diff"),
    ({"repo": "no-owner"}, "field 'repo' must be 'owner/name'"),
    ({"base_commit": None}, "missing field 'base_commit'"),
])
def test_a_broken_row_names_the_instance_and_the_field(change, message):
    with pytest.raises(TaskFormatError, match=rf"'{TASKS[0].instance_id}'.*{message}"):
        parse_instance({**ROWS[0], **change})


def test_test_file_edits_never_reach_the_grader():
    task = TASKS[0]
    sneaky = task.patch + task.test_patch + (
        "diff --git a/conftest.py b/conftest.py\nnew file mode 100644\n--- /dev/null\n+++ b/conftest.py\n"
        "@@ -0,0 +1 @@\n+import pytest\n")
    kept, dropped = filter_patch(sneaky, task)
    assert kept == task.patch and dropped == [f"{f}: a test file" for f in task.test_files()] + [
        "conftest.py: pytest configuration"]


# --- grading and admission in real sandboxes -------------------------------------------------------------

@pytest.mark.slow  # a sweep over every bundled task: the fast subset runs one episode of each family
def test_bundled_instances_are_admitted_in_the_local_sandbox(bwrap):
    """One instance per project in each sandbox (the second here, the first in docker): admitting all 34 took
    3.5 minutes of every CI run; the oracle test below still resolves every one, and `polar tasks admit swe-mini`
    admits them all."""
    wanted = [t.instance_id for t in one_per_project(1)]
    env_id, results = run(admit_suite("swe-mini", sandbox="local", jobs=2, task_ids=wanted))
    assert env_id == "polar/SWE-v0" and [r.task_id for r in results] == wanted
    assert {r.task_id: r.reasons for r in results if not r.admitted} == {}


def test_bundled_instances_are_admitted_in_docker(docker):
    wanted = [t.instance_id for t in one_per_project()]
    _, results = run(admit_suite("swe-mini", sandbox="docker", jobs=2, task_ids=wanted))
    assert [r.task_id for r in results] == wanted
    assert {r.task_id: r.reasons for r in results if not r.admitted} == {}


def test_bad_instances_fail_admission_with_the_reason(bwrap):
    task = TASKS[0]
    backend = make_backend("local")
    already = replace(task, instance_id="already-passes", FAIL_TO_PASS=task.PASS_TO_PASS[:1])
    missing = replace(task, instance_id="no-such-test", FAIL_TO_PASS=("test_nope.py::test_nothing",))
    broken = replace(task, instance_id="patch-does-not-apply",
                     patch=task.patch.replace("\n-", "\n-# a line that is not there\n-", 1))
    outcomes = {t.instance_id: run(admit(FAMILY, t, backend)).reasons for t in (already, missing, broken)}
    assert any("already pass without the fix" in r for r in outcomes["already-passes"]), outcomes
    assert any("gold patch does not resolve" in r for r in outcomes["no-such-test"]), outcomes
    assert any("'patch-does-not-apply'" in r and "field 'patch' does not apply" in r
               for r in outcomes["patch-does-not-apply"]), outcomes


def test_an_unknown_repository_is_a_task_format_error():
    task = replace(TASKS[0], instance_id="nobody__nothing-1", repo="nobody/nothing")
    with pytest.raises(TaskFormatError, match="'nobody__nothing-1'.*no environment for repo 'nobody/nothing'"):
        FAMILY.sandbox_spec(task)


def test_a_crashing_grader_is_a_verifier_error_with_its_log(bwrap):
    task = replace(TASKS[0], eval_script="#!/bin/bash\necho 'the eval script broke'\nexit 3\n")
    grade = run(FAMILY.grade_patch(task, task.patch, make_backend("local")))
    assert grade.error and "markers" in grade.error and "the eval script broke" in grade.log
    env = gym.make("polar/SWE-v0", sandbox="local", max_turns=4)
    env.unwrapped.tasks = [task]
    try:
        trace = run_episode(env, OraclePolicy(), seed=0, task_id=task.id)
    finally:
        env.close()
    assert (trace.status, trace.reward) == ("verifier_error", 0.0) and "the eval script broke" in trace.verifier_log


def test_a_test_run_that_prints_past_a_command_s_output_cap_is_still_graded(bwrap, tmp_path):
    """The eval script's output goes to a file: a gold patch whose module prints 3 MiB as pytest exits (a command
    may print 1 MiB) still reaches the end marker, and resolves."""
    task = TASKS[1]
    with tarfile.open(fileobj=io.BytesIO(FAMILY.environment(task).base_archive(task))) as tar:
        tar.extractall(tmp_path, filter="data")
    git = ["git", "-c", "core.hooksPath=/dev/null", "-C", str(tmp_path)]
    subprocess.run([*git, "apply", "-"], input=task.patch, text=True, check=True)
    module = tmp_path / patch_files(task.patch)[0]
    module.write_text(module.read_text() + "\nimport atexit as _atexit\nimport os as _os\n"  # past pytest's capture
                      "_atexit.register(lambda: _os.write(1, b'x' * (3 << 20)))\n")
    noisy = subprocess.run([*git, "diff"], capture_output=True, text=True, check=True).stdout
    grade = run(FAMILY.grade_patch(task, noisy, make_backend("local")))
    assert grade.error is None and grade.components["resolved"] == 1.0, (grade.error, grade.log[-2000:])


def test_regrading_the_artefact_gives_the_same_verdict(bwrap):
    task, backend = TASKS[1], make_backend("local")
    gold = run(FAMILY.grade_patch(task, task.patch, backend))
    again = run(FAMILY.regrade(task, gold.artefact, backend))
    assert gold.components == again.components == {"resolved": 1.0, "f2p_frac": 1.0, "p2p_frac": 1.0}


# --- episodes ----------------------------------------------------------------------------------------------

@pytest.mark.slow  # a sweep over every bundled task: the fast subset runs one episode of each family
def test_the_oracle_resolves_every_bundled_instance_through_the_builtin_harness(bwrap):
    env = gym.make("polar/SWE-v0", sandbox="local", max_turns=4)
    try:
        rewards = {t.id: run_episode(env, OraclePolicy(), seed=0, task_id=t.id).reward for t in TASKS}
    finally:
        env.close()
    assert rewards == dict.fromkeys(rewards, 1.0)


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_an_episode_end_to_end_oracle_1_and_empty_reply_0(request, sandbox):
    request.getfixturevalue("docker" if sandbox == "docker" else "bwrap")
    env = gym.make("polar/SWE-v0", sandbox=sandbox, max_turns=4)
    task = TASKS[0]
    try:
        solved = run_episode(env, OraclePolicy(), seed=0, task_id=task.id)
        idle = run_episode(env, ScriptedPolicy([]), seed=0, task_id=task.id)
    finally:
        env.close()
    assert (solved.status, solved.reward, solved.sandbox) == ("completed", 1.0, sandbox), solved.verifier_log[-2000:]
    assert solved.reward_components == {"resolved": 1.0, "f2p_frac": 1.0, "p2p_frac": 1.0}
    assert solved.artefact["patch"] == task.patch
    assert idle.reward == 0.0 and idle.reward_components["resolved"] == 0.0
    for trace in (solved, idle):
        jsonschema.Draft202012Validator(load_schema()).validate(json.loads(trace.to_json()))


def test_the_agent_works_in_the_instance_image_on_docker(docker):
    """On docker the agent's container runs the repository's own image (its test dependencies baked in), not the
    base image with the host's environment folder mounted over it; the oracle resolves it and grading runs."""
    import os

    import docker as docker_sdk

    task = TASKS[0]
    image = FAMILY.environment(task).build_image()
    local = FAMILY.sandbox_spec(task, backend="local")
    assert local.image is None and [m.sandbox_path for m in local.mounts] == [SITE]
    client = docker_sdk.from_env()
    env = gym.make("polar/SWE-v0", sandbox="docker", max_turns=4)
    policy = OraclePolicy()
    try:
        obs, info = env.reset(seed=0, options={"task_id": task.id})
        (container,) = client.containers.list(filters={"label": f"polar.owner_pid={os.getpid()}"})
        assert container.attrs["Config"]["Image"] == image and image in container.image.tags
        assert all(m["Destination"] != SITE for m in container.attrs["Mounts"])
        terminated = truncated = False
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(policy(obs, info["task"]))
    finally:
        env.close()
    trace = info["trace"]
    assert (trace.status, trace.reward, trace.sandbox) == ("completed", 1.0, "docker"), trace.verifier_log[-2000:]
    assert trace.artefact["patch"] == task.patch and "RESOLVED_FULL" in trace.verifier_log
    assert client.containers.list(filters={"label": f"polar.owner_pid={os.getpid()}"}) == []


# --- external harnesses ----------------------------------------------------------------------------------------

HARNESS_SANDBOXES = proofs("SWE-v0")
"""Every harness with a shell tool, in docker: the instance's image has no Node.js, so the host's is mounted for the
npm-installed CLIs (the local sandbox runs every harness on Code-v0)."""


@pytest.fixture(scope="module", params=HARNESS_SANDBOXES, ids=["-".join(p) for p in HARNESS_SANDBOXES])
def swe_env(request, bwrap, node):
    yield from harness_env(request, "polar/SWE-v0")


def test_the_oracle_resolves_an_instance_through_each_external_harness(swe_env):
    """The gold patch is written and `git apply`-ed by the harness's own shell tool; swebench's grading resolves it."""
    name, task = swe_env.unwrapped.harness.name, TASKS[0]
    trace = run_episode(swe_env, OraclePolicy(), seed=0, task_id=task.id)
    assert (trace.status, trace.reward) == ("completed", 1.0), trace.error or trace.verifier_log[-2000:]
    assert trace.reward_components == {"resolved": 1.0, "f2p_frac": 1.0, "p2p_frac": 1.0}
    assert trace.artefact["patch"] == task.patch and trace.harness.name == name
    assert trace.turns and all(t.request.api == declarations()[name].api for t in trace.turns)
    jsonschema.Draft202012Validator(load_schema()).validate(json.loads(trace.to_json()))


def test_an_empty_reply_through_each_external_harness_is_graded_unresolved(swe_env):
    trace = run_episode(swe_env, ScriptedPolicy([]), seed=0, task_id=TASKS[0].id)
    assert trace.reward == 0.0 and trace.reward_components["resolved"] == 0.0, trace.error
    assert trace.artefact["patch"] == "" and "RESOLVED_NO" in trace.verifier_log, trace.verifier_log[-2000:]


# --- the commands --------------------------------------------------------------------------------------------

def _cli(argv):
    import argparse

    from polar.envs.images_command import add_parser
    from polar.evaluation.admission import add_parser as add_admission

    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    add_parser(subparsers)
    add_admission(subparsers)
    args = parser.parse_args(argv)
    return args.fn(args)


OFFICIAL_IMAGES = pytest.mark.xdist_group("swe-official-images")
"""The engine's official-style image of an instance makes SWE-v0 use it: the tests that build one and the test that
counts polar's own images run on one worker, in this order."""

OFFICIAL_TWIN = replace(TASKS[0], instance_id=f"{TASKS[0].instance_id}-official-twin")
"""The first instance under a name no other test uses: an official-style image of it, made and removed by the tests
below, is never picked up (and then lost mid-episode) by SWE tests running beside them on other workers."""


@OFFICIAL_IMAGES
def test_polar_tasks_admit_and_images_build(tmp_path, capsys, bwrap, docker):
    suite = tmp_path / "two.jsonl"
    suite.write_text("".join(json.dumps(t.to_record()) + "\n" for t in one_per_project()[:2]))
    assert _cli(["tasks", "admit", str(suite), "--sandbox", "local", "-j", "2"]) == 0
    assert "2/2 task(s) of " in capsys.readouterr().out
    assert _cli(["images", "build", "--suite", str(suite)]) == 0
    assert "2 image(s) ready for 2 instance(s)" in capsys.readouterr().out


def official_style_image(docker: str, task, folder) -> str:
    """An image named and laid out as swebench's evaluation images are (the repository at /testbed), built here."""
    import subprocess

    environment = FAMILY.environment(task)
    (folder / "base.tar.gz").write_bytes(environment.base_archive(task))
    (folder / "Dockerfile").write_text(f"FROM {environment.build_image()}\nADD base.tar.gz /testbed/\n")
    tag = f"swebench/sweb.eval.x86_64.{task.instance_id.lower().replace('__', '_1776_')}:latest"
    subprocess.run([docker, "build", "-q", "--network", "none", "-t", tag, str(folder)], check=True,
                   capture_output=True, env={"DOCKER_BUILDKIT": "0", "PATH": "/usr/bin:/bin:/usr/local/bin"})
    return tag


@OFFICIAL_IMAGES
def test_official_images_are_pulled_from_a_registry_by_command_and_on_demand(docker, registry, tmp_path,
                                                                             monkeypatch, capsys):
    """A real registry on 127.0.0.1 serves an official-style image: `polar images pull` fetches it under its own
    name, and SWE-v0 pulls it on demand when $POLAR_IMAGE_REGISTRY names the registry."""
    import subprocess
    import warnings

    from polar.envs.swe.environment import REGISTRY_VARIABLE, official_image

    task = OFFICIAL_TWIN
    tag = official_style_image(docker, task, tmp_path)
    remote = f"{registry}/{tag}"
    try:
        subprocess.run([docker, "tag", tag, remote], check=True, capture_output=True)
        subprocess.run([docker, "push", remote], check=True, capture_output=True)
        subprocess.run([docker, "rmi", "-f", tag, remote], check=True, capture_output=True)
        assert official_image(task) is None
        suite = tmp_path / "one.jsonl"
        suite.write_text(json.dumps(task.to_record()) + "\n")
        assert _cli(["images", "pull", "--suite", str(suite), "--registry", registry]) == 0
        assert f"1 official image(s) ready for {suite}" in capsys.readouterr().out
        assert official_image(task) == tag
        grade = run(FAMILY.grade_patch(task, task.patch, make_backend("docker")))
        assert grade.components["resolved"] == 1.0, grade.log[-2000:]
        subprocess.run([docker, "rmi", "-f", tag], check=True, capture_output=True)
        monkeypatch.setenv(REGISTRY_VARIABLE, registry)
        assert official_image(task) == tag  # pulled on demand
        monkeypatch.setenv(REGISTRY_VARIABLE, "127.0.0.1:9")  # nothing listens there: no image, no crash
        subprocess.run([docker, "rmi", "-f", tag], check=True, capture_output=True)
        with pytest.warns(UserWarning, match="no official image could be pulled.*not retried in this run"):
            assert official_image(task) is None
        with warnings.catch_warnings():  # said once: the failed pull is not tried again in this run
            warnings.simplefilter("error")
            assert official_image(task) is None
        from polar.cli import main

        assert main(["images", "pull", "--suite", str(suite), "--registry", "127.0.0.1:9"]) == 2
        assert "no official image could be pulled" in capsys.readouterr().err
    finally:
        subprocess.run([docker, "rmi", "-f", tag, remote], capture_output=True)


@OFFICIAL_IMAGES
def test_an_official_style_image_in_the_engine_is_used_as_is(docker, tmp_path):
    """An image named as swebench names its evaluation images, with the repository at /testbed, is found locally
    (never pulled) and graded with the instance's own eval script; polar's environment is not involved."""
    import subprocess

    from polar.envs.swe.environment import official_image

    task = OFFICIAL_TWIN
    tag = official_style_image(docker, task, tmp_path)
    try:
        assert official_image(task) == tag and FAMILY.runtime(task, "docker").environment is None
        grade = run(FAMILY.grade_patch(task, task.patch, make_backend("docker")))
        assert grade.components["resolved"] == 1.0, grade.log[-2000:]
    finally:
        subprocess.run([docker, "rmi", "-f", tag], capture_output=True)
    assert official_image(task) is None


def test_the_verdict_plugin_names_the_graders_paths():
    """The plugin runs standalone in the grading sandbox, so it spells out the paths the family reads."""
    from polar.envs.swe.environment import WORKDIR
    from polar.envs.swe.family import PLUGIN_SOURCE

    assert f'"{WORKDIR}"' in PLUGIN_SOURCE
    assert 'os.environ.pop("POLAR_RECORD_FD", None)' in PLUGIN_SOURCE and "open(" not in PLUGIN_SOURCE.split(
        "def pytest_sessionfinish")[1], "the session's end is sent, never left in a file"
    compile(PLUGIN_SOURCE, "polar_verdict.py", "exec")


def _lines(*records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


END = ["end", {"forged": {}, "subfailed": {}}]


@pytest.mark.parametrize("stream, outcomes, ended, interfered", [
    (_lines(["test", "t.py::a", "PASSED"], ["test", "t.py::b", "FAILED"], END),
     {"t.py::a": "PASSED", "t.py::b": "FAILED"}, True, None),
    (_lines(["test", "t.py::a", "PASSED"], ["test", "t.py::a", "ERROR"], END),  # an error in teardown
     {"t.py::a": "ERROR"}, True, None),
    (_lines(["test", "t.py::a", "PASSED"]), {"t.py::a": "PASSED"}, False, None),  # pytest never finished
    (_lines(["test", "t.py::a", "FAILED"], END, ["test", "t.py::a", "PASSED"]), {"t.py::a": "FAILED"}, True,
     "after pytest's session ended"),
    (_lines(["test", "t.py::a", "FAILED"], END, END), {"t.py::a": "FAILED"}, True, "after pytest's session ended"),
    (_lines(["test", "t.py::a", "FAILED"], ["test", "t.py::a", "PASSED"], END), {"t.py::a": "FAILED"}, False,
     "second outcome"),
    (_lines(["test", "t.py::a", "PASSED"], ["test", "t.py::b", "FAILED"]) + "PASSED t.py::b\n" + _lines(END),
     {"t.py::a": "PASSED", "t.py::b": "FAILED"}, False, "never writes"),
    (_lines(["test", "t.py::a", "ERROR"], ["test", "t.py::a", "ERROR"], END), {"t.py::a": "ERROR"}, False,
     "second outcome"),
])
def test_the_record_is_what_the_recorder_sent_while_the_session_ran(stream, outcomes, ended, interfered):
    """polar reads the recorder's lines as they came over the eval command's output: a test's outcome once (an error
    in teardown may follow), then the end; a second outcome, a line the recorder never writes, or anything after the
    end, is interference."""
    from polar.envs.swe.family import read_record

    got, end, problem = read_record(stream)
    assert (got, end is not None) == (outcomes, ended)
    assert (problem is None) if interfered is None else (interfered in problem), problem


def _recorded(folder: Path, files: dict[str, str], *args: str):
    """pytest run on `files` with polar's recorder as the eval script loads it (the record on a pipe): its output, and
    the record as `read_record` reads it."""
    from polar.envs.swe.family import PLUGIN_SOURCE, read_record

    for name, text in {"polar_verdict.py": PLUGIN_SOURCE, **files}.items():
        (folder / name).write_text(text)
    read, write = os.pipe()
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "polar_verdict", "-p", "no:cacheprovider",
                          *args], cwd=folder, capture_output=True, text=True, pass_fds=(write,),
                         env={"PATH": os.environ["PATH"], "PYTHONPATH": str(folder), "POLAR_RECORD_FD": str(write),
                              "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    os.close(write)
    with os.fdopen(read) as f:
        return run, *read_record(f.read())


def test_a_test_with_a_failed_subtest_failed_once_in_the_record(tmp_path):
    """pytest >= 9 (and pytest-subtests) reports each subtest of a test under the test's own node id, then the test:
    the recorder sends one outcome per test (FAILED when a subtest failed), so an honest run is never read as a
    second outcome; the end names the test, whose own report in the log passed."""
    run, outcomes, end, interfered = _recorded(tmp_path, {"test_sub.py": (
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_many(self):\n        for i in range(3):\n"
        "            with self.subTest(i=i):\n                self.assertNotEqual(i, 1)\n\n"
        "    def test_ok(self):\n        for i in range(2):\n            with self.subTest(i=i):\n"
        "                self.assertTrue(True)\n")}, "test_sub.py")
    assert "subtests passed" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]  # pytest ran them as subtests
    assert interfered is None and outcomes == {"test_sub.py::T::test_many": "FAILED",
                                               "test_sub.py::T::test_ok": "PASSED"}, run.stdout[-2000:]
    assert end is not None and set(end["subfailed"]) == {"test_sub.py::T::test_many"}


def test_an_equality_is_believed_from_builtin_values_and_the_tests_own_code_only(tmp_path):
    """The recorder's equality check: an IntEnum, a str subclass and an always-equal helper defined in the test file
    itself pass as they are; an int subclass whose value is wrong and whose `__eq__` compares with the right one (no
    mirror catches it: it fails their values), and the same `__eq__` compiled under the test file's name (which the
    check once took as the tests' own), are forged."""
    test_file = tmp_path / "test_eq.py"
    lying = "def __eq__(self, other):\n    return other == 3\n"
    run, outcomes, end, _ = _recorded(tmp_path, {"lib.py": (
        f"import enum\n\n\nclass Color(enum.IntEnum):\n    RED = 1\n\n\nclass Name(str):\n    pass\n\n\n"
        f"class Lying(int):\n    {lying.replace(chr(10), chr(10) + '    ')}\n    __hash__ = int.__hash__\n\n\n"
        f"_scope = {{}}\nexec(compile({lying!r}, {str(test_file)!r}, 'exec'), _scope)\n\n\n"
        f"class Claiming(int):\n    __eq__, __hash__ = _scope['__eq__'], int.__hash__\n"), test_file.name: (
        "from lib import Claiming, Color, Lying, Name\n\n\nclass Anything:\n    def __eq__(self, other):\n"
        "        return True\n\n\ndef test_enum():\n    assert Color.RED == 1\n\n\ndef test_str():\n"
        "    assert Name('a') == 'a'\n\n\ndef test_own_helper():\n    assert 5 == Anything()\n\n\n"
        "def test_lying():\n    assert Lying(2) == 3\n\n\ndef test_claiming():\n    assert Claiming(2) == 3\n")},
        "-o", "enable_assertion_pass_hook=true", test_file.name)
    assert set(outcomes.values()) == {"PASSED"} and len(outcomes) == 5, run.stdout[-3000:] + run.stderr[-2000:]
    assert sorted(end["forged"]) == ["test_eq.py::test_claiming", "test_eq.py::test_lying"], end
