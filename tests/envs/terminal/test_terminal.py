"""polar/Terminal-v0: the Harbor format (reward files, malformed tasks), Dockerfile replay and builds, admission
of every bundled task in the local and the docker sandbox, episodes through gym.make with the built-in harness
and Claude Code."""

import asyncio
import base64
import json
import subprocess
from collections import Counter
from pathlib import Path

import gymnasium as gym
import jsonschema
import pytest
from gymnasium.utils.env_checker import check_env
from support.harbor_tasks import SUBMIT, admit, episode, make_task

from polar.envs.registration import register_envs
from polar.envs.sandbox import make_backend
from polar.envs.terminal.family import TerminalFamily, _local_plan, local_blocker
from polar.envs.terminal.tamper import sealed_chmods
from polar.errors import SandboxUnsupported, TaskFormatError, VerifierError
from polar.evaluation.admission import admit_suite
from polar.evaluation.runner import run_episode
from polar.policies import OraclePolicy, ScriptedPolicy
from polar.tasks.harbor import load_suite, load_task, read_reward
from polar.trace import load_schema

register_envs()
TASKS = load_suite()


# --- the format ----------------------------------------------------------------------------------------


def test_the_bundled_suite_covers_every_kind_of_task():
    categories = Counter(t.metadata["category"] for t in TASKS)
    assert len(TASKS) >= 20
    assert set(categories) == {"file-processing", "git", "build", "services", "processes", "debugging"}, categories
    assert all(t.workdir == "/app" and "solve.sh" in t.solution for t in TASKS)


@pytest.mark.parametrize("reward_json, reward_txt, expected, source", [
    (None, b"1\n", 1.0, "reward.txt"),
    (b'{"reward": 0.25, "accuracy": 0.9}', None, 0.25, "reward.json"),
    (b'{"score": 0.5}', None, 0.5, "reward.json"),  # a single value is the outcome, whatever its name
    (b'{"reward": 0.75}', b"0\n", 0.75, "reward.json"),  # both written: reward.json wins
    (b'{"reward": 1}', b"not a number", 1.0, "reward.json"),  # ... and reward.txt is not even parsed
    (None, b" 7 ", 1.0, "reward.txt"),  # clipped to [0, 1]
    (None, b"-2", 0.0, "reward.txt"),
])
def test_reward_files(reward_json, reward_txt, expected, source):
    reading = read_reward(reward_json, reward_txt)
    assert (reading.reward, reading.source) == (expected, source)
    if reward_json and reward_txt:
        assert "reward.json wins" in reading.note


@pytest.mark.parametrize("reward_json, reward_txt, problem", [
    (None, None, "wrote no reward"),
    (None, b"", "empty"),
    (None, b"passed", "one number"),
    (None, b"nan", "finite"),
    (b"{", None, "not valid JSON"),
    (b"[1]", None, "must be an object"),
    (b'{"a": 1, "b": 0}', None, "no `reward` key"),
    (b'{"reward": "1"}', None, "finite number"),
    (b'{"reward": true}', None, "finite number"),
])
def test_bad_reward_files_are_verifier_errors(reward_json, reward_txt, problem):
    with pytest.raises(VerifierError, match=problem):
        read_reward(reward_json, reward_txt)


def test_both_reward_files_in_an_episode_reward_json_wins(bwrap, tmp_path):
    test = "echo 0 > /logs/verifier/reward.txt\necho '{\"reward\": 0.75, \"lint\": 1}' > /logs/verifier/reward.json\n"
    trace = episode(make_task(tmp_path, test=test))
    assert (trace.status, trace.reward, trace.reward_components) == ("completed", 0.75, {"reward": 0.75})
    assert "reward.json wins" in trace.verifier_log and "lint=1" in trace.verifier_log
    jsonschema.validate(json.loads(trace.to_json()), load_schema())


@pytest.mark.parametrize("test, error", [
    ("echo 'ran 3 checks, all passed'\n", "wrote no reward"),
    ("echo 'ran 3 checks, all passed'\necho passed > /logs/verifier/reward.txt\n", "one number"),
    ("echo 'ran 3 checks'\nexit 1\n", "wrote no reward"),
])
def test_a_test_without_a_usable_reward_is_a_verifier_error_with_its_log(bwrap, tmp_path, test, error):
    trace = episode(make_task(tmp_path, test=test))
    assert (trace.status, trace.reward) == ("verifier_error", 0.0)
    assert error in trace.error and "task t" in trace.error
    assert "ran 3 checks" in trace.verifier_log
    jsonschema.validate(json.loads(trace.to_json()), load_schema())


