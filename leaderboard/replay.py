"""Replay: each episode's recorded model replies are played again through its harness and env, in a fresh sandbox,
and the episode they make must earn the recorded reward.

Re-grading shows that an artefact earns its reward, not that the recorded turns made it: a submitter could swap in
an artefact (the reference solution, say) that no turn wrote. What a submission can still claim on trust is only
that its model wrote the replies; everything from the replies to the verdict is polar's harness, env and grader,
run here. The replay's policy is the trace's replies in the order of the calls (an empty reply after them), so a
harness that asks for more than was recorded, or a reply that no longer does what the trace says, shows in the
outcome.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import gymnasium as gym

from polar import runtime
from polar.envs.registration import register_envs
from polar.evaluation.runner import play_episode
from polar.leaderboard.regrade import disagreement
from polar.trace import Trace
from polar.types import ModelReply, ModelRequest

if TYPE_CHECKING:
    from polar.leaderboard.validate import Checked, Key

UNGRADED = ("harness_error", "sandbox_error", "verifier_error")
"""Replay outcomes that are not a verdict on the replies: the replay itself broke."""


class RecordedReplies:
    """One episode's policy: its recorded replies, one per model call in the order of the calls (not by the
    request's assistant turns: a harness's prompt may hold example assistant messages), then empty replies."""

    name = "replay"
    model = None

    def __init__(self, replies: list[ModelReply]):
        self.replies, self.calls = replies, 0

    def __call__(self, request: ModelRequest, task: object = None) -> ModelReply:
        reply = self.replies[self.calls] if self.calls < len(self.replies) else ModelReply(content="")
        self.calls += 1
        return reply.model_copy(deep=True)


def _played_as_recorded(calls: int, recorded: int, status: str) -> bool:
    """Whether a replay's model calls match the recording: one per recorded reply, plus the call the policy failed
    on (`policy_error`, not a turn) or the next one a slow policy never reached (`timeout`, which a replay may also
    hit sooner on a slower machine)."""
    if status == "timeout":
        return calls <= recorded + 1
    return recorded <= calls <= recorded + (status == "policy_error")


def replay_episodes(checked: Checked, sandbox: str, jobs: int = 4) -> list[str]:
    """Replay every episode, `jobs` at a time, each in its own env; one line per episode whose replay does not earn
    its recorded reward and components."""
    from polar.leaderboard.validate import label

    manifest, family = checked.manifest, checked.family
    register_envs()
    limit = asyncio.Semaphore(max(1, jobs))

    async def one(key: Key, trace: Trace) -> str | None:
        policy = RecordedReplies([turn.reply for turn in trace.turns])
        async with limit:
            env = gym.make(manifest.env_id, harness=manifest.harness.name, sandbox=sandbox, suite=manifest.suite,
                           max_turns=manifest.policy.max_turns, time_limit_s=manifest.policy.time_limit_s, pool=0)
            try:
                again = await play_episode(env, policy, seed=trace.seed, task_id=key[0])
            finally:
                await asyncio.to_thread(env.close)
        episode, recorded = label(key, trace), len(trace.turns)
        if again.harness.version != trace.harness.version:
            return (f"{episode}: recorded through {trace.harness.name} {trace.harness.version}, replayed through "
                    f"{again.harness.name} {again.harness.version}; install the recorded version to validate it")
        if not _played_as_recorded(policy.calls, recorded, trace.status):
            return (f"{episode}: replayed, the harness asked for {policy.calls} replies, the trace records {recorded} "
                    "(recorded turns that were never played, or a replay that went its own way)")
        replies = f"its {recorded} recorded replies"
        return disagreement(episode, (f"replaying {replies}", f"replayed, {replies} earn"), family.reward, trace,
                            again.reward, again.reward_components,
                            error=again.error if again.status in UNGRADED else None,
                            tampered=again.error if again.status == "tampered" else None)

    async def every() -> list[str | None]:
        return await asyncio.gather(*(one(key, trace) for key, trace in sorted(checked.episodes.items())))

    return [problem for problem in runtime.run(every()) if problem]
