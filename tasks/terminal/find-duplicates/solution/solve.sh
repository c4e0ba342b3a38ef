#!/bin/bash
set -euo pipefail
find /app/files -type f -exec sha256sum {} + | sort \
  | awk '{ if ($1 == prev) { line = line " " $2; n++ } else { if (n > 1) print line; line = $2; n = 1 }; prev = $1 }
         END { if (n > 1) print line }' \
  | while read -r paths; do printf '%s\n' $paths | sort | paste -sd' '; done | sort > /app/duplicates.txt