def test_a_test_that_overruns_its_timeout_is_a_verifier_error(bwrap, tmp_path):
    task = make_task(tmp_path, test="echo started\nsleep 30\necho 1 > /logs/verifier/reward.txt\n",
                     toml="[verifier]\ntimeout_sec = 1\n")
    trace = episode(task)
    assert (trace.status, trace.reward) == ("verifier_error", 0.0)
    assert "timeout_sec" in trace.error and "started" in trace.verifier_log


def test_the_oracle_writes_binary_solution_files_and_runs_solve_sh_with_its_env(bwrap, tmp_path):
    solve = 'cmp /solution/blob.bin <(printf "\\x00\\xff\\x10") && [ "$MODE" = exact ] && touch /app/ok\n'
    task = make_task(tmp_path, solve=solve, toml='[solution]\nenv = { MODE = "exact" }\n',
                     test="[ -f /app/ok ] && r=1 || r=0\necho $r > /logs/verifier/reward.txt\n")
    (task / "solution" / "blob.bin").write_bytes(b"\x00\xff\x10")
    assert episode(task, OraclePolicy()).reward == 1.0
    assert episode(task).reward == 0.0


def test_seven_solution_files_fit_a_budget_of_eight_turns_and_admit(bwrap, tmp_path):
    """The oracle writes every solution file and runs solve.sh in one turn, so a turn budget that fits a real
    solution fits it (one turn per file once truncated such tasks at the default --max-turns 8)."""
    solve = 'for i in 1 2 3 4 5 6; do cat /solution/part$i.txt; done > /app/all.txt\n'
    task = make_task(tmp_path, solve=solve,
                     test='[ "$(cat /app/all.txt)" = "$(printf "%s\\n" 1 2 3 4 5 6)" ] && r=1 || r=0\n'
                          'echo $r > /logs/verifier/reward.txt\n')
    for i in range(1, 7):
        (task / "solution" / f"part{i}.txt").write_text(f"{i}\n")
    assert len(load_task(task).solution) == 7
    trace = episode(task, OraclePolicy())
    assert (trace.status, trace.reward, len(trace.turns)) == ("completed", 1.0, 2), trace.verifier_log[-1500:]
    assert admit(task, "local").admitted


@pytest.mark.parametrize("breakage, message", [
    (lambda t: (t / "instruction.md").unlink(), "missing instruction.md"),
    (lambda t: (t / "tests" / "test.sh").unlink(), "missing tests/test.sh"),
    (lambda t: (t / "environment" / "Dockerfile").unlink(), "missing environment/Dockerfile"),
    (lambda t: (t / "task.toml").unlink(), "missing task.toml"),
    (lambda t: (t / "task.toml").write_text("[verifier\n"), "not valid TOML"),
    (lambda t: (t / "task.toml").write_text("[verifier]\ntimeout_sec = 'soon'\n"), "timeout_sec"),
    (lambda t: (t / "task.toml").write_text("verifier = 3\n"), r"\[verifier\] must be a table"),
    (lambda t: (t / "environment" / "Dockerfile").write_text("WORKDIR /app\n"), "before the first FROM"),
])
def test_a_malformed_task_names_the_task_and_what_is_wrong(tmp_path, breakage, message):
    task = make_task(tmp_path, "broken-task")
    breakage(task)
    with pytest.raises(TaskFormatError, match=message) as caught:
        load_task(task)
    assert "broken-task" in str(caught.value)
    with pytest.raises(TaskFormatError, match="broken-task"):
        gym.make("polar/Terminal-v0", suite=str(tmp_path))


def test_a_prebuilt_image_replaces_the_dockerfile_and_a_task_without_solve_sh_has_no_reference(tmp_path):
    task = make_task(tmp_path, solve=None, toml='[environment]\ndocker_image = "example/prebuilt:1"\n')
    (task / "environment" / "Dockerfile").unlink()
    loaded = load_task(task)
    assert (loaded.dockerfile, loaded.docker_image, loaded.workdir) == (None, "example/prebuilt:1", "/app")
    assert "prebuilt image" in local_blocker(loaded)
    with pytest.raises(TaskFormatError, match="no solution/solve.sh"):
        loaded.reference_solution()


# --- the Dockerfile in the local sandbox ------------------------------------------------------------------

