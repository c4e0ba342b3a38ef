"""Traces to the files other trainers read: SFT chat JSONL, SkyRL generator output, a TRL rollout, Harbor ATIF.

- `sft_records`: one chat example per successful episode (reward >= 1): the last request's messages, the final
  reply as an assistant message, and the tools, the `{"messages", "tools"}` shape TRL's `SFTTrainer` reads.
- `skyrl_generator_output`: SkyRL's `GeneratorOutput` (skyrl 0.3.0, `skyrl/train/generators/base.py`) as a
  dict of lists, one entry per sample, in its step-wise form (`is_last_step`, `trajectory_ids`) so an
  episode that prefix-merges into several chains stays one trajectory.
- `trl_rollout`: what a TRL `GRPOTrainer(rollout_func=...)` returns (trl 1.16.0): `prompt_ids`,
  `completion_ids`, `logprobs`, `env_mask`; the extra `reward` and `episode_id` lists reach reward functions.
- `atif_trajectory`: one episode as an ATIF-v1.8 trajectory (Harbor's Agent Trajectory Interchange Format,
  checked against the `atif` package's models in the tests), with the sampled token ids and logprobs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from polar.policies.samples import Coverage, Sample, prefix_merge
from polar.trace import Trace
from polar.types import ModelReply, content_text

ATIF_VERSION = "ATIF-v1.8"
FORMATS = ("sft", "skyrl", "trl", "atif")
Builder = Callable[[Trace, Any], list[Sample]]


def sft_records(traces: Iterable[Trace]) -> list[dict[str, Any]]:
    """One `{"messages": [...], "tools": [...]}` example per episode with reward >= 1 and at least one call."""
    records = []
    for trace in traces:
        if trace.reward < 1.0 or not trace.turns:
            continue
        last = trace.turns[-1]
        records.append(
            {"messages": [*last.request.messages, last.reply.to_openai_message()], "tools": last.request.tools}
        )
    return records


def _samples(traces: Iterable[Trace], tokenizer: Any, builder: Builder) -> list[tuple[Trace, list[Sample]]]:
    return [(trace, builder(trace, tokenizer)) for trace in traces]


def skyrl_generator_output(traces: Iterable[Trace], tokenizer: Any, builder: Builder = prefix_merge) -> dict[str, Any]:
    """SkyRL's `GeneratorOutput`, one entry per sample; an episode's samples are contiguous, its last marked.

    `trajectory_ids` are `{"instance_id": task_id, "repetition_id": n}` dicts (the n-th episode of that task
    here); build SkyRL's `TrajectoryID(**d)` from each when handing the dict to SkyRL.
    """
    out: dict[str, Any] = {key: [] for key in (
        "prompt_token_ids", "response_ids", "rewards", "loss_masks", "rollout_logprobs", "stop_reasons",
        "trajectory_ids", "is_last_step")}
    repetitions: Counter[str] = Counter()
    chained = Coverage()
    for trace, samples in _samples(traces, tokenizer, builder):
        if not samples:
            continue
        chained.add(samples)
        finish = {turn.index: turn.reply.finish_reason for turn in trace.turns}
        trajectory_id = {"instance_id": trace.task_id, "repetition_id": repetitions[trace.task_id]}
        repetitions[trace.task_id] += 1
        for i, sample in enumerate(samples):
            out["prompt_token_ids"].append(sample.prompt_ids)
            out["response_ids"].append(sample.response_ids)
            out["rewards"].append(sample.reward)
            out["loss_masks"].append(sample.loss_mask)
            out["rollout_logprobs"].append(sample.logprobs)
            out["stop_reasons"].append(finish[sample.turns[-1]] or "unknown")
            out["trajectory_ids"].append(dict(trajectory_id))
            out["is_last_step"].append(i == len(samples) - 1)
    out["rollout_metrics"] = {
        "polar/episodes": chained.episodes,
        "polar/samples": len(out["response_ids"]),
        "polar/merged_call_share": chained.merged,
    }
    return out


def trl_rollout(traces: Iterable[Trace], tokenizer: Any, builder: Builder = prefix_merge) -> dict[str, list]:
    """A TRL `rollout_func` result: `env_mask` is the loss mask (1 = sampled by the model, 0 = environment)."""
    out: dict[str, list] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [], "reward": [],
                            "episode_id": []}
    for _, samples in _samples(traces, tokenizer, builder):
        for sample in samples:
            out["prompt_ids"].append(sample.prompt_ids)
            out["completion_ids"].append(sample.response_ids)
            out["logprobs"].append(sample.logprobs)
            out["env_mask"].append(sample.loss_mask)
            out["reward"].append(sample.reward)
            out["episode_id"].append(sample.episode_id)
    return out


def _atif_tool_calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """OpenAI tool calls as ATIF ones; arguments that are not a JSON object are kept raw in `extra`."""
    converted = []
    for call in calls:
        fn = call.get("function", {})
        raw = fn.get("arguments") or "{}"
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            args = None
        entry: dict[str, Any] = {"tool_call_id": call.get("id") or "", "function_name": fn.get("name", "")}
        if isinstance(args, dict):
            entry["arguments"] = args
        else:
            entry["arguments"], entry["extra"] = {}, {"raw_arguments": raw}
        converted.append(entry)
    return converted or None


def _agent_step(reply: ModelReply) -> dict[str, Any]:
    step: dict[str, Any] = {"source": "agent", "message": reply.content or "", "llm_call_count": 1}
    if reply.model:
        step["model_name"] = reply.model
    if reply.reasoning:
        step["reasoning_content"] = reply.reasoning
    if calls := _atif_tool_calls(reply.to_openai_message().get("tool_calls", [])):
        step["tool_calls"] = calls
    metrics = {
        "prompt_tokens": len(reply.prompt_token_ids) if reply.prompt_token_ids is not None else None,
        "completion_tokens": len(reply.token_ids) if reply.token_ids is not None else None,
        "prompt_token_ids": reply.prompt_token_ids,
        "completion_token_ids": reply.token_ids,
        "logprobs": reply.logprobs,
    }
    if metrics := {k: v for k, v in metrics.items() if v is not None}:
        step["metrics"] = metrics
    return step


def _context_steps(steps: list[dict[str, Any]], messages: list[dict[str, Any]], copied: bool) -> None:
    """Append the steps for messages the harness added: system and user turns, tool results as observations.

    Assistant messages here were not sampled in this episode's calls (a rewritten or injected history), so
    they become agent steps marked `is_copied_context`, which ATIF tells SFT consumers to leave out.
    """
    start = len(steps)
    for message in messages:
        role, text = message.get("role"), content_text(message.get("content"))
        if role == "tool" and steps and steps[-1]["source"] == "agent":
            ids = {c["tool_call_id"] for c in steps[-1].get("tool_calls") or []}
            call_id = message.get("tool_call_id")
            result = {"source_call_id": call_id if call_id in ids else None, "content": text}
            steps[-1].setdefault("observation", {"results": []})["results"].append(result)
        elif role == "assistant":
            step = {"source": "agent", "message": text, "is_copied_context": True, "llm_call_count": 0}
            if calls := _atif_tool_calls(message.get("tool_calls") or []):
                step["tool_calls"] = calls
            steps.append(step)
        else:
            steps.append({"source": "system" if role == "system" else "user", "message": text})
    if copied and len(steps) > start:
        steps[start].setdefault("extra", {})["polar_history_rewritten"] = True


def atif_trajectory(trace: Trace) -> dict[str, Any]:
    """One episode as an ATIF-v1.8 trajectory dict (fields left unset are omitted).

    A call whose request extends the previous request adds only its new messages; one that does not
    (compaction, a sub-agent) repeats its whole context, its first step marked `extra.polar_history_rewritten`.
    The outcome (reward, status, task) goes in the root `extra.polar`.
    """
    steps: list[dict[str, Any]] = []
    previous: list[dict[str, Any]] | None = None
    for turn in trace.turns:
        messages = turn.request.messages
        if previous is not None and messages[: len(previous)] == previous:
            new = messages[len(previous):]
            if new and new[0].get("role") == "assistant":  # the harness's copy of the previous reply
                new = new[1:]
            _context_steps(steps, new, copied=False)
        else:
            _context_steps(steps, messages, copied=previous is not None)
        steps.append(_agent_step(turn.reply))
        previous = messages
    for number, step in enumerate(steps, 1):
        step["step_id"] = number
    replies = [turn.reply for turn in trace.turns]
    final: dict[str, Any] = {"total_steps": len(steps)}
    if all(r.prompt_token_ids is not None for r in replies):
        final["total_prompt_tokens"] = sum(len(r.prompt_token_ids or []) for r in replies)
    if all(r.token_ids is not None for r in replies):
        final["total_completion_tokens"] = sum(len(r.token_ids or []) for r in replies)
    agent: dict[str, Any] = {"name": trace.harness.name, "version": trace.harness.version or "unknown"}
    if trace.policy and trace.policy.model:
        agent["model_name"] = trace.policy.model
    if trace.turns and trace.turns[0].request.tools:
        agent["tool_definitions"] = trace.turns[0].request.tools
    if trace.policy:
        agent["extra"] = {"policy": trace.policy.name}
    return {
        "schema_version": ATIF_VERSION,
        "session_id": trace.episode_id,
        "trajectory_id": trace.episode_id,
        "agent": agent,
        "steps": steps,
        "final_metrics": final,
        "extra": {"polar": {
            "env_id": trace.env_id, "task_id": trace.task_id, "status": trace.status, "error": trace.error,
            "reward": trace.reward, "reward_components": trace.reward_components,
            "started_at": trace.started_at, "ended_at": trace.ended_at,
        }},
    }


def write_export(traces: list[Trace], fmt: str, out: Path, tokenizer: Any = None,
                 builder: Builder = prefix_merge) -> int:
    """Write `traces` in `fmt` to `out`: JSONL for sft and atif, one JSON dict of lists for skyrl and trl.

    Returns how many records (examples, samples or trajectories) were written.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("sft", "atif"):
        records = sft_records(traces) if fmt == "sft" else [atif_trajectory(t) for t in traces]
        out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return len(records)
    if fmt == "skyrl":
        data = skyrl_generator_output(traces, tokenizer, builder)
        count = len(data["response_ids"])
    elif fmt == "trl":
        data = trl_rollout(traces, tokenizer, builder)
        count = len(data["completion_ids"])
    else:
        raise ValueError(f"unknown export format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    out.write_text(json.dumps(data), encoding="utf-8")
    return count
