"""Harbor tasks written by a test, and the two ways the tests use one: admitted as `polar tasks admit` admits it,
and played as one Terminal-v0 episode."""

import asyncio
from pathlib import Path

import gymnasium as gym

from polar.envs.registration import register_envs
from polar.evaluation.admission import admit_suite
from polar.evaluation.runner import run_episode
from polar.policies import ScriptedPolicy
from polar.protocols import Admission, Policy
from polar.trace import Trace

register_envs()
SUBMIT = ScriptedPolicy(["submit"])
CALLS_EVERY_TEST = ("\n\nif __name__ == '__main__':\n    import sys\n    failed = 0\n"
                    "    for name, check in list(globals().items()):\n"
                    "        if name.startswith('test_') and callable(check):\n"
                    "            try:\n                check()\n            except Exception as e:\n"
                    "                failed += 1\n                print('FAIL', name, e)\n"
                    "    sys.exit(1 if failed else 0)\n")
"""The main block of a check script as terminal-mini's are (a canary's `globals` place): it calls every `test_*`."""


def make_task(root: Path, name: str = "t", *, dockerfile: str = "FROM polar/base:bookworm\nWORKDIR /app\n",
              test: str = "echo 1 > /logs/verifier/reward.txt\n", solve: str | None = "true\n",
              files: dict[str, str] | None = None, toml: str = "") -> Path:
    """A Harbor task directory written from its parts."""
    task = root / name
    for rel, text in {"instruction.md": "Do the thing.\n", "task.toml": f'version = "1.0"\n{toml}',
                      "environment/Dockerfile": dockerfile, "tests/test.sh": f"#!/bin/bash\n{test}",
                      **({"solution/solve.sh": f"#!/bin/bash\n{solve}"} if solve is not None else {}),
                      **{f"environment/{k}": v for k, v in (files or {}).items()}}.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    return task


def episode(suite: Path | str, policy: Policy = SUBMIT, sandbox: str = "local", harness: str = "builtin",
            task_id: str | None = None) -> Trace:
    """One Terminal-v0 episode of the suite (a folder of tasks, or one task) with the policy."""
    env = gym.make("polar/Terminal-v0", suite=str(suite), sandbox=sandbox, harness=harness, max_turns=8,
                   time_limit_s=300)
    try:
        return run_episode(env, policy, seed=0, task_id=task_id)
    finally:
        env.close()


def admit(task: Path, sandbox: str) -> Admission:
    """The one admission `polar tasks admit` runs, of the single task at `task`."""
    _, (admission,) = asyncio.run(admit_suite(str(task), env_id="polar/Terminal-v0", sandbox=sandbox))
    return admission
