#!/bin/bash
set -euo pipefail
cd /app/repo
git merge --no-edit feature/name || true
printf 'def greet(name="world"):\n    return f"Hello, {name}!"\n' > greet.py
git add greet.py
git -c core.editor=true commit --no-edit