REPLAYED = """FROM polar/base:bookworm
ARG GREETING=hello
ENV TOOLS=/app/bin \\
    PATH="/app/bin:$PATH"
WORKDIR /app/src
WORKDIR ..
# installs nothing the host lacks, so it is skipped locally
RUN apt-get update && apt-get install -y --no-install-recommends git bash && rm -rf /var/lib/apt/lists/*
COPY bin/ bin/
COPY data/a.txt data/b.txt ./data/
COPY ["data/a.txt", "copied.txt"]
RUN echo "$GREETING from $(pwd)" > made.txt && chmod +x bin/hello
"""
REPLAY_TEST = """cd /app
ok=1
[ "$(cat made.txt)" = "hello from /app" ] || ok=0
[ "$(hello)" = "bin on PATH" ] || ok=0
[ "$TOOLS" = /app/bin ] || ok=0
[ "$(cat data/a.txt data/b.txt copied.txt)" = "$(printf 'a\\nb\\na')" ] || ok=0
[ -d src ] && [ -z "$GREETING" ] || ok=0
[ -f solved ] || ok=0
echo $ok > /logs/verifier/reward.txt
"""


def test_the_local_sandbox_replays_copy_run_env_arg_and_workdir(bwrap, tmp_path):
    files = {"bin/hello": "#!/bin/sh\necho bin on PATH\n", "data/a.txt": "a\n", "data/b.txt": "b\n"}
    task = load_task(make_task(tmp_path, dockerfile=REPLAYED, test=REPLAY_TEST, solve="touch solved\n", files=files))
    assert task.workdir == "/app" and local_blocker(task) is None
    assert admit(task.path, "local").admitted


@pytest.mark.parametrize("line, reason", [
    ("RUN apt-get update && apt-get install -y polar-no-such-pkg", "packages the host lacks: polar-no-such-pkg"),
    ("RUN pip install .", "installs or downloads software (`pip install .`)"),
    ("RUN pip install git+https://example.org/x.git", "installs or downloads software"),
    ("RUN pip install -r requirements.txt", "installs or downloads software (`pip install -r`)"),
    ("RUN curl -fsSL https://example.org/x.sh | sh", "installs or downloads software"),
    ("COPY run.sh /opt/run.sh", "writes /opt/run.sh, outside what the local sandbox can write"),
    ("WORKDIR /srv\nWORKDIR /app", "works in /srv"),
    ("COPY --from=builder /out /app/out", "copies from another build stage"),
    ("RUN apt-get install -y git && make", "mixes package installs with other commands"),
])
def test_what_the_host_cannot_provide_makes_a_task_docker_only(bwrap, tmp_path, line, reason):
    task = load_task(make_task(tmp_path, dockerfile=f"FROM polar/base:bookworm\nWORKDIR /app\n{line}\n",
                               files={"run.sh": "true\n"}))
    assert reason in local_blocker(task)
    result = admit(task.path, "local")
    assert not result.admitted and not result.reasons and reason in result.skipped
    trace = episode(task.path)  # an episode that says why it could not start, so `polar eval` goes on
    assert (trace.status, trace.reward) == ("sandbox_error", 0.0) and "docker sandbox only" in trace.error
    with pytest.raises(SandboxUnsupported, match="docker sandbox only"):
        TerminalFamily().sandbox_spec(task, backend="local")


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_what_a_dockerfile_pip_installs_by_name_the_local_sandbox_mounts(request, bwrap, tmp_path, sandbox):
    """The commonest third-party Harbor Dockerfile: a python base that pip-installs pytest and its ctrf plugin. The
    local sandbox cannot pip-install; the host installs the same requirements into a site folder it mounts."""
    if sandbox == "docker":
        request.getfixturevalue("docker")
    dockerfile = ("FROM python:3.13-slim-bookworm\nRUN pip install --no-cache-dir pytest==8.4.1 "
                  "pytest-json-ctrf==0.3.5\nWORKDIR /app\n")
    task = make_task(tmp_path, "pip-task", dockerfile=dockerfile, solve="echo 42 > /app/answer.txt\n",
                     test="pytest /tests/test_outputs.py -rA --ctrf /logs/verifier/ctrf.json && r=1 || r=0\n"
                          "echo $r > /logs/verifier/reward.txt\n")
    (task / "tests" / "test_outputs.py").write_text("def test_answer():\n    assert open('/app/answer.txt').read() == "
                                                    "'42\\n'\n")
    if sandbox == "local":
        (step,) = [s for s in _local_plan(load_task(task)) if s.requirements]
        assert step.requirements == ("pytest==8.4.1", "pytest-json-ctrf==0.3.5")
    solved, nothing = episode(task, OraclePolicy(), sandbox), episode(task, SUBMIT, sandbox)
    assert (solved.status, solved.reward) == ("completed", 1.0), (solved.error, solved.verifier_log[-2000:])
    assert (nothing.status, nothing.reward) == ("completed", 0.0), (nothing.error, nothing.verifier_log[-2000:])



