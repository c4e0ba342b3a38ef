#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
import json

users = json.load(open("/app/users.json"))
with open("/app/users.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["id", "name", "email", "city"])
    for u in sorted(users, key=lambda u: int(u["id"])):
        writer.writerow([u["id"], u.get("name", ""), u.get("email", ""), (u.get("address") or {}).get("city", "")])
PY
