#!/usr/bin/env bash
# Moves polar's pins on, on purpose: installs the newest versions the extras allow, runs the whole test command on
# them, and only when it passes writes them into polar/constraints.txt (vLLM's own virtualenv into
# polar/vllm-constraints.txt). Commit the two files with the test run's figures.
# Usage: bash scripts/refresh_pins.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
export POLAR_PINS=off
rm -f "$(python3 -c 'from polar.cache import cache_dir; print(cache_dir("vllm"))')/venv/.polar-ready"  # reinstall
bash scripts/test.sh "$@"
bash scripts/pins.sh write
