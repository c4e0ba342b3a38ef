#!/bin/bash
set -euo pipefail
cat > /app/report.py <<'PY'
import csv
import sys

with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
header, rows = rows[0], rows[1:]
events, scores = {}, {}
for user, _kind, score in rows:
    events[user] = events.get(user, 0) + 1
    if score.strip():
        scores.setdefault(user, []).append(int(score))
for user in sorted(events):
    got = scores.get(user)
    print(user, events[user], f"{sum(got) / len(got):.1f}" if got else "-")
PY
