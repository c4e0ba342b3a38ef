#!/bin/bash
# Builds the repository of the task at $1, the same way every time (fixed dates and authors).
set -euo pipefail
export GIT_AUTHOR_NAME="Dana Ops" GIT_AUTHOR_EMAIL="dana@example.org"
export GIT_COMMITTER_NAME="Dana Ops" GIT_COMMITTER_EMAIL="dana@example.org"
n=0
commit() {  # commit MESSAGE: commit everything staged and unstaged, at a fixed date, so hashes are reproducible
  n=$((n + 1))
  git add -A
  GIT_AUTHOR_DATE="$((1700000000 + n * 3600)) +0000" GIT_COMMITTER_DATE="$((1700000000 + n * 3600)) +0000" \
    git commit -q -m "$1"
}
new_repo() {
  rm -rf "$1" && mkdir -p "$1" && cd "$1"
  git init -q -b main
  git config user.name "Dana Ops" && git config user.email "dana@example.org"
}
new_repo "$1"
printf '[connection]\ntimeout = 30\n' > config.ini
printf 'print("service")\n' > app.py
printf '# service\n' > README.md
commit "Initial import"
printf '[connection]\ntimeout = 30\nretries = 3\n' > config.ini
commit "Add retries setting"
sed -i 's/^timeout = 30/timeout = 3/' config.ini
commit "Tune connection timeout"
printf '# service\n\nSettings live in config.ini.\n' > README.md
commit "Document configuration"
printf 'print("service")\nprint("health: ok")\n' > app.py
commit "Add health endpoint"
