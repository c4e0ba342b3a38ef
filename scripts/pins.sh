#!/usr/bin/env bash
# Writes the installed versions as polar's pins: this interpreter's (without polar-gym itself) into
# polar/constraints.txt, vLLM's virtualenv's into polar/vllm-constraints.txt.
# Usage: bash scripts/pins.sh write     (scripts/refresh_pins.sh calls it after the tests passed)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = write ] || { echo "usage: bash scripts/pins.sh write" >&2; exit 2; }
header="# Written by scripts/pins.sh from an install the test command passed on ($(date -u +%F)); setup.sh installs these."
{ echo "$header"; python3 -m pip freeze --exclude-editable --disable-pip-version-check | grep '==' | grep -v '^polar-gym=='; } \
  >polar/constraints.txt
venv="$(python3 -c 'from polar.cache import cache_dir; print(cache_dir("vllm"))')/venv"
if [ -x "$venv/bin/pip" ]; then
  { echo "$header"; "$venv/bin/pip" freeze --disable-pip-version-check | grep '=='; } >polar/vllm-constraints.txt
fi
echo "pins: $(grep -c '==' polar/constraints.txt) in polar/constraints.txt"
