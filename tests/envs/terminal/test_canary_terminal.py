"""The two-run canary verification of polar/Terminal-v0 (`envs/terminal/canary.py`): the task's own tests run twice
on the final state, once with a must-fail test added; a reward that does not drop with it is `tampered`.

The attack it closes: agent code that the tests run leaves a detached process that rewrites the reward file after
test.sh wrote its own, which no rule about what the agent left can tell from honest work.
"""

import json
import shlex

import pytest
from support.harbor_tasks import CALLS_EVERY_TEST, admit, episode, make_task

from polar.envs.terminal.canary import Canary, place
from polar.policies import ScriptedPolicy
from polar.types import ModelReply, ToolCall

TEST_SH = ("mkdir -p /logs/verifier\nif python3 /tests/test_outputs.py; then echo 1 > /logs/verifier/reward.txt; "
           "else echo 0 > /logs/verifier/reward.txt; fi\n")
"""terminal-mini's shape: test.sh runs a check script whose main block calls every `test_*` it defines."""
CHECKS = ("import subprocess\n\n\ndef test_answer():\n"
          "    out = subprocess.run(['python3', '/app/answer.py'], capture_output=True, text=True).stdout\n"
          "    assert out.strip() == '42', out\n" + CALLS_EVERY_TEST)
LOOP = ("import time\nwhile True:\n    try:\n        with open('/logs/verifier/reward.txt', 'w') as f:\n"
        "            f.write('1')\n    except OSError:\n        pass\n    time.sleep(0.001)\n")
REWRITER = (f"import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', {LOOP!r}], stdin=subprocess.DEVNULL, "
            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)\nprint(41)\n")
"""The agent's program, run by the tests: it answers wrong and leaves a loop that keeps writing reward 1."""


def task_with(tmp_path, answer: str, name: str = "runs-agent-code"):
    """A task whose tests run the agent's /app/answer.py, with the agent's `answer` put there by its policy."""
    task = make_task(tmp_path, name, test=TEST_SH, solve="echo 'print(42)' > /app/answer.py\n",
                     toml="[verifier]\ntimeout_sec = 60.0\n")
    (task / "tests" / "test_outputs.py").write_text(CHECKS)
    write = f"printf %s {shlex.quote(answer)} > /app/answer.py"
    return task, ScriptedPolicy([call("bash", command=write), call("submit")])


def call(tool: str, **arguments: str) -> ModelReply:
    return ModelReply(tool_calls=[ToolCall(name=tool, arguments=json.dumps(arguments))])


def played(tmp_path, sandbox: str, answer: str):
    task, policy = task_with(tmp_path, answer)
    return episode(task, policy, sandbox=sandbox)


def test_a_canary_is_placed_where_the_tests_run_it_and_nowhere_else():
    tests = {"test.sh": TEST_SH.encode(), "test_outputs.py": CHECKS.encode()}
    canary = place(tests, "/app")
    assert isinstance(canary, Canary) and canary.tests["test.sh"] == tests["test.sh"]
    added = canary.tests["test_outputs.py"].decode()
    assert added.index(canary.placed[0].split("::")[1]) < added.index("if __name__"), added
    assert "is not" not in place({"test.sh": b"python3 /tests/check.py\n", "check.py": b"print(1)\n"}, "/app")
    selected = {"test.sh": b"pytest /tests/test_outputs.py -k answer\n", "test_outputs.py": CHECKS.encode()}
    assert "selects tests" in place(selected, "/app")
    two = place({"test.sh": b"python -m pytest /tests\n", "test_a.py": b"def test_a():\n    pass\n",
                 "test_b.py": b"import unittest\n"}, "/srv")
    assert isinstance(two, Canary) and len(two.placed) == 2 and "'/srv/" in two.tests["test_a.py"].decode()


CAUGHT = ("the canary run paid 1", "changed after tests/test.sh exited")
"""What catches the rewriter depends on where its loop is when polar reads: the canary run paid as much as (or, when
the plain run's reward file was left empty mid-rewrite, the most there is), or a reward file that changed between
test.sh's exit and the sweep of what it left running. Either is `tampered`, reward 0."""


def test_a_detached_process_that_rewrites_the_reward_is_tampering_in_the_local_sandbox(bwrap, tmp_path):
    trace = played(tmp_path, "local", REWRITER)
    assert (trace.status, trace.reward) == ("tampered", 0.0), (trace.error, trace.verifier_log[-3000:])
    assert any(reason in trace.error for reason in CAUGHT), trace.error