def test_a_dockerfile_the_local_sandbox_cannot_read_rejects_its_task_not_the_suite(bwrap, tmp_path):
    """A Dockerfile that copies a file its build context lacks is that task's rejection, with the reason; the
    suite's other tasks are still admitted (it had stopped the whole local admission)."""
    make_task(tmp_path, "broken", dockerfile="FROM polar/base:bookworm\nWORKDIR /app\nCOPY missing/ /app/missing/\n")
    make_task(tmp_path, "fine", solve="touch /app/ok\n",
              test="[ -f /app/ok ] && r=1 || r=0\necho $r > /logs/verifier/reward.txt\n")
    _, admissions = asyncio.run(admit_suite(str(tmp_path), env_id="polar/Terminal-v0", sandbox="local", jobs=1))
    verdicts = {a.task_id: a for a in admissions}
    assert verdicts["fine"].admitted and not verdicts["broken"].admitted
    (reason,) = verdicts["broken"].reasons
    assert "its sandbox cannot be made" in reason and "missing/ is not in the build context" in reason, reason


def test_a_python_base_s_python_command_is_there_in_the_local_sandbox(bwrap, tmp_path):
    """A `python:*` image names python3 `python` (so does polar's docker stand-in); a host without one gets it in
    the local sandbox, last on PATH, so a Dockerfile's `RUN python ...` and a test's `python` run there too."""
    dockerfile = "FROM python:3.12-slim\nWORKDIR /app\nRUN python -c \"open('/app/seed.txt', 'w').write('7')\"\n"
    task = make_task(tmp_path, dockerfile=dockerfile, solve="echo 7 > /app/answer.txt\n",
                     test='[ "$(python /app/answer.txt 2>&1; cat /app/answer.txt)" = 7 ] && '
                          '[ "$(cat /app/seed.txt)" = 7 ] && r=1 || r=0\necho $r > /logs/verifier/reward.txt\n')
    solved = episode(task, OraclePolicy())
    assert (solved.status, solved.reward) == ("completed", 1.0), (solved.error, solved.verifier_log[-2000:])
    assert episode(task).reward == 0.0

def test_a_task_can_say_it_is_docker_only(bwrap, tmp_path):
    task = load_task(make_task(tmp_path, toml='[metadata.polar]\ndocker_only = "needs its own kernel module"\n'))
    assert admit(task.path, "local").skipped.endswith(
        "runs in the docker sandbox only: its task.toml marks it docker-only: needs its own kernel module")


def test_the_process_sandbox_is_refused(tmp_path):
    with pytest.warns(UserWarning):
        trace = episode(make_task(tmp_path), sandbox="process")
    assert trace.status == "sandbox_error" and "the unisolated `process` sandbox" in trace.error


# --- admission: solution → 1, no-op → 0, in both sandboxes -------------------------------------------


def admit_all(sandbox: str):
    env_id, admissions = asyncio.run(admit_suite("terminal-mini", sandbox=sandbox, jobs=4))
    assert env_id == "polar/Terminal-v0" and len(admissions) == len(TASKS)
    return admissions


@pytest.mark.slow  # a sweep over every bundled task: the fast subset runs one episode of each family
def test_admission_of_every_bundled_task_in_the_local_sandbox(bwrap):
    assert [(a.task_id, a.reasons, a.skipped) for a in admit_all("local") if not a.admitted] == []


def test_admission_of_every_bundled_task_in_the_docker_sandbox(docker):
    assert [(a.task_id, a.reasons, a.skipped) for a in admit_all("docker") if not a.admitted] == []


# --- the env -----------------------------------------------------------------------------------------


def test_check_env_passes_with_the_builtin_harness(bwrap):
    env = gym.make("polar/Terminal-v0", max_turns=4)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.slow  # a sweep over every bundled task (95 s of the fast subset's 12 minutes, loaded)
