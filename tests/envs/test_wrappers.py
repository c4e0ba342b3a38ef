"""Wrappers compose: `RecordTraces` records the same trace whatever is stacked with it, inside or outside, through
the asyncio API (`play_episode`) and the sync one (a user's own loop), and every polar wrapper in the stack acts."""

from typing import Any

import gymnasium as gym
import pytest
from gymnasium.wrappers import RecordEpisodeStatistics

from polar.envs.recording import RecordTraces
from polar.envs.registration import register_envs
from polar.envs.wrapper import PolarWrapper, async_env
from polar.evaluation.runner import run_episode
from polar.policies import OraclePolicy
from polar.trace import Named, Trace, read_jsonl

register_envs()


class CountSteps(PolarWrapper):
    """A polar wrapper that passes everything on and counts the steps that went through it."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.steps = 0

    def step(self, action: Any):
        self.steps += 1
        return self.env.step(action)

    async def astep(self, action: Any):
        self.steps += 1
        return await super().astep(action)


STACKS = {
    "recorder outside a polar wrapper": lambda env, path: RecordTraces(CountSteps(env), path),
    "polar wrapper outside the recorder": lambda env, path: CountSteps(RecordTraces(env, path)),
    "recorder outside a gymnasium wrapper": lambda env, path: RecordTraces(RecordEpisodeStatistics(env), path),
    "gymnasium wrapper outside the recorder": lambda env, path: RecordEpisodeStatistics(RecordTraces(env, path)),
}


def comparable(trace: Trace) -> dict[str, Any]:
    """The trace without its clock readings, which differ from run to run."""
    fields = trace.model_dump(mode="json", exclude={"started_at", "ended_at"})
    for turn in fields["turns"]:
        del turn["policy_latency_s"], turn["env_latency_s"]
    return fields


@pytest.fixture(scope="module")
def code_env(bwrap):
    env = gym.make("polar/Code-v0", max_turns=6)
    yield env
    env.close()


@pytest.fixture(scope="module")
def unwrapped_run(code_env) -> Trace:
    return run_episode(code_env.unwrapped, OraclePolicy(), seed=0, task_id=code_env.unwrapped.task_ids[0])


def sync_episode(env: gym.Env, task_id: str) -> dict[str, Any]:
    """`play_episode`'s episode through the sync API; the last step's info."""
    oracle = OraclePolicy()
    obs, info = env.reset(seed=0, options={"task_id": task_id, "policy": Named(name=oracle.name)})
    while True:
        obs, _, terminated, truncated, info = env.step(oracle(obs, info["task"]))
        if terminated or truncated:
            return info


@pytest.mark.parametrize("api", ["asyncio", "sync"])
@pytest.mark.parametrize("stack", sorted(STACKS))
def test_record_traces_composes_with_any_wrapper_in_either_order(code_env, unwrapped_run, tmp_path, stack, api):
    path = tmp_path / "traces.jsonl"
    env = STACKS[stack](code_env, path)
    task_id = code_env.unwrapped.task_ids[0]
    if api == "asyncio":
        returned = run_episode(env, OraclePolicy(), seed=0, task_id=task_id)
    else:
        info = sync_episode(env, task_id)
        returned = info["trace"]
        assert ("episode" in info) == ("gymnasium" in stack)  # RecordEpisodeStatistics acted on the sync API
    recorded = list(read_jsonl(path))
    assert [comparable(t) for t in recorded] == [comparable(returned)] == [comparable(unwrapped_run)]
    counters = [layer for layer in (env, env.env) if isinstance(layer, CountSteps)]
    assert [c.steps for c in counters] == ([len(unwrapped_run.turns)] if "polar" in stack else [])


def test_the_asyncio_api_of_a_gym_made_env_is_the_polar_env_beneath_gymnasiums_own_wrappers(code_env):
    assert async_env(code_env) is code_env.unwrapped
    counted = CountSteps(code_env)
    assert async_env(counted) is counted and async_env(RecordEpisodeStatistics(counted)) is counted
    with pytest.raises(TypeError, match="no asyncio API"):
        async_env(gym.make("CartPole-v1"))



def test_a_trainer_lowers_max_tokens_through_any_stack(code_env):
    stacked = RecordEpisodeStatistics(CountSteps(code_env))
    stacked.set_wrapper_attr("max_tokens", 7)
    try:
        assert code_env.unwrapped.max_tokens == stacked.get_wrapper_attr("max_tokens") == 7
        assert "max_tokens" not in vars(stacked) and "max_tokens" not in vars(stacked.env)
    finally:
        code_env.unwrapped.max_tokens = None


def test_a_resumed_traces_file_keeps_whole_lines_only_and_is_rewritten_whole(unwrapped_run, tmp_path):
    """`keep_jsonl`, how `polar eval` and `polar train grpo` resume: a line cut short by a kill goes, so do the traces
    the caller refuses (a GRPO step played again); what stays is rewritten whole, with no staging file left."""
    from polar.trace import append_jsonl, keep_jsonl

    path = tmp_path / "traces.jsonl"
    other = unwrapped_run.model_copy(update={"episode_id": "other"})
    append_jsonl(path, [unwrapped_run, other])
    assert keep_jsonl(path) == [unwrapped_run, other]
    with path.open("a", encoding="utf-8") as f:
        f.write(other.to_json()[:50])  # the kill came mid-line
    assert [t.episode_id for t in keep_jsonl(path)] == [unwrapped_run.episode_id, "other"]
    assert path.read_text().count("\n") == 2 and path.read_text().endswith("}\n")
    assert keep_jsonl(path, lambda trace: trace.episode_id == "other") == [other]
    assert list(read_jsonl(path)) == [other] and list(tmp_path.iterdir()) == [path]
    assert keep_jsonl(tmp_path / "none.jsonl") == []
