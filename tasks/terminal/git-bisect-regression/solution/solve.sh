#!/bin/bash
set -euo pipefail
cd /app/repo
first=$(git rev-list --max-parents=0 main)
git bisect start main "$first" >/dev/null
git bisect run bash check.sh > /tmp/bisect.log 2>&1
git rev-parse refs/bisect/bad > /app/first_bad.txt
git bisect reset >/dev/null 2>&1
git checkout -q main