@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_the_oracle_solves_the_bundled_tasks_through_gym_make(request, bwrap, sandbox):
    """Every task in the local sandbox; in docker, whose admission above runs every task's solution, two."""
    if sandbox == "docker":
        request.getfixturevalue("docker")
    env = gym.make("polar/Terminal-v0", sandbox=sandbox, max_turns=8, time_limit_s=300)
    wanted = env.unwrapped.task_ids if sandbox == "local" else ["csv-group-totals", "serve-static-files"]
    try:
        traces = {tid: run_episode(env, OraclePolicy(), seed=0, task_id=tid) for tid in wanted}
    finally:
        env.close()
    assert {tid: (t.status, t.reward, t.verifier_log[-1500:]) for tid, t in traces.items() if t.reward != 1.0} == {}
    jsonschema.validate(json.loads(traces["csv-group-totals"].to_json()), load_schema())


def test_claude_code_runs_the_oracle_to_reward_1(bwrap, node):
    trace = episode("terminal-mini", OraclePolicy(), harness="claude-code", task_id="serve-static-files")
    assert (trace.status, trace.reward) == ("completed", 1.0), trace.error or trace.verifier_log[-2000:]
    assert trace.harness.name == "claude-code" and all(t.request.api == "anthropic-messages" for t in trace.turns)


# --- images in the docker sandbox --------------------------------------------------------------------------


def test_a_base_the_engine_lacks_is_replaced_and_images_are_cached_by_content(docker, tmp_path):
    import docker as sdk

    from polar.envs.sandbox.dockerfile.build import image_for_dockerfile, resolve_bases

    client = sdk.from_env()
    absent = "debian:polar-never-published"  # a tag no registry has, so it is replaced wherever the tests run
    dockerfile = f"FROM {absent} AS base\nWORKDIR /app\nCOPY x.txt .\nFROM base\n"
    task = make_task(tmp_path, dockerfile=dockerfile, files={"x.txt": "one\n"}, solve="touch solved\n",
                     test='if [ "$(cat /app/x.txt)" = one ] && [ -f solved ] && command -v python3 >/dev/null; '
                          'then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n')
    text, used = resolve_bases(client, dockerfile)
    assert used == {absent: "polar/base:bookworm"} and "FROM base\n" in text
    result = admit(task, "docker")
    assert result.admitted, result.reasons
    path = str(task / "environment" / "Dockerfile")
    first = image_for_dockerfile(client, path)
    assert image_for_dockerfile(client, path) == first
    (task / "environment" / "x.txt").write_text("two\n")
    second = image_for_dockerfile(client, path)
    assert second != first and second.startswith("polar-task/t:")
    subprocess.run([docker, "tag", "polar/base:bookworm", "polar-test/present:1"], check=True)
    try:
        present = "polar-test/present:1"
        assert resolve_bases(client, f"FROM {present}\n")[1] == {present: present}
    finally:
        subprocess.run([docker, "rmi", "polar-test/present:1"], capture_output=True)
        subprocess.run([docker, "rmi", first, second], capture_output=True)


def test_a_family_grades_in_the_agents_own_sandbox_with_pristine_tests(bwrap, tmp_path):
    """What the agent planted in /logs/verifier, and what it exported, never reaches the verdict; /tests it cannot
    write at all."""
    test = '[ "$SECRET" = "" ] && [ ! -e /tests/planted ] && echo 0.5 > /logs/verifier/reward.txt\n'
    task = load_task(make_task(tmp_path, test=test))
    family, backend = TerminalFamily(), make_backend("local")

    async def main():
        sandbox = await backend.start(family.sandbox_spec(task))
        try:
            state = (await family.setup(task, sandbox)).state
            planted = await sandbox.exec("touch /tests/planted; echo 1 > /logs/verifier/reward.txt && export SECRET=1 "
                                         "&& cd /")
            assert planted.exit_code == 0 and "Read-only file system" in planted.output, planted.output
            return await family.grade(task, sandbox, backend, state)
        finally:
            await sandbox.stop()

    grade = asyncio.run(main())
    assert grade.error is None and grade.components == {"reward": 0.5}, grade.log



