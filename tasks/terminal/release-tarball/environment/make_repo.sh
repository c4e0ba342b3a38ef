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
mkdir -p src docs
printf 'VERSION = "1.3.0"\n' > src/version.py
printf 'def main():\n    print("tool")\n' > src/tool.py
printf '# project\n' > README.md
commit "Release 1.3.0"
git tag v1.3.0
printf 'VERSION = "1.4.0"\n' > src/version.py
printf 'Usage: tool\n' > docs/usage.md
commit "Release 1.4.0"
git tag v1.4.0
printf 'VERSION = "1.5.0.dev0"\n' > src/version.py
printf 'def main():\n    print("tool, unreleased")\n' > src/tool.py
printf 'wip\n' > NOTES.md
commit "Start 1.5 development"
