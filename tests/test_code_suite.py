"""Admission of every bundled Code-v0 task, graded for real in the sandbox: reference → 1, stub → 0."""

import asyncio
from collections import Counter

import gymnasium as gym
import pytest

from polar.envs.code import CodeFamily
from polar.envs.registration import register_envs
from polar.envs.sandbox import make_backend
from polar.evaluation.policies import OraclePolicy
from polar.evaluation.runner import run_episode
from polar.tasks.code import load_suite

TASKS = load_suite()


def test_the_suite_has_40_tasks_of_graded_difficulty():
    counts = Counter(t.difficulty for t in TASKS)
    assert len(TASKS) >= 40 and all(counts[d] >= 10 for d in ("easy", "medium", "hard")), counts


def test_admission_reference_scores_1_and_stub_scores_0(bwrap):
    family, backend = CodeFamily(), make_backend("local")

    async def admit(task):
        reference = await family.grade_files(task, task.solution, backend)
        stub = await family.grade_files(task, task.stub, backend)
        return task.id, family.reward.score(reference.components), family.reward.score(stub.components), \
            reference.log, stub.log

    async def main():
        results = []
        for i in range(0, len(TASKS), 8):
            results += await asyncio.gather(*(admit(t) for t in TASKS[i:i + 8]))
        return results

    failures = [(tid, ref, stub, rlog[-300:], slog[-300:]) for tid, ref, stub, rlog, slog in asyncio.run(main())
                if ref != 1.0 or stub != 0.0]
    assert failures == []


@pytest.mark.parametrize("sandbox", ["local"])
def test_oracle_solves_every_bundled_task_through_the_env(bwrap, sandbox):
    register_envs()
    env = gym.make("polar/Code-v0", sandbox=sandbox)
    try:
        rewards = {tid: run_episode(env, OraclePolicy(), seed=0, task_id=tid).reward
                   for tid in env.unwrapped.task_ids}
    finally:
        env.close()
    assert rewards == dict.fromkeys(rewards, 1.0)
