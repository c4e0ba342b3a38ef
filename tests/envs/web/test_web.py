"""polar/Web-v0 through gym.make: a real Chromium per episode, the bundled web-mini suite, graded from app state."""

from __future__ import annotations

import json
import os
import time

import gymnasium as gym
import jsonschema
import pytest
from support.browsers import browsers_of

from polar.envs.registration import register_envs
from polar.errors import HarnessError
from polar.evaluation.runner import run_episode
from polar.harnesses import declarations
from polar.harnesses.external import mcp_harnesses
from polar.harnesses.matrix import proofs
from polar.policies import OraclePolicy, ScriptedPolicy
from polar.tasks.web import load_suite
from polar.trace import load_schema
from polar.types import ModelReply, ToolCall

register_envs()
TASK_IDS = [task.id for task in load_suite("web-mini")]
BROWSER_TOOLS = ("snapshot", "goto", "click", "type", "select", "back", "screenshot")
@pytest.fixture(scope="module")
def env(chromium, bwrap):
    env = gym.make("polar/Web-v0", max_turns=40, time_limit_s=300)
    yield env
    env.close()


@pytest.mark.slow  # a sweep over every bundled task: the fast subset runs one episode of each family
def test_the_oracle_scores_1_on_every_bundled_task(env):
    failures = []
    for task_id in TASK_IDS:
        trace = run_episode(env, OraclePolicy(), seed=0, task_id=task_id)
        if (trace.status, trace.reward) != ("completed", 1.0):
            failures.append((task_id, trace.status, trace.reward, trace.error, trace.verifier_log[-600:]))
    assert not failures, failures
    assert len(TASK_IDS) >= 20
    jsonschema.validate(json.loads(trace.to_json()), load_schema())
    assert trace.artefact["state"] and trace.turns[0].request.tool_names()[:2] == ["snapshot", "goto"]


def test_doing_nothing_scores_0_and_the_page_is_what_the_agent_sees(env):
    obs, _ = env.reset(seed=0, options={"task_id": TASK_IDS[0]})
    assert "submit" in obs.tool_names() and "bash" not in obs.tool_names()  # the browser replaces the shell
    obs, *_ = env.step(ModelReply(tool_calls=[ToolCall(id="c1", name="snapshot")]))
    assert "[ref=" in obs.messages[-1]["content"]
    _, reward, terminated, _, info = env.step(ModelReply(tool_calls=[ToolCall(id="c2", name="submit")]))
    assert terminated and info["status"] == "completed"
    assert reward == 0.0 and info["reward_components"] == {"success": 0.0, "checks_frac": 0.0}


@pytest.mark.parametrize("when", ["while the browser starts", "after a step"])
def test_closing_mid_episode_stops_the_browser(when, chromium, bwrap):
    env = gym.make("polar/Web-v0")
    env.reset(seed=1)
    if when == "after a step":
        env.step(ModelReply(tool_calls=[ToolCall(id="c1", name="snapshot")]))
        assert browsers_of(os.getpid())
    env.close()
    deadline = time.monotonic() + 10
    while browsers_of(os.getpid()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert browsers_of(os.getpid()) == {}


def test_a_harness_without_mcp_is_refused_with_the_reason(chromium, bwrap, node):
    env = gym.make("polar/Web-v0", harness="pi")
    try:
        with pytest.raises(HarnessError, match=f"pi has no MCP support.*: {', '.join(mcp_harnesses())}$"):
            env.reset(seed=0)
    finally:
        env.close()


@pytest.mark.parametrize("harness, sandbox", [  # the fast subset runs the first; the others are a battery
    pytest.param(*p, id="-".join(p), marks=pytest.mark.slow if i else ()) for i, p in enumerate(proofs("Web-v0"))])
def test_a_cli_harness_reaches_the_browser_over_mcp(harness, sandbox, chromium, bwrap, node):
    """The oracle through the CLI's own MCP client scores 1, "done" 0; the browser tools are offered under the
    names the adapter declares (the MCP server is registered as `polar`)."""
    env = gym.make("polar/Web-v0", harness=harness, sandbox=sandbox, max_turns=40, time_limit_s=300)
    try:
        trace = run_episode(env, OraclePolicy(), seed=0, task_id=TASK_IDS[0])
        assert (trace.status, trace.reward) == ("completed", 1.0), trace.error or trace.verifier_log
        offered = trace.turns[0].request.tool_names()
        assert all(declarations()[harness].env_tool(tool) in offered for tool in BROWSER_TOOLS), offered
        done = run_episode(env, ScriptedPolicy(["done"]), seed=0, task_id=TASK_IDS[0])
        assert (done.status, done.reward) == ("completed", 0.0), done.error
    finally:
        env.close()


def test_no_chromium_or_a_broken_one_is_a_clear_sandbox_error(monkeypatch, chromium, bwrap):
    import polar.envs.web.browser

    env = gym.make("polar/Web-v0", disable_env_checker=True)  # its passive checker trips on an empty request
    try:
        monkeypatch.setattr(polar.envs.web.browser, "CHROMIUM", "/nonexistent/chromium")
        env.reset(seed=0)  # an episode that could not start, which the first step ends with the reason
        _, reward, terminated, _, info = env.step("submit")
        assert terminated and info["status"] == "sandbox_error" and reward == 0.0
        assert "no Chromium at /nonexistent/chromium" in info["trace"].error
        monkeypatch.setattr(polar.envs.web.browser, "CHROMIUM", "/bin/false")  # starts, then dies at once
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(ModelReply(tool_calls=[ToolCall(id="c1", name="snapshot")]))
        assert terminated and info["status"] == "sandbox_error" and reward == 0.0
        assert "the browser did not start" in info["trace"].error
    finally:
        env.close()
