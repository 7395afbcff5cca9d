#!/usr/bin/env bash
# Times the reliability commands against the targets of docs/benchmarks.md, on the release build:
#   - vigil simulate job: 10,000 runs of 30 days of a 100,000-GPU job (target: < 5 s, one core);
#   - vigil fleet stats: a sacct log of at least 1,000,000 jobs (target: < 5 s).
# Usage: perf/reliability.sh [ROUNDS]   (default 3; the median is reported)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
cmake --preset release >/dev/null
cmake --build --preset release --target vigil >/dev/null
vigil=build/release/vigil
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
seconds() {  # runs "$@" pinned to one core, prints its wall-clock seconds
  local start end
  start=$(date +%s%N)
  taskset -c 0 "$@" >/dev/null
  end=$(date +%s%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print (b - a) / 1e9 }'
}

$vigil simulate cluster --nodes 8192 --days 118 --lemons 40 --seed 3 \
  --out-sacct "$work/sacct.txt" --out-events "$work/events.csv" --truth "$work/truth.csv" \
  --json >"$work/cluster.json"
jobs=$(grep -o '"jobs": [0-9]*' "$work/cluster.json" | grep -o '[0-9]*')
size=$(du -m "$work/sacct.txt" | cut -f1)

sim=$(for _ in $(seq "$rounds"); do
  seconds $vigil simulate job --gpus 100000 --days 30d --runs 10000 --json
done | median)
weibull=$(for _ in $(seq "$rounds"); do
  seconds $vigil simulate job --gpus 100000 --days 30d --runs 10000 --distribution weibull --json
done | median)
stats=$(for _ in $(seq "$rounds"); do
  seconds $vigil fleet stats --sacct "$work/sacct.txt" --events "$work/events.csv" --json || true
done | median)

printf 'simulate job, 10000 runs x 30 d x 100000 GPUs, exponential: %.2f s (median of %d)\n' "$sim" "$rounds"
printf 'simulate job, same, Weibull (shape 0.7):                   %.2f s (median of %d)\n' "$weibull" "$rounds"
printf 'fleet stats, %s jobs (%s MB) with events:              %.2f s (median of %d)\n' "$jobs" "$size" "$stats" "$rounds"
$vigil fleet stats --sacct "$work/sacct.txt" --events "$work/events.csv" --truth "$work/truth.csv" \
  | tail -1 || true
