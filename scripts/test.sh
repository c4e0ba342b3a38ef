#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs, then lints and runs pytest.
# Under CI=true a test whose real component (bubblewrap, Docker, Chromium, Node) is missing fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh local,dev,train
python3 -m ruff check .
# POLAR_TEST_WORKERS=N runs N pytest-xdist workers (default 0: serial). At 4 on 2 cores CPU-bound model tests time out;
# tests that share a costly fixture stay on one worker (tests/conftest.py: pytest_collection_modifyitems).
python3 -m pytest -q --timeout 900 --durations=30 -n "${POLAR_TEST_WORKERS:-0}" --dist loadgroup "$@"
