#!/bin/bash
# The verifier: starts the agent's server with /app/serve.sh, then reward 1 when every check in
# test_outputs.py passes, else 0.
mkdir -p /logs/verifier
if [ -f /app/serve.sh ] && timeout 60 bash /app/serve.sh && python3 /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
