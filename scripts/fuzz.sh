#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`, clang), replays each corpus in fuzz/corpus/, then
# fuzzes each target for N seconds (default 5). New inputs go to a temporary directory; a crash
# leaves its input in build/fuzz/crashes/ and fails the script: add it to fuzz/corpus/<target>/
# and fix the bug (docs/development.md, "Fuzzing by hand").
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-5}"
cmake --preset fuzz >/dev/null
# The targets only, and what they link: not the modules no reader of outside data is in.
mapfile -t targets < <(basename -a fuzz/corpus/*/)
cmake --build --preset fuzz --target "${targets[@]}"
mkdir -p build/fuzz/crashes

# Replays one target's corpus, then fuzzes it; prints its result, exits 1 on a crash.
fuzz_one() {
  local dir="$1" seconds="$2"
  local target bin work runs
  target=$(basename "$dir")
  bin="build/fuzz/fuzz/$target"
  work=$(mktemp -d)
  # Expanded now: `work` is local, and gone by the time the shell exits and runs the trap (with
  # single quotes every run left one directory per target in /tmp).
  trap "rm -rf '$work'" EXIT
  if ! "$bin" -runs=0 "$dir" >"$work/replay.log" 2>&1; then
    cat "$work/replay.log"
    echo "fuzz: $target fails on its own corpus" >&2
    exit 1
  fi
  if ! "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix=build/fuzz/crashes/"$target"- "$work" "$dir" >"$work/fuzz.log" 2>&1; then
    tail -40 "$work/fuzz.log"
    echo "fuzz: $target failed; the input is in build/fuzz/crashes/" >&2
    exit 1
  fi
  runs=$(grep -o 'Done [0-9]* runs' "$work/fuzz.log" | grep -o '[0-9]*' || echo "?")
  echo "fuzz: $target: corpus replayed, $runs runs in ${seconds}s, no crash"
}
export -f fuzz_one

# One target per core at a time (each fuzzer is single-threaded).
jobs=$(nproc 2>/dev/null || echo 1)
if ! printf '%s\0' fuzz/corpus/*/ |
     xargs -0 -P "$jobs" -I{} bash -c 'fuzz_one "$1" "$2"' _ {} "$seconds"; then
  echo "fuzz: failed (see above)" >&2
  exit 1
fi
