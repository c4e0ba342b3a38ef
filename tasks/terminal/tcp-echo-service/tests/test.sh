#!/bin/bash
# The verifier: starts the agent's /app/upper_server.py, then reward.json holds the outcome (1 when every check
# passes) and how many checks passed.
mkdir -p /logs/verifier
checks=$(mktemp)
if [ -f /app/upper_server.py ]; then
  python3 /app/upper_server.py > /tmp/upper-test.log 2>&1 < /dev/null &
  server=$!
  for _ in $(seq 100); do
    python3 -c 'import socket; socket.create_connection(("127.0.0.1", 7000), 1)' 2>/dev/null && break
    sleep 0.1
  done
fi
python3 /tests/test_outputs.py | tee "$checks"
status=${PIPESTATUS[0]}
[ -n "${server:-}" ] && kill "$server" 2>/dev/null
passed=$(grep -c '^PASS' "$checks")
total=$(grep -c '^\(PASS\|FAIL\)' "$checks")
reward=$([ "$status" -eq 0 ] && echo 1.0 || echo 0.0)
printf '{"reward": %s, "checks_passed": %d, "checks": %d}\n' "$reward" "$passed" "$total" > /logs/verifier/reward.json
