#!/bin/bash
# The verifier: reward.json holds the outcome (1 when every check passes) and how many checks passed.
mkdir -p /logs/verifier
python3 /tests/test_outputs.py | tee /tmp/checks.log
status=${PIPESTATUS[0]}
passed=$(grep -c '^PASS' /tmp/checks.log)
total=$(grep -c '^\(PASS\|FAIL\)' /tmp/checks.log)
reward=$([ "$status" -eq 0 ] && echo 1.0 || echo 0.0)
printf '{"reward": %s, "checks_passed": %d, "checks": %d}\n' "$reward" "$passed" "$total" > /logs/verifier/reward.json
