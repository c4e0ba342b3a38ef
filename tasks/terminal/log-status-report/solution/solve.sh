#!/bin/bash
set -euo pipefail
cd /app
awk '$9 ~ /^5[0-9][0-9]$/ { split($7, p, "?"); print p[1] }' access.log \
  | sort | uniq -c | sort -k1,1nr -k2,2 | head -3 | awk '{print $1, $2}' > report.txt
