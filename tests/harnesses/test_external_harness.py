"""The external-harness machinery (gateway session, in-sandbox bridge, launch, exit) with a tiny agent.

The agent is a 30-line Python program that speaks OpenAI Chat to the gateway from inside the sandbox, the
same way the real CLIs do; it exercises what a real CLI cannot be made to do on demand (exit by itself, never call
the model, give up on a slow call with its own client timeout). Every real adapter is killed mid-call and given a
policy slower than its time limit in test_harness_failures.py.
"""

import json
import time

import gymnasium as gym
import pytest

from polar.envs.registration import register_envs
from polar.harnesses.external import GATEWAY_DIR, ExternalHarness
from polar.harnesses.gateway.server import shared_gateway
from polar.protocols import Mount
from polar.types import ModelReply, ToolCall

register_envs()

AGENT = r'''
import json, os, subprocess, sys, time, urllib.request
base, mode = os.environ["AGENT_BASE_URL"], os.environ["AGENT_MODE"]
if mode == "silent":
    time.sleep(1000)
messages = [{"role": "user", "content": os.environ["POLAR_INSTRUCTION"]}]
tools = [{"type": "function", "function": {"name": "shell", "description": "run a command",
          "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}}]
for turn in range(50):
    body = json.dumps({"model": "polar", "messages": messages, "tools": tools}).encode()
    request = urllib.request.Request(base + "/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    reply = json.load(urllib.request.urlopen(request, timeout=float(os.environ["AGENT_TIMEOUT"])))
    message = reply["choices"][0]["message"]
    messages.append(message)
    if mode == "crash":
        sys.exit(3)
    if not message.get("tool_calls"):
        print("FINAL:", message.get("content"))
        break
    for call in message["tool_calls"]:
        cmd = json.loads(call["function"]["arguments"])["cmd"]
        done = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": done.stdout + done.stderr})
'''


class TinyAgent(ExternalHarness):
    name, version, bin = "tiny-agent", "1", ""

    def __init__(self, mode="normal", client_timeout=600.0):
        self.mode, self.client_timeout = mode, client_timeout

    def sandbox_mounts(self):
        return (Mount(shared_gateway().socket_dir, GATEWAY_DIR),)

    def ensure_installed(self):
        return self.install_dir  # nothing to install: the agent is a file `files` writes

    def files(self, base_url):
        return {"/tmp/polar/agent.py": AGENT}

    def env(self, base_url):
        return {"AGENT_BASE_URL": base_url, "AGENT_MODE": self.mode, "AGENT_TIMEOUT": str(self.client_timeout)}

    def command(self, exe):
        return "python3 /tmp/polar/agent.py"


def shell(cmd):
    return ModelReply(tool_calls=[ToolCall(name="shell", arguments=json.dumps({"cmd": cmd}))])


def make(bwrap, **kwargs):
    return gym.make("polar/Code-v0", harness=TinyAgent(**kwargs), max_turns=10, time_limit_s=60)


def test_an_external_agent_solves_a_task_through_the_gateway(bwrap):
    env = make(bwrap)
    try:
        obs, info = env.reset(seed=0)
        task = info["task"]
        assert obs.api == "openai-chat" and obs.tool_names() == ["shell"] and "submit" in obs.messages[0]["content"]
        (name, text), = task.solution.items()
        obs, *_ = env.step(shell(f"cat > {name} <<'EOF'\n{text}EOF\nls"))
        assert obs.messages[-1]["role"] == "tool" and name in obs.messages[-1]["content"]
        obs, reward, terminated, truncated, info = env.step("done")
        assert (reward, terminated, truncated, info["status"]) == (1.0, True, False, "completed")
        trace = info["trace"]
        assert [t.request.api for t in trace.turns] == ["openai-chat", "openai-chat"]
        assert trace.harness.name == "tiny-agent"
    finally:
        env.close()


def test_a_crashing_harness_ends_with_harness_error_and_the_env_is_reusable(bwrap):
    env = make(bwrap, mode="crash")
    try:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step("hello")
        assert terminated and info["status"] == "harness_error" and "code 3" in info["trace"].error
        assert len(info["trace"].turns) == 1
        obs, info = env.reset(seed=1)
        assert obs.messages and "status" not in info
    finally:
        env.close()


def test_a_harness_that_never_calls_the_model_is_truncated_at_the_deadline(bwrap):
    env = gym.make("polar/Code-v0", harness=TinyAgent(mode="silent"), time_limit_s=2)
    try:
        started = time.monotonic()
        obs, info = env.reset(seed=0)
        assert obs.messages == [] and info["status"] == "timeout" and time.monotonic() - started < 10
        _, reward, terminated, truncated, info = env.step("")
        assert truncated and not terminated and info["status"] == "timeout" and reward == 0.0
    finally:
        env.close()


@pytest.mark.timeout(60)
def test_a_policy_slower_than_the_harness_timeout_ends_cleanly(bwrap):
    env = make(bwrap, client_timeout=1.0)
    try:
        obs, _ = env.reset(seed=0)
        time.sleep(2.0)  # the agent's HTTP client gives up on this call and exits with an error
        _, reward, terminated, truncated, info = env.step("too late")
        assert terminated and info["status"] == "harness_error" and reward == 0.0
    finally:
        env.close()
