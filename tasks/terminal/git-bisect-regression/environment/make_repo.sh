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
cat > stats.py <<'PY'
def median(xs):
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
PY
cat > check.sh <<'SH'
#!/bin/bash
# Exits 0 when the statistics helpers give the right answers.
python3 -c 'from stats import median; assert median([3, 1, 2]) == 2 and median([4, 1, 3, 2]) == 2.5'
SH
printf '# stats\n' > README.md
printf '__pycache__/\n' > .gitignore
commit "Add median"
for i in $(seq 2 41); do
  if [ "$i" -eq 27 ]; then
    sed -i 's|(s\[mid - 1\] + s\[mid\]) / 2|s[mid]|' stats.py
    msg="Simplify median ($i)"
  elif [ $((i % 3)) -eq 0 ]; then
    printf '\ndef mean_%d(xs):\n    return sum(xs) / len(xs)\n' "$i" >> stats.py
    msg="Add a helper ($i)"
  else
    printf 'Note %d.\n' "$i" >> README.md
    msg="Update notes ($i)"
  fi
  commit "$msg"
done
