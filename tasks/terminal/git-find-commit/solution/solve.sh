#!/bin/bash
set -euo pipefail
cd /app/repo
git log --reverse --format=%H -G'sk-live-' | head -1 > /app/answer.txt