STEADY = (f"import os, subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {LOOP!r}], "
          "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)\n"
          "while not os.path.exists('/logs/verifier/reward.txt'):\n    time.sleep(0.001)\nprint(41)\n")
"""The rewriter made sure to win its race: the agent's program returns only once its loop is writing."""


@pytest.mark.parametrize("sandbox", ["local", "docker"])
def test_a_reward_written_again_with_the_same_bytes_after_test_sh_exited_is_tampering(request, bwrap, tmp_path,
                                                                                       sandbox):
    """Where no canary can be placed (a shell test), only the reads around the sweep stand between a loop that keeps
    writing 1 and the reward: its bytes are the same at test.sh's exit and after the sweep, its change time is not."""
    if sandbox == "docker":
        request.getfixturevalue("docker")
    shell_test = ('mkdir -p /logs/verifier\nif [ "$(python3 /app/answer.py)" = 42 ]; then echo 1 > '
                  "/logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n")
    task = make_task(tmp_path, "shell-test", test=shell_test, solve="echo 'print(42)' > /app/answer.py\n",
                     toml="[verifier]\ntimeout_sec = 60.0\n")
    policy = ScriptedPolicy([call("bash", command=f"printf %s {shlex.quote(STEADY)} > /app/answer.py"),
                             call("submit")])
    trace = episode(task, policy, sandbox=sandbox)
    assert "unverified by a canary" in trace.verifier_log, trace.verifier_log[-3000:]
    assert (trace.status, trace.reward) == ("tampered", 0.0), (trace.error, trace.verifier_log[-3000:])
    assert "changed after tests/test.sh exited" in trace.error, trace.error


def test_an_honest_answer_still_scores_1_with_the_canary_and_a_wrong_one_0(bwrap, tmp_path):
    right = played(tmp_path / "right", "local", "print(42)\n")
    assert (right.status, right.reward) == ("completed", 1.0), (right.error, right.verifier_log[-3000:])
    assert "the plain run paid 1, the canary run 0" in right.verifier_log, right.verifier_log[-3000:]
    wrong = played(tmp_path / "wrong", "local", "print(41)\n")
    assert (wrong.status, wrong.reward) == ("completed", 0.0), (wrong.error, wrong.verifier_log[-3000:])


def test_an_episode_that_changed_nothing_is_graded_by_one_run(bwrap, tmp_path):
    """A fresh sandbox of an empty artefact holds nothing of the agent's: the tests' verdict there is their own, and a
    canary run could only repeat it."""
    task, _ = task_with(tmp_path, "print(42)\n")
    nothing = episode(task)
    assert (nothing.status, nothing.reward) == ("completed", 0.0), (nothing.error, nothing.verifier_log[-3000:])
    assert "canary: none needed" in nothing.verifier_log, nothing.verifier_log[-3000:]
    assert "the canary run" not in nothing.verifier_log, nothing.verifier_log[-3000:]


def test_where_no_canary_can_be_placed_the_grade_and_the_admission_say_so(bwrap, tmp_path):
    task = make_task(tmp_path, "shell-only", solve="touch /app/done\n",
                     test="[ -e /app/done ] && r=1 || r=0; echo $r > /logs/verifier/reward.txt\n")
    trace = episode(task)
    assert (trace.status, trace.reward) == ("completed", 0.0), (trace.error, trace.verifier_log[-3000:])
    assert "unverified by a canary: none could be placed" in trace.verifier_log, trace.verifier_log[-3000:]
    admission = admit(task, "local")
    assert admission.admitted and all("unverified by a canary" in o for o in admission.outcomes.values()), admission


@pytest.mark.slow
def test_a_detached_process_that_rewrites_the_reward_is_tampering_in_docker(docker, tmp_path):
    trace = played(tmp_path, "docker", REWRITER)
    assert (trace.status, trace.reward) == ("tampered", 0.0), (trace.error, trace.verifier_log[-3000:])
    assert any(reason in trace.error for reason in CAUGHT), trace.error


@pytest.mark.slow
def test_an_honest_answer_still_scores_1_in_docker(docker, tmp_path):
    trace = played(tmp_path, "docker", "print(42)\n")
    assert (trace.status, trace.reward) == ("completed", 1.0), (trace.error, trace.verifier_log[-3000:])
