#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs, then lints and runs pytest.
# Under CI=true a test whose real component (bubblewrap, Docker, Chromium, Node) is missing fails.
#   bash scripts/test.sh --fast [pytest args]   the everyday subset: no set-up (run the full command once first), the
#                                               lints, and every test not marked `slow` (tests/conftest.py: _is_slow)
set -euo pipefail
cd "$(dirname "$0")/.."
selection=()
if [ "${1:-}" = --fast ]; then
  shift
  selection=(-m "not slow")
else
  bash scripts/setup.sh local,dev,train
fi
python3 -m ruff check .
python3 scripts/lint_imports.py  # the layers (README, Layout): import-linter's contracts in pyproject.toml
# POLAR_TEST_WORKERS=N runs N pytest-xdist workers (default 3; 0 is serial): most tests wait on sandboxes, images
# and subprocesses, so three share two cores well. The CPU-bound modules (models, the README's fresh install) run on
# one worker, first, and tests that share a costly fixture stay together (tests/conftest.py).
python3 -m pytest -q --timeout 900 --durations=30 -n "${POLAR_TEST_WORKERS:-3}" --dist loadgroup "${selection[@]}" "$@"
