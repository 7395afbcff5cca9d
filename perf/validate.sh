#!/usr/bin/env bash
# Times the validator against the targets of docs/benchmarks.md, on the release build, with a
# generated fleet of 10,000 nodes x 1,003 metrics (544 MB of JSONL):
#   - vigil diagnose (SuperBench rules, eval/data/ndv4_like_rules.yaml, a mean baseline),
#   - vigil learn and vigil validate (learned criteria, scored against the planted defects);
# each < 10 s on 2 cores and < 2 GB (peak resident memory from /usr/bin/time).
# Usage: perf/validate.sh [ROUNDS]   (default 3; the median is reported)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
cmake --preset release >/dev/null
cmake --build --preset release --target vigil >/dev/null
vigil=$PWD/build/release/vigil
rules=$PWD/eval/data/ndv4_like_rules.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() {  # runs "$@", prints "seconds peak_MB"
  /usr/bin/time -f '%e %M' -o time.txt "$@" >/dev/null || [ $? -eq 1 ]
  tail -1 time.txt | awk '{ printf "%s %.0f\n", $1, $2 / 1024 }'
}
report() {  # name, then lines of "seconds MB"
  local name=$1 lines
  lines=$(cat)
  printf '%-9s %6.2f s  %5d MB  (median of %d)\n' "$name" \
    "$(cut -d' ' -f1 <<<"$lines" | median)" "$(cut -d' ' -f2 <<<"$lines" | median)" "$rounds"
}

# One hardware class, so that one SuperBench baseline fits every node.
$vigil simulate fleet --nodes 10000 --sweep-points 99 --second-class 0 --seed 1 \
  --out fleet.jsonl --truth truth.csv >/dev/null
echo "fleet: $(wc -l <fleet.jsonl) nodes, $(du -m fleet.jsonl | cut -f1) MB"
$vigil baseline -d fleet.jsonl -o baseline.json >/dev/null
for _ in $(seq "$rounds"); do
  timed $vigil diagnose -d fleet.jsonl -r "$rules" -b baseline.json --output-dir .
done | report diagnose
for _ in $(seq "$rounds"); do
  timed $vigil learn --data fleet.jsonl --out criteria.json
done | report learn
for _ in $(seq "$rounds"); do
  timed $vigil validate --data fleet.jsonl --criteria criteria.json --truth truth.csv
done | report validate
for _ in $(seq "$rounds"); do timed $vigil baseline -d fleet.jsonl -o b.json; done | report baseline