@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_test_sh_s_own_chmod_of_tests_takes_effect_though_tests_is_read_only(request, bwrap, tmp_path, sandbox):
    """A test.sh that hides its answer key from the unprivileged user it runs the agent's program as (`chmod -R
    go-rwx /tests`, as third-party tasks do): through the read-only bind that chmod fails, so polar applies it from
    outside, and an honest solution is not failed by a key left world-readable. A chmod of anything else is not."""
    if sandbox == "docker":
        request.getfixturevalue("docker")
    test = ("chmod -R go-rwx /tests 2>/dev/null || true\nchmod 0600 /tests/key.txt 2>/dev/null\n"
            "chmod 0644 /tests/test.sh /app/answer.txt 2>/dev/null\n"
            "modes=$(stat -c %a /tests /tests/key.txt /tests/test.sh | tr '\\n' ' ')\necho \"modes: $modes\"\n"
            '[ "$modes" = "700 600 700 " ] && [ "$(cat /app/answer.txt)" = "$(cat /tests/key.txt)" ] && r=1 || r=0\n'
            "echo $r > /logs/verifier/reward.txt\n")
    task = make_task(tmp_path, test=test, solve="echo 42 > /app/answer.txt\n")
    (task / "tests" / "key.txt").write_text("42\n")
    solved = episode(task, OraclePolicy(), sandbox)
    assert (solved.status, solved.reward) == ("completed", 1.0), (solved.error, solved.verifier_log[-2000:])
    assert "modes: 700 600 700" in solved.verifier_log
    assert episode(task, SUBMIT, sandbox).reward == 0.0


def test_only_test_sh_s_chmods_of_the_sealed_dir_itself_are_applied():
    script = ("#!/bin/bash\nchmod -R go-rwx /tests 2>/dev/null || true\nchmod 700 /tests/a /app/b\n"
              "chmod 600 $TESTS/x /tests/*.py /tests/../etc/passwd\necho chmod 700 /tests\n"
              "cat <<EOF > /app/notes\nchmod 000 /tests/c\nEOF\nchmod 4755 /tests/x; chmod u+s /tests/x\n"
              "timeout 5 /bin/chmod u+x,go= /tests/run.sh &&"
              " chmod -- -w /tests/d\n")
    assert sealed_chmods(script, "/tests") == [["-R", "--", "go-rwx", "."], ["--", "u+x,go=", "run.sh"],
                                               ["--", "-w", "d"]]

# --- the artefact: what the agent changed, re-graded in a fresh sandbox -------------------------------------------

REGRADED = {"csv-group-totals": "/app/totals.csv", "git-revert-commit": "/app/repo/config.ini",
            "kill-runaway-process": "/app/runaway.pid"}
"""A task that writes a file in the workdir, one that commits in a git repository, one whose setup starts services
(the agent kills one and writes its pid down): what each oracle's artefact must hold."""
NO_CHANGES = {"changes": [], "deleted": [], "ended": []}


def test_a_docker_grade_reads_the_container_s_changes_twice_and_btrfs_answers(docker, monkeypatch):
    """A grade reads the agent's container's changes against its image twice, for the baseline and the final state;
    the sandboxes the two verifier runs replay the artefact in are never diffed: the tamper checks ran on the final
    state they hold, and nothing is measured from theirs. Where dockerd keeps its layers as btrfs subvolumes
    (`scripts/docker.sh`), btrfs answers (`layer_diff`) and the engine's diff, which walks the whole image (the btrfs
    driver has none of its own, about a second of the engine's CPU each), is never asked."""
    from docker.api.client import APIClient

    from polar.envs.sandbox import layer_diff

    walked: Counter[str] = Counter()
    read: Counter[Path] = Counter()
    engine_diff, kernel_diff = APIClient.diff, layer_diff.layer_changes

    def engine(self, container):
        walked[container] += 1
        return engine_diff(self, container)

    def kernel(parent, layer):
        read[layer] += 1
        return kernel_diff(parent, layer)

    monkeypatch.setattr(APIClient, "diff", engine)
    monkeypatch.setattr(layer_diff, "layer_changes", kernel)
    trace = episode("terminal-mini", OraclePolicy(), "docker", task_id="csv-group-totals")
    assert (trace.status, trace.reward) == ("completed", 1.0), (trace.error, trace.verifier_log[-1500:])
    on_btrfs = make_backend("docker").btrfs_root is not None
    assert "canary:" in trace.verifier_log and list((read if on_btrfs else walked).values()) == [2], (read, walked)
    assert not walked or not on_btrfs, walked


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_an_episode_s_artefact_re_grades_to_its_reward_in_a_fresh_sandbox(request, bwrap, sandbox):
    if sandbox == "docker":
        request.getfixturevalue("docker")
    family, backend = TerminalFamily(), make_backend(sandbox)
    env = gym.make("polar/Terminal-v0", sandbox=sandbox, max_turns=8, time_limit_s=300)
    try:
        traces = {(tid, policy.name): run_episode(env, policy, seed=0, task_id=tid)
                  for tid in REGRADED for policy in (OraclePolicy(), SUBMIT)}
    finally:
        env.close()
    tasks = {t.id: t for t in TASKS}

    async def regrade_all():
        return await asyncio.gather(*(family.regrade(tasks[tid], json.loads(json.dumps(t.artefact)), backend)
                                      for (tid, _), t in traces.items()))

    for ((tid, policy), trace), grade in zip(traces.items(), asyncio.run(regrade_all()), strict=True):
        solved = policy == "oracle"
        assert trace.reward == (1.0 if solved else 0.0), (tid, policy, trace.status, trace.verifier_log[-1500:])
        assert (grade.reward(family.reward), grade.components) == (trace.reward, trace.reward_components), \
            (tid, policy, grade.error, grade.log[-1500:])
        paths = [c["path"] for c in trace.artefact["changes"]]
        assert (REGRADED[tid] in paths) == solved and not any(p.startswith(("/tests", "/logs")) for p in paths)
        if not solved:
            assert trace.artefact == NO_CHANGES, (tid, trace.artefact)
    ended = traces[("kill-runaway-process", "oracle")].artefact["ended"]
    assert [e["args"][-1] for e in ended] == ["reports"], ended


