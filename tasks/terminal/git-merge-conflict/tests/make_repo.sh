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
printf 'def greet():\n    return "Hello"\n' > greet.py
printf '# greeter\n' > README.md
printf '__pycache__/\n' > .gitignore
commit "Initial greeter"
git checkout -q -b feature/name
printf 'def greet(name="world"):\n    return f"Hello, {name}"\n' > greet.py
commit "Greet by name"
printf 'from greet import greet\n\nassert greet("Ada").startswith("Hello, Ada")\n' > test_greet.py
commit "Add a test for names"
git checkout -q main
printf 'def greet():\n    return "Hello!"\n' > greet.py
commit "Be enthusiastic"
printf '# greeter\n\nSays hello.\n' > README.md
commit "Describe the greeter"
