"""verl's own classes driven as its v1 worker drives them, with SmolLM2 on the CPU as the rollout server: the verl
agent-loop tests (tests/training) and the remote-env one (tests/evaluation/test_ray.py) share them. Importing this
needs verl, torch and the local model (the tests check with `require_modules` first)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import torch
import verl
from hydra import compose, initialize_config_dir
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.protocol import DataProto
from verl.workers.rollout.replica import TokenOutput

from polar.policies.local_policy import LocalPolicy, load_model

VERL_CONFIGS = str(Path(verl.__file__).parent / "trainer" / "config")


def compose_config(command: list[str]):
    """verl's `ppo_trainer` config with the command line's overrides, as `main_ppo`'s @hydra.main composes it."""
    assert command[1:3] == ["-m", "verl.trainer.main_ppo"]
    with initialize_config_dir(config_dir=VERL_CONFIGS, version_base=None):
        return compose("ppo_trainer", overrides=command[3:])


class SmolServer:
    """Stands in for verl's `LLMServerClient`: same `generate` signature and `TokenOutput`, SmolLM2 on the CPU."""

    def __init__(self) -> None:
        self.lm = load_model()
        self.calls: dict[str, list[tuple[list[int], list[int], list[float]]]] = {}

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict, **kwargs) -> TokenOutput:
        policy = LocalPolicy(temperature=sampling_params["temperature"], top_p=sampling_params["top_p"])
        generator = torch.Generator().manual_seed(sum(len(c) for c in self.calls.values()))
        loop = asyncio.get_running_loop()
        ids, logprobs, _ = await loop.run_in_executor(
            None, policy.sample_tokens, self.lm, list(prompt_ids), sampling_params["max_tokens"], generator)
        self.calls.setdefault(request_id, []).append((list(prompt_ids), ids, logprobs))
        fields = {"global_steps": 3, "min_global_steps": 3, "max_global_steps": 3}  # as LLMServerClient adds them
        return TokenOutput(token_ids=ids, log_probs=logprobs if sampling_params["logprobs"] else None,
                           stop_reason="completed", extra_fields=fields)


async def generate_chains(worker: AgentLoopWorker, batch: DataProto) -> DataProto:
    """What verl's v1 worker does with a batch (`AgentLoopWorkerTQ._run_prompt`, n=1): each row's agent loop made
    from verl's registry and run, and each of its outputs its own sample, padded with verl's own functions."""
    import hydra
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap, _agent_loop_registry

    rollout = worker.rollout_config
    params = {"temperature": rollout.temperature, "top_p": rollout.top_p, "top_k": rollout.top_k,
              "repetition_penalty": 1.0, "logprobs": rollout.calculate_log_probs}
    rows = []
    for i in range(len(batch)):
        kwargs = {k: v[i] for k, v in batch.non_tensor_batch.items()}
        loop = hydra.utils.instantiate(
            config=_agent_loop_registry[kwargs.pop("agent_name")], trainer_config=DictConfigWrap(config=worker.config),
            server_manager=worker.llm_client, tokenizer=worker.tokenizer, processor=worker.processor,
            hf_model_type=worker.hf_model_type, dataset_cls=worker.dataset_cls,
            data_config=DictConfigWrap(worker.config.data), tools=ToolListWrap(worker.tools))
        outputs = await loop.run(params, **kwargs)
        assert isinstance(outputs, list) and outputs
        rows += [await worker._agent_loop_postprocess(o, False, **kwargs) for o in outputs]
    return worker._postprocess(rows, validate=False)