@pytest.mark.parametrize("artefact, problem", [
    ([], "got list"),
    ({"changes": []}, "got the keys"),
    ({**NO_CHANGES, "changes": [{"path": "app/x", "type": "dir", "mode": 0o755}]}, "changes.0..path 'app/x' is not"),
    ({**NO_CHANGES, "changes": [{"path": "/app/../etc/x", "type": "dir", "mode": 0o755}]}, "no `..`"),
    ({**NO_CHANGES, "changes": [{"path": "/app/x\0", "type": "dir", "mode": 0o755}]}, "no NUL"),
    ({**NO_CHANGES, "deleted": ["/"]}, r"deleted\[0\] '/' is not"),
    ({**NO_CHANGES, "changes": [{"path": "/app/x", "type": "fifo"}]}, "must be file, dir or symlink"),
    ({**NO_CHANGES, "changes": [{"path": "/app/x", "type": "dir", "mode": 0o10000}]}, "from 0 to 0o7777"),
    ({**NO_CHANGES, "changes": [{"path": "/app/x", "type": "file", "mode": 0o644, "mtime": 0, "content": "%%"}]},
     "must be base64"),
    ({**NO_CHANGES, "changes": [{"path": "/app/x", "type": "symlink"}]}, "a symlink has path, type and target"),
    ({**NO_CHANGES, "changes": [{"path": "/app/x", "type": "dir", "mode": 0o755}] * 2}, "listed twice"),
    ({**NO_CHANGES, "ended": [{"pid": "1", "args": []}]}, r"ended\[0\] must be"),
    ({**NO_CHANGES, "changes": [{"path": "/app/x", "type": "file", "mode": 0o644, "mtime": 0,
                                 "content": "A" * (22 << 20)}]}, "past the 16 MiB"),
    ({"too_large": 3}, "too_large must be"),
])
def test_a_malformed_artefact_is_refused_naming_what_is_wrong(bwrap, artefact, problem):
    task = next(t for t in TASKS if t.id == "csv-group-totals")
    with pytest.raises(ValueError, match=problem.replace(".0.", r"\[0\]")):
        asyncio.run(TerminalFamily().regrade(task, artefact, make_backend("local")))


def test_an_artefact_is_applied_inside_the_sandbox_and_one_it_cannot_hold_is_refused(bwrap):
    """The local sandbox's system is the host's, read-only: an artefact that writes there was never an agent's."""
    task = next(t for t in TASKS if t.id == "csv-group-totals")
    python = {"path": "/usr/bin/python3", "type": "file", "mode": 0o755, "mtime": 0,
              "content": base64.b64encode(b"#!/bin/sh\nexit 0\n").decode()}
    before = Path("/usr/bin/python3").read_bytes()
    with pytest.raises(ValueError, match="cannot be applied in a fresh sandbox"):
        asyncio.run(TerminalFamily().regrade(task, {**NO_CHANGES, "changes": [python]}, make_backend("local")))
    assert Path("/usr/bin/python3").read_bytes() == before


