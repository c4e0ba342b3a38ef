"""PolarEnv through gym.make: the Gymnasium contract, episodes end to end, bad input, async use."""

import asyncio
import inspect
import json
import subprocess
import sys
import weakref
from pathlib import Path

import gymnasium as gym
import jsonschema
import pytest
from gymnasium.utils.env_checker import check_env

from polar.envs.recording import RecordTraces
from polar.envs.registration import ENVS, FAMILIES, load_family, register_envs
from polar.errors import TaskFormatError, UnknownNameError
from polar.evaluation.runner import run_episode
from polar.policies import OraclePolicy, ScriptedPolicy
from polar.protocols import EnvFamily
from polar.trace import Trace, load_schema, read_jsonl
from polar.types import ModelReply, ToolCall

register_envs()
SCHEMA = jsonschema.Draft202012Validator(load_schema())


def assert_valid(trace: Trace) -> None:
    SCHEMA.validate(json.loads(trace.to_json()))


@pytest.fixture
def env(bwrap):
    env = gym.make("polar/Code-v0", max_turns=6)
    yield env
    env.close()


def test_gym_make_works_without_importing_polar_first():
    code = ("import gymnasium as gym, io, contextlib\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf): gym.pprint_registry()\n"
            "assert 'polar' in buf.getvalue(), buf.getvalue()[-500:]\n"
            "env = gym.make('polar/Code-v0'); print(type(env.unwrapped).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "PolarEnv", out.stderr[-2000:]


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_check_env_passes_on_every_env(request, bwrap, env_id):
    """Gymnasium's own checker, once over every registered id, with the builtin harness and the local sandbox."""
    if env_id == "polar/Web-v0":
        request.getfixturevalue("chromium")
    env = gym.make(env_id, max_turns=4)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_same_seed_same_task_and_first_observation(env):
    obs1, info1 = env.reset(seed=7)
    obs2, info2 = env.reset(seed=7)
    assert info1["task_id"] == info2["task_id"] and obs1 == obs2
    assert info1["episode_id"] == info2["episode_id"]
    ids = {env.reset(seed=s)[1]["task_id"] for s in range(12)}
    assert len(ids) > 1


def test_oracle_solves_and_trace_is_complete(env):
    trace = run_episode(env, OraclePolicy(), seed=0, task_id=env.unwrapped.task_ids[0])
    assert trace.status == "completed" and trace.reward == 1.0
    assert trace.reward_components == {"solved": 1.0, "tests_passed_frac": 1.0}
    assert trace.turns[0].request.tools and trace.artefact["files"]
    assert_valid(trace)


def test_empty_replies_are_truncated_with_zero_reward(env):
    trace = run_episode(env, ScriptedPolicy([]), seed=0)
    assert trace.status == "truncated" and trace.reward == 0.0 and len(trace.turns) == 6
    assert "No tool call found" in trace.turns[-1].request.messages[-1]["content"]
    assert_valid(trace)


def test_final_step_reports_components_and_terminated(env):
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(ModelReply(tool_calls=[ToolCall(name="submit")]))
    assert (terminated, truncated, reward) == (True, False, 0.0)
    assert info["status"] == "completed" and set(info["reward_components"]) == {"solved", "tests_passed_frac"}
    with pytest.raises(RuntimeError, match="call reset"):
        env.step("more")


def test_invalid_actions_raise_and_broken_tool_calls_go_back_to_the_model(env):
    env.reset(seed=0)
    with pytest.raises(TypeError, match="ModelReply"):
        env.step(42)
    with pytest.raises(ValueError):
        env.step({"role": "user", "content": "hi"})
    obs, *_ = env.step(ModelReply(tool_calls=[ToolCall(id="a", name="bash", arguments="{not json"),
                                              ToolCall(id="b", name="teleport", arguments="{}"),
                                              ToolCall(id="c", name="create", arguments='{"path": 1}')]))
    errors = [m["content"] for m in obs.messages if m["role"] == "tool"]
    assert "not valid JSON" in errors[0] and "unknown tool" in errors[1] and "must be a string" in errors[2]


def test_wall_clock_limit_truncates_with_status_timeout(bwrap):
    env = gym.make("polar/Code-v0", time_limit_s=1.0)
    try:
        env.reset(seed=0)
        call = ToolCall(name="bash", arguments=json.dumps({"command": "sleep 30"}))
        _, reward, terminated, truncated, info = env.step(ModelReply(tool_calls=[call]))
        assert truncated and not terminated and info["status"] == "timeout" and reward == 0.0
        assert_valid(info["trace"])
    finally:
        env.close()


def test_unknown_parts_list_the_valid_names():
    with pytest.raises(UnknownNameError, match="builtin"):
        gym.make("polar/Code-v0", harness="nope")
    with pytest.raises(UnknownNameError, match="local, process"):
        gym.make("polar/Code-v0", sandbox="nope")


@pytest.mark.parametrize("options", ["task_id=roman_numerals", ["roman_numerals"], 3])
def test_reset_options_that_are_not_a_dict_name_the_accepted_form(env, options):
    with pytest.raises(TypeError, match=r"takes a dict such as \{'task_id': .*not " + type(options).__name__):
        env.reset(seed=0, options=options)
    obs, info = env.reset(seed=0, options={"task_id": "roman_numerals"})  # the env is still usable
    assert info["task_id"] == "roman_numerals"


def test_broken_task_file_names_the_file_and_field(tmp_path):
    task = tmp_path / "t1"
    (task / "stub").mkdir(parents=True)
    (task / "task.toml").write_text('id = "t1"\ntitle = "x"\ndifficulty = "impossible"\nfiles = ["m.py"]\n')
    with pytest.raises(TaskFormatError, match=r"t1/task.toml: field 'difficulty'"):
        gym.make("polar/Code-v0", suite=str(tmp_path))
    (task / "task.toml").write_text('id = "t1"\ndifficulty = "easy"\nfiles = ["m.py"]\n')
    with pytest.raises(TaskFormatError, match=r"task.toml: missing field 'title'"):
        gym.make("polar/Code-v0", suite=str(tmp_path))


def test_many_episodes_at_once_with_areset_and_astep(bwrap):
    envs = [gym.make("polar/Code-v0").unwrapped for _ in range(3)]
    oracle = OraclePolicy()

    async def episode(env, seed):
        obs, info = await env.areset(seed=seed)
        while True:
            obs, reward, terminated, truncated, info = await env.astep(oracle(obs, info["task"]))
            if terminated or truncated:
                return reward

    async def main():
        return await asyncio.gather(*(episode(e, i) for i, e in enumerate(envs)))

    try:
        assert asyncio.run(main()) == [1.0, 1.0, 1.0]
    finally:
        for e in envs:
            e.close()


def test_a_sandbox_spec_that_builds_does_not_hold_up_other_episodes(bwrap, monkeypatch):
    """A family's `sandbox_spec` may build an image (minutes); the episodes already running keep stepping meanwhile."""
    import time

    from polar.envs.code.family import CodeFamily

    plain = CodeFamily.sandbox_spec

    built = []

    def building(self, task, backend=None):
        if not built:
            time.sleep(3.0)  # a blocking build, as docker's and pip's are
            built.append(time.monotonic())
        return plain(self, task, backend)

    envs = [gym.make("polar/Code-v0").unwrapped for _ in range(2)]

    async def main():
        await envs[0].areset(seed=0)
        monkeypatch.setattr(CodeFamily, "sandbox_spec", building)
        building_reset = asyncio.ensure_future(envs[1].areset(seed=0))
        await asyncio.sleep(0.5)  # the build has started
        await envs[0].astep(ModelReply(tool_calls=[ToolCall(name="bash", arguments=json.dumps({"command": "true"}))]))
        stepped = time.monotonic()
        await building_reset
        return stepped

    try:
        stepped = asyncio.run(main())
    finally:
        for e in envs:
            e.close()
    assert built and stepped < built[0], "the step waited for the other episode's build to end"


def test_record_traces_writes_each_finished_episode_from_a_users_own_loop(bwrap, tmp_path):
    env = RecordTraces(gym.make("polar/Code-v0", max_turns=6), tmp_path / "traces.jsonl")
    oracle = OraclePolicy()
    try:
        for seed in (0, 1):
            obs, info = env.reset(seed=seed)
            assert not (tmp_path / "traces.jsonl").exists() or seed == 1
            while True:
                obs, reward, terminated, truncated, info = env.step(oracle(obs, info["task"]))
                if terminated or truncated:
                    break
    finally:
        env.close()
    traces = list(read_jsonl(tmp_path / "traces.jsonl"))
    assert [t.reward for t in traces] == [1.0, 1.0] and len({t.episode_id for t in traces}) == 2


def test_works_under_a_gymnasium_vector_env(bwrap):
    venv = gym.vector.SyncVectorEnv([lambda: gym.make("polar/Code-v0", max_turns=2)] * 2)
    try:
        obs, infos = venv.reset(seed=3)
        assert len(obs) == 2
        obs, rewards, terminated, truncated, infos = venv.step(["hello", "hello"])
        obs, rewards, terminated, truncated, infos = venv.step(["hello", "hello"])
        assert list(truncated) == [True, True] and list(rewards) == [0.0, 0.0]
    finally:
        venv.close()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_implements_the_env_family_contract(name):
    family = load_family(name)
    assert isinstance(family, EnvFamily), [m for m in ("regrade", "grade", "setup") if not hasattr(family, m)]
    assert family.reward.names() and family.env_id.startswith("polar/")
    # the episode's state travels from setup to grade, never parked in the family
    assert list(inspect.signature(family.grade).parameters) == ["task", "sandbox", "backend", "state"]
    assert not [k for k, v in vars(family).items() if isinstance(v, weakref.WeakKeyDictionary)]


def test_shipped_schema_matches_the_types():
    from polar.trace import json_schema

    assert load_schema() == json.loads(json.dumps(json_schema())), "run `python -m polar.trace` and commit"
    assert Path(load_schema()["$id"]).name == "v1"
