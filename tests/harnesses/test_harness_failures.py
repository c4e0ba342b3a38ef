"""The failure modes against every external harness, with its real binary, in the local sandbox: its process killed
while it waits on a model call ends the episode `harness_error` naming the exit; a policy that answers after the time
limit ends it `timeout` with reward 0; either way nothing of the episode is left running and the env's next reset works.

A real CLI that never calls the model cannot be made on demand, so the hang is the slow policy's case here (the CLI
waits on a model call that does not come back in time); tests/harnesses/test_external_harness.py runs a silent agent.
"""

import signal
import time

import gymnasium as gym
import pytest

from polar.envs.registration import register_envs
from polar.envs.sandbox.shell import kill_quietly, proc_stat
from polar.harnesses import EXTERNAL, harness_class
from polar.harnesses.external import STATE
from polar.harnesses.gateway.server import shared_gateway
from polar.protocols import Sandbox

register_envs()
LIMIT_S = 120.0
"""The first episode's time limit: above every CLI's start-up to its first model call, however loaded the machine."""
TASK = {"task_id": "run_length_encoding"}


def recording(name: str):
    """The registered adapter, keeping the sandbox its last launch ran in (the test kills a process in it)."""

    class Recording(harness_class(name)):
        sandbox: Sandbox | None = None

        async def launch(self, task, sandbox, tools=None):
            self.sandbox = sandbox
            return await super().launch(task, sandbox, tools)

    return Recording()


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def running(sandbox: Sandbox) -> dict[int, str]:
    """The sandbox's live processes, with their command lines (a zombie waits only on the host's init to reap it)."""
    live = {}
    for pid in sandbox.processes():
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                    live[pid] = cmdline(pid)
        except OSError:
            pass
    return live


def launched(sandbox: Sandbox) -> list[int]:
    """The CLI's own processes: the children of the shell external.py launches it from, which records its exit."""
    pids = running(sandbox)
    launcher = [pid for pid, line in pids.items() if f"echo $? > {STATE}/harness.exit" in line]
    assert len(launcher) == 1, pids
    return [pid for pid in pids if (proc_stat(pid) or (0, 0))[0] == launcher[0]]


def open_sessions(before: set[str]) -> list[str]:
    """The gateway sessions opened since `before` that are still open (a closed one stays, answering 410)."""
    return [sid for sid, session in shared_gateway().sessions.items() if sid not in before and not session.closed]


@pytest.mark.parametrize("name", EXTERNAL)
def test_a_killed_harness_and_a_too_slow_policy_end_cleanly_and_the_env_is_reusable(name, bwrap, node):
    harness = recording(name)
    env = gym.make("polar/Code-v0", harness=harness, sandbox="local", max_turns=4, time_limit_s=LIMIT_S)
    before = set(shared_gateway().sessions)  # the gateway's sessions before (other tests' envs may hold open ones)
    try:
        started = time.monotonic()
        obs, info = env.reset(seed=0, options=TASK)
        assert obs.messages and "status" not in info, info.get("status")
        startup = time.monotonic() - started
        first = harness.sandbox
        children = launched(first)
        assert children
        for pid in children:
            kill_quietly(pid, signal.SIGKILL)
        _, reward, terminated, truncated, info = env.step("hello")
        error = info["trace"].error
        assert (terminated, truncated, info["status"], reward) == (True, False, "harness_error", 0.0), error
        assert "exited with code 137" in error
        assert running(first) == {} and not open_sessions(before)

        env.unwrapped.time_limit_s = limit = 2 * startup + 3  # the slow policy's episode costs its limit: keep it short
        started = time.monotonic()
        obs, info = env.reset(seed=1, options=TASK)
        assert obs.messages and "status" not in info, f"no model call in {limit:.1f}s ({startup:.1f}s the first time)"
        second = harness.sandbox
        assert second is not first and launched(second)
        time.sleep(max(0.0, started + limit - time.monotonic()) + 0.5)  # the policy answers after the time limit
        _, reward, terminated, truncated, info = env.step("too late")
        assert (terminated, truncated, info["status"], reward) == (False, True, "timeout", 0.0), info["trace"].error
        assert running(second) == {} and not open_sessions(before)
    finally:
        env.close()
