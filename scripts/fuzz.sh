#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`, clang), replays each corpus in fuzz/corpus/, then
# fuzzes each target for N seconds (default 5). New inputs go to a temporary directory; a crash
# leaves its input in build/fuzz/crashes/ and fails the script: add it to fuzz/corpus/<target>/
# and fix the bug (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
mkdir -p build/fuzz/crashes
for dir in fuzz/corpus/*/; do
  target=$(basename "$dir")
  bin="build/fuzz/fuzz/$target"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$bin" -runs=0 "$dir" >"$work/replay.log" 2>&1 || { cat "$work/replay.log"; exit 1; }
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix=build/fuzz/crashes/"$target"- "$work" "$dir" >"$work/fuzz.log" 2>&1; then
    tail -40 "$work/fuzz.log"
    echo "fuzz: $target failed; the input is in build/fuzz/crashes/" >&2
    exit 1
  fi
  runs=$(grep -o 'Done [0-9]* runs' "$work/fuzz.log" | grep -o '[0-9]*' || echo "?")
  echo "fuzz: $target: corpus replayed, $runs runs in ${seconds}s, no crash"
  rm -rf "$work"
  trap - EXIT
done