def test_an_episode_past_the_content_cap_is_recorded_as_too_large_and_cannot_be_re_graded(bwrap):
    from polar.envs.terminal.changes import CONTENT_CAP

    task = next(t for t in TASKS if t.id == "csv-group-totals")
    family, backend = TerminalFamily(), make_backend("local")

    async def main():
        sandbox = await backend.start(family.sandbox_spec(task))
        try:
            state = (await family.setup(task, sandbox)).state
            await sandbox.mark_processes()
            await sandbox.exec(f"head -c {CONTENT_CAP + 1} /dev/zero > /app/big")
            await sandbox.reset_processes()
            return await family.grade(task, sandbox, backend, state)
        finally:
            await sandbox.stop()

    grade = asyncio.run(main())
    assert grade.artefact == {"too_large": {"bytes": CONTENT_CAP + 1, "cap": CONTENT_CAP}}
    assert "cannot be re-graded" in grade.log and grade.components == {"reward": 0.0}
    again = asyncio.run(family.regrade(task, grade.artefact, backend))
    assert again.reward(family.reward) == 0.0 and "cannot be re-graded" in again.error


def test_tests_that_reach_for_the_network_are_a_verifier_error_not_a_zero(bwrap, tmp_path):
    """Harbor's tests often fetch uv or pytest first; offline that fails, and the 0 they then write is no verdict."""
    fetch = "python3 -c \"import urllib.request; urllib.request.urlopen('http://polar-offline.invalid/uv.sh')\"\n"
    trace = episode(make_task(tmp_path, test=f"{fetch}echo 0 > /logs/verifier/reward.txt\n"))
    assert (trace.status, trace.reward) == ("verifier_error", 0.0), trace.verifier_log[-2000:]
    assert "reached for the network" in trace.error and "its Dockerfile" in trace.error
    # a plain wrong answer stays a completed 0
    trace = episode(make_task(tmp_path / "plain", test="echo 0 > /logs/verifier/reward.txt\n"))
    assert (trace.status, trace.reward) == ("completed", 0.0)


def test_network_errors_the_agents_program_prints_are_its_own_zero(bwrap, tmp_path):
    """A test.sh that runs the agent's program and reaches for no network itself: whatever that program prints
    ("Could not resolve host" included), its 0 is a completed 0, never a `verifier_error` the agent chose."""
    solve = "printf 'print(\"curl: (6) Could not resolve host: example.com\")\\n' > /app/answer.py\n"
    task = make_task(tmp_path, test="python3 /app/answer.py\necho 0 > /logs/verifier/reward.txt\n", solve=solve)
    trace = episode(task, OraclePolicy())
    assert "Could not resolve host" in trace.verifier_log
    assert (trace.status, trace.reward) == ("completed", 0.0), (trace.error, trace.verifier_log[-2000:])


def test_a_refused_connection_to_a_local_service_is_the_agent_s_zero(bwrap, tmp_path):
    """A test.sh that fetches (so network failures would count) and finds the service the agent should have left
    running is down: `Could not connect to Redis at 127.0.0.1` is a local failure, a completed 0."""
    test = ("curl -s http://127.0.0.1:9/ || echo 'Could not connect to Redis at 127.0.0.1:6379: Connection refused'\n"
            "echo 0 > /logs/verifier/reward.txt\n")
    trace = episode(make_task(tmp_path, test=test))
    assert "Could not connect to Redis" in trace.verifier_log
    assert (trace.status, trace.reward) == ("completed", 0.0), (trace.error, trace.verifier_log[-2000:])


def test_a_truncated_episode_whose_tests_cannot_verify_is_a_verifier_error(bwrap, tmp_path):
    """Cut short by max_turns, the tests still run; a verifier that breaks is not hidden behind the truncation."""
    env = gym.make("polar/Terminal-v0", suite=str(make_task(tmp_path, test="exit 3\n")), sandbox="local", max_turns=1,
                   time_limit_s=120)
    try:
        trace = run_episode(env, ScriptedPolicy([{"content": "thinking"}] * 3), seed=0)
    finally:
        env.close()
    assert (trace.status, trace.reward) == ("verifier_error", 0.0)
    assert "the episode itself ended truncated: reached max_turns=1" in trace.error
