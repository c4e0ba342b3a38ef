#!/bin/bash
# Builds the repository of the task at $1 (fixed dates and authors); with "keep", experiment is not deleted.
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
printf 'CACHE_SIZE = 64\n' > cache.py
commit "Add a cache"
printf 'CACHE_SIZE = 64\nTTL = 60\n' > cache.py
commit "Expire cache entries"
git checkout -q -b experiment
printf 'CACHE_SIZE = 4096\nTTL = 60\n' > cache.py
commit "Try a much larger cache"
printf 'CACHE_SIZE = 1024\nTTL = 60\n' > cache.py
commit "Tune the cache size"
git checkout -q main
printf '# cache\n' > README.md
commit "Add a readme"
if [ "${2:-}" != keep ]; then git branch -q -D experiment; fi
