#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
from collections import defaultdict
from decimal import Decimal

totals = defaultdict(Decimal)
with open("/app/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] += Decimal(row["amount"])
with open("/app/totals.csv", "w") as out:
    out.write("region,total\n")
    for region, total in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0])):
        out.write(f"{region},{total:.2f}\n")
PY
