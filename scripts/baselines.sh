#!/usr/bin/env bash
# Remakes the leaderboard's baselines (leaderboard/submissions/, the table in leaderboard/README.md) with this
# checkout. Every manifest names code-mini's content hash, so run it whenever a code-mini task changes.
# Usage: bash scripts/baselines.sh [NAME...]    (default: every baseline; NAME as in leaderboard/submissions/)
set -euo pipefail
cd "$(dirname "$0")/.."
only=" $* "
runs="$(mktemp -d -t polar-baselines.XXXXXX)"
echo '["done"]' > "$runs/done.json"

baseline() {  # NAME SUBMIT-SETTINGS EVAL-ARGS...: one eval of code-mini in the local sandbox, packed as NAME
  local name=$1 settings=$2
  shift 2
  [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || return 0
  echo "baselines: $name"
  polar eval polar/Code-v0 --suite code-mini --out "$runs/$name" "$@" >"$runs/$name.log" 2>&1 || {
    cat "$runs/$name.log" >&2
    echo "baselines: $name: polar eval failed (log above; the old submission is kept)" >&2
    return 1
  }
  rm -rf "leaderboard/submissions/$name.new"
  # shellcheck disable=SC2086  # settings are words
  polar leaderboard submit "$runs/$name" --out "leaderboard/submissions/$name.new" --name "$name" $settings
  rm -rf "leaderboard/submissions/$name"
  mv "leaderboard/submissions/$name.new" "leaderboard/submissions/$name"
}

baseline oracle-builtin "" --policy oracle -k 2
baseline empty-builtin "" --policy empty -k 2
baseline smollm2-builtin "--setting max_new_tokens=96 --setting temperature=0.7" \
  --policy local --max-turns 4 --max-new-tokens 96 -k 1
for harness in claude-code codex gemini-cli qwen-code opencode pi mini-swe-agent terminus-2 openhands aider copilot \
  droid cline; do
  baseline "oracle-$harness" "" --policy oracle --harness "$harness" -k 1
done
for harness in terminus-2 openhands aider copilot droid cline; do
  baseline "done-$harness" "" --policy scripted --replies "$runs/done.json" --harness "$harness" -k 1
done
rm -rf "$runs"
echo "baselines: done; check them with: for s in leaderboard/submissions/*/; do polar leaderboard validate \$s; done"
