#!/usr/bin/env bash
# Smoke test of jobgen: a tiny job (8 machines, 5 minutes) runs, its CSV files are well-formed,
# every label names a machine that has telemetry, and the same seed gives identical files.
# Usage: jobgen_test.sh path/to/jobgen
set -euo pipefail
jobgen=${1:?usage: jobgen_test.sh path/to/jobgen}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "jobgen_test: $*" >&2; exit 1; }

args=(--machines 8 --duration 5m --seed 42 --faults 3 --interval 5 --fault-from 0.3 --fault-to 0.5
      --kinds straggler,nic_flap,pcie_downgrade,host_slow,gpu_lost)
"$jobgen" "${args[@]}" --out "$dir/a"
"$jobgen" "${args[@]}" --out "$dir/b"
for f in telemetry.csv labels.csv benign.csv faults.csv; do
  cmp -s "$dir/a/$f" "$dir/b/$f" || fail "$f differs between two runs with the same seed"
done
"$jobgen" "${args[@]/42/43}" --out "$dir/c"
cmp -s "$dir/a/telemetry.csv" "$dir/c/telemetry.csv" && fail "seeds 42 and 43 gave the same data"

[[ $(head -1 "$dir/a/telemetry.csv") == "timestamp,machine,metric,value,component" ]] ||
  fail "bad telemetry.csv header"
[[ $(head -1 "$dir/a/labels.csv") == "machine,onset,kind,end" ]] || fail "bad labels.csv header"
[[ $(head -1 "$dir/a/benign.csv") == "machine,start,end,kind" ]] || fail "bad benign.csv header"
(($(wc -l < "$dir/a/labels.csv") == 4)) || fail "expected 3 labels"
# faults.csv gives the drawn parameters of the same faults, in the same order.
[[ $(head -1 "$dir/a/faults.csv") == "machine,onset,kind,size,ramp_s,gpu" ]] ||
  fail "bad faults.csv header"
diff <(cut -d, -f1-3 "$dir/a/labels.csv" | tail -n +2) \
     <(cut -d, -f1-3 "$dir/a/faults.csv" | tail -n +2) > /dev/null ||
  fail "faults.csv does not list the faults of labels.csv"

# Five fields per row, timestamps non-decreasing, values numeric or empty.
awk -F, 'NR > 1 {
  if (NF != 5) { print "row " NR ": " NF " fields"; exit 1 }
  if ($1 + 0 < prev) { print "row " NR ": timestamp goes back"; exit 1 }
  prev = $1 + 0
  if ($4 != "" && $4 !~ /^-?[0-9]+(\.[0-9]+)?$/) { print "row " NR ": value " $4; exit 1 }
}' "$dir/a/telemetry.csv" || fail "malformed telemetry.csv"

# Labels name machines that exist, with an onset inside the data.
cut -d, -f2 "$dir/a/telemetry.csv" | tail -n +2 | sort -u > "$dir/machines"
(($(wc -l < "$dir/machines") == 8)) || fail "expected 8 machines"
tail -n +2 "$dir/a/labels.csv" | while IFS=, read -r machine onset kind end; do
  grep -qx "$machine" "$dir/machines" || fail "label names unknown machine $machine"
  awk -v t="$onset" 'BEGIN { exit !(t >= 1790000000 && t < 1790000300) }' ||
    fail "label onset $onset outside the data"
  [[ -n $kind ]] || fail "label without kind"
done

# Bad flags exit 2 naming the flag.
set +e
msg=$("$jobgen" --machines 4 --out "$dir/x" 2>&1); rc=$?
set -e
((rc == 2)) || fail "bad --machines: exit $rc, want 2"
[[ $msg == *--machines* ]] || fail "bad --machines: message does not name the flag: $msg"

# OpenMetrics ends with # EOF.
"$jobgen" --machines 8 --duration 2m --seed 1 --format openmetrics --out "$dir/om"
[[ $(tail -1 "$dir/om/telemetry.om") == "# EOF" ]] || fail "telemetry.om lacks # EOF"
echo "jobgen_test: ok"
