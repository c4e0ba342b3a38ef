#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs, then lints and runs pytest.
# Under CI=true a test whose real component (bubblewrap, Docker, Chromium, Node) is missing fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh local,dev,train
python3 -m ruff check .
python3 -m pytest -q --timeout 900 --durations=30 "$@"
