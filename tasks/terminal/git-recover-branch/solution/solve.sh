#!/bin/bash
set -euo pipefail
cd /app/repo
tip=$(git reflog --format='%H %gs' | awk '/^[0-9a-f]+ commit: Tune the cache size$/ {print $1; exit}')
git branch experiment "$tip"
