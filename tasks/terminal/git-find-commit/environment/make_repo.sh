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
printf 'DEBUG = False\n' > settings.py
printf 'def handler():\n    return 200\n' > app.py
commit "Initial commit"
for i in $(seq 2 30); do
  case $i in
    9)  printf 'import os\n\nAPI_KEY = os.environ.get("API_KEY")\n' >> settings.py; msg="Read the API key from the environment" ;;
    17) printf 'API_KEY = "sk-live-4f9a1c2e7b3d"  # temporary\n' >> settings.py; msg="Fix login on staging" ;;
    21) sed -i '/sk-live-/d' settings.py; msg="Clean up settings" ;;
    24) printf '# never commit keys like sk-test-0000 here\n' >> settings.py; msg="Add a reminder" ;;
    *)  printf '# change %d\n' "$i" >> app.py; msg="Tweak handler ($i)" ;;
  esac
  commit "$msg"
done
