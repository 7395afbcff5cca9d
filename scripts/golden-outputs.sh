#!/usr/bin/env bash
# Runs a fixed set of deterministic vigil commands into DIR: for each, its stdout, its stderr and its
# exit code (with elapsed times replaced by T), and the files it wrote. Two builds are then compared
# with `diff -r`: a refactoring that keeps behaviour leaves no difference (docs/development.md).
# Usage: scripts/golden-outputs.sh VIGIL DIR [REPO]
#   VIGIL: the binary; DIR: new, empty, or an earlier run's (it is then emptied); REPO: where tests/data is read from (default: this
#   script's repository; give both runs the same one, since error messages name the file).
set -u
if [ $# -lt 2 ]; then sed -n '2,8p' "$0"; exit 2; fi
V=$(readlink -f "$1"); D=$2; R=$(readlink -f "${3:-$(dirname "$0")/..}")
if [ -e "$D" ] && [ -n "$(ls -A "$D")" ] && [ ! -e "$D/.golden-outputs" ]; then
  echo "golden-outputs: $D is neither empty nor an earlier run's: not emptying it" >&2; exit 2
fi
rm -rf "$D"; mkdir -p "$D"; cd "$D"; touch .golden-outputs
T=$R/tests/data
run() {  # name, then the command's arguments
  local name=$1; shift
  "$V" "$@" > "$name.out" 2> "$name.err"; echo $? > "$name.rc"
  sed -i -E 's/[0-9]+\.[0-9]+ s\b/T s/g; s/[0-9.]+ ?ms\b/T ms/g' "$name.out" "$name.err"
}
run help --help
for c in run "bench list" "simulate fleet" "simulate telemetry" "simulate job" "simulate cluster" \
         "model mttf" "model ettr" "model checkpoint" "fleet stats" diagnose baseline learn validate \
         detect serve report version; do
  run "help-${c// /-}" $c --help
done
run bench-list bench list --json
run sim-fleet simulate fleet --nodes 300 --seed 3 --out fleet.jsonl --truth truth.csv
run learn learn --data fleet.jsonl --out criteria.json --json
run learn-table learn --data fleet.jsonl --out criteria2.json
run validate validate --data fleet.jsonl --criteria criteria.json --truth truth.csv
run validate-json validate --data fleet.jsonl --criteria criteria.json --truth truth.csv --json
run validate-bad validate --data "$T/superbench_test_rules.yaml" --criteria criteria.json
run diag diagnose -d "$T/superbench_test_results.jsonl" -r "$T/superbench_test_rules.yaml" -b "$T/superbench_test_baseline.json" --output-dir diag --output-all --json
for f in md html excel jsonl; do
  run diag-$f diagnose -d "$T/superbench_test_results.jsonl" -r "$T/superbench_test_rules.yaml" -b "$T/superbench_test_baseline.json" --output-dir diag-$f --output-file-format $f
done
run baseline baseline -d "$T/superbench_test_generate_baseline_results.jsonl" -r "$T/superbench_test_generate_baseline_diagnosis_rules.yaml" -o baseline.json
run sim-tel simulate telemetry --machines 8 --duration 20m --faults 2 --seed 5 --out tel.csv --labels labels.csv
run sim-tel-jsonl simulate telemetry --machines 4 --duration 5m --faults 1 --seed 6 --out tel.jsonl
run detect detect --input tel.csv --labels labels.csv --out alerts.jsonl
run detect-json detect --input tel.csv --labels labels.csv --json
run detect-jsonl detect --input tel.jsonl --json
run detect-bad detect --input "$T/superbench_test_rules.yaml"
run sim-job simulate job --gpus 16384 --runs 200 --seed 2
run sim-job-json simulate job --nodes 512 --runs 100 --seed 2 --json --spares 4 --distribution weibull
run sim-cluster simulate cluster --nodes 256 --days 10 --seed 4 --out-sacct sacct.txt --out-events events.csv --truth lemons.csv --json
run stats fleet stats --sacct sacct.txt --events events.csv --truth lemons.csv
run stats-json fleet stats --sacct sacct.txt --events events.csv --json
run mttf model mttf
run mttf-json model mttf --gpus 8,1024,16384 --json
run ettr model ettr --gpus 16384
run ettr-sweep model ettr --sweep gpus=1024..65536 --json
run ckpt model checkpoint --write 5m --gpus 16384
run ckpt-json model checkpoint --write 2m --mtbf 24h --json
run bad-flag simulate job --gpus 0
run bad-dur model ettr --gpus 8 --restart 5x
