"""`PolarAgentLoop`: any polar env as a verl agent loop (verl 0.9.x, `verl.experimental.agent_loop`).

verl's agent-loop workers call `run(sampling_params, **row)` once per rollout. This loop reads the row's
`extra_info` (an `EpisodeSpec`, written by `polar train data`), runs that episode with verl's own rollout
server as the policy (`server_manager.generate`: token ids in, token ids and logprobs out), and returns one
`AgentLoopOutput` per prefix-merge chain of the trace (see `rollout.py` for the prompts and the budgets):
sampled tokens have mask 1 and their logprobs, tokens the env added between calls mask 0. The episode's reward
is every output's `reward_score`, so verl's reward manager is not asked.

Every chain trained: verl 0.9.1's v1 trainer (`trainer.use_v1=true`, its default, `AgentLoopWorkerTQ`) takes a
`list[AgentLoopOutput]` from `run`, stores each as its own sample (`{uid}_{session}_{index}`), and computes a
GRPO advantage from each session's last output and gives it to all of that session's outputs: an episode is one
member of its group however many chains it has. verl's legacy trainer (`trainer.use_v1=false`) takes one output
per rollout, so this loop refuses it rather than drop chains.

Register it with `actor_rollout_ref.rollout.agent.agent_loop_config_path=training/configs/agent_loop.yaml`
(the `polar train verl` command adds it); that YAML may also set the defaults below. `ray_envs: true` there runs
every episode's env on a node worker of the Ray cluster verl runs on (`polar.evaluation.ray_worker`): verl's
servers generate, the CPU nodes run the sandboxes and harnesses.
"""

from __future__ import annotations

import os
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

from polar.errors import PolarError
from polar.training.rollout import Budget, Generation, Rollout, make_env, remote_envs, run_episode
from polar.training.verl.data import AGENT_NAME, EpisodeSpec, check_spec


@register(AGENT_NAME)
class PolarAgentLoop(AgentLoopBase):
    def __init__(self, *args: Any, harness: str | None = None, sandbox: str | None = None,
                 max_turns: int | None = None, time_limit_s: float | None = None, model_name: str | None = None,
                 ray_envs: bool | str | None = None, **kwargs: Any):
        """
        Args (from the agent-loop YAML; None keeps the row's value):
            harness: run every row with this harness instead of the row's.
            sandbox: run every row in this sandbox backend instead of the row's.
            max_turns: model calls per episode; default verl's `multi_turn.max_assistant_turns` when set.
            time_limit_s: wall-clock budget of one episode.
            model_name: the model name recorded in the traces (prompts are rendered with the tokenizer's chat
                template); default the last part of `actor_rollout_ref.model.path`.
            ray_envs: run the episodes' envs on the node workers of a Ray cluster instead of in this process (true:
                the cluster verl runs on; or an address, HEAD:6379); the model calls stay with verl's servers.
        """
        super().__init__(*args, **kwargs)
        if not self.config.trainer.get("use_v1", True):
            raise PolarError("polar's agent loop returns one AgentLoopOutput per chain of an episode, which only "
                             "verl's v1 trainer takes; set trainer.use_v1=true (verl 0.9's default)")
        turns = max_turns or self.rollout_config.multi_turn.get("max_assistant_turns")
        self.overrides = {"harness": harness, "sandbox": sandbox, "max_turns": turns, "time_limit_s": time_limit_s}
        path = str(self.config.actor_rollout_ref.model.path)
        self.model_name = model_name or os.path.basename(os.path.normpath(path))
        self.budget = Budget(self.rollout_config.prompt_length, self.rollout_config.response_length)
        self.make = remote_envs(ray_envs) if ray_envs else make_env

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> list[AgentLoopOutput]:
        where = f"row {kwargs.get('index', '?')} (data_source={kwargs.get('data_source')!r})"
        spec = EpisodeSpec.from_row(kwargs.get("extra_info"), where).with_overrides(**self.overrides)
        check_spec(spec, where)
        request_id, priority = uuid4().hex, int(kwargs.get("priority", 0))
        steps: list[int] = []
        preempted = -1

        async def generate(prompt_ids: list[int], max_tokens: int, extends: list[int] | None,
                           stop: tuple[str, ...]) -> Generation:
            # verl's servers cache prefixes themselves: `extends` is not needed. `stop` is not passed on (whether a
            # server's returned token ids keep a stop text is untested): it samples on to a stop token, which costs
            # tokens but changes no grade
            nonlocal preempted
            output = await self.server_manager.generate(
                request_id=request_id, prompt_ids=prompt_ids, priority=priority,
                sampling_params={**sampling_params, "logprobs": True, "max_tokens": max_tokens},
            )
            if output.token_ids and output.log_probs is None:
                raise PolarError("the rollout server returned no logprobs; polar's traces and mask-1 tokens need "
                                 "them (actor_rollout_ref.rollout.calculate_log_probs=true)")
            if output.num_preempted is not None:
                preempted = max(preempted, 0) + output.num_preempted
            steps.extend(s for s in (output.extra_fields.get(k) for k in ("min_global_steps", "max_global_steps"))
                         if s is not None)
            return Generation(list(output.token_ids), list(output.log_probs or []))

        rollout = await run_episode(spec, generate, self.tokenizer, model=self.model_name, budget=self.budget,
                                    policy="verl", make=self.make)
        return to_outputs(rollout, steps=steps, preempted=preempted)


def to_outputs(rollout: Rollout, *, steps: list[int] | None = None, preempted: int = -1) -> list[AgentLoopOutput]:
    """The `AgentLoopOutput`s of an episode, one per chain: each with the episode's reward and what verl logs.

    The episode's timings go on its last output (verl's v1 trainer reads metrics from a session's last output).
    """
    trace = rollout.trace
    turns = {turn.index: turn for turn in trace.turns}
    components = dict(trace.reward_components)
    outputs = []
    for i, sample in enumerate(rollout.samples):
        last = turns.get(sample.turns[-1])
        last_chain = i == len(rollout.samples) - 1
        metrics = AgentLoopMetrics(generate_sequences=rollout.generate_s, tool_calls=rollout.env_s,
                                   num_preempted=preempted) if last_chain else AgentLoopMetrics()
        outputs.append(AgentLoopOutput(
            prompt_ids=sample.prompt_ids,
            response_ids=sample.response_ids,
            response_mask=sample.loss_mask,
            response_logprobs=sample.logprobs,
            reward_score=trace.reward,
            num_turns=len(last.request.messages) + 1 if last else 0,  # verl counts chat messages, reply included
            metrics=metrics,
            extra_fields={
                "episode_id": trace.episode_id,
                "env_id": trace.env_id,
                "task_id": trace.task_id,
                "status": trace.status,
                "reward_components": components,
                "reward_extra_info": components,  # verl logs these per sample; one env family per batch: same keys
                "model_calls": len(trace.turns),
                "chain": i,
                "chain_turns": list(sample.turns),
                "chain_break": sample.chain_break,
                "chains": len(rollout.samples),
                "turn_scores": [],
                "tool_rewards": [],
                "min_global_steps": min(steps) if steps else None,
                "max_global_steps": max(steps) if steps else None,
            },
        ))
    return outputs
