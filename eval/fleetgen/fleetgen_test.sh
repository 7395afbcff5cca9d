#!/usr/bin/env bash
# Smoke test of fleetgen: a 50-node fleet per naming generation (regime all, so every effect is
# exercised); the JSONL parses, every truth row names an existing node and existing keys, the same
# seed gives byte-identical files, and the three reference rules run and are scored.
# Usage: fleetgen_test.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
gen="$here/fleetgen.py"
rules="$here/reference_rules.py"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "fleetgen_test: $*" >&2; exit 1; }

check_naming() {
  local naming=$1
  local args=(--nodes 50 --seed 7 --regime all --naming "$naming" --defect-rate 0.2)
  python3 "$gen" "${args[@]}" --out "$dir/$naming-a" > /dev/null
  python3 "$gen" "${args[@]}" --out "$dir/$naming-b" > /dev/null
  for f in results-summary.jsonl truth.jsonl meta.json; do
    cmp -s "$dir/$naming-a/$f" "$dir/$naming-b/$f" || fail "$naming: $f differs between two runs with the same seed"
  done
  if [[ $naming == current ]]; then
    python3 "$gen" "${args[@]/7/8}" --out "$dir/$naming-c" > /dev/null
    cmp -s "$dir/$naming-a/results-summary.jsonl" "$dir/$naming-c/results-summary.jsonl" &&
      fail "$naming: seeds 7 and 8 gave the same fleet"
  fi

  python3 - "$dir/$naming-a" "$naming" <<'PY' || fail "$naming: content check failed"
import json, sys, os
d, naming = sys.argv[1], sys.argv[2]
nodes = {}
for i, line in enumerate(open(os.path.join(d, 'results-summary.jsonl'))):
    row = json.loads(line)
    assert list(row)[0] == 'node', 'line %d: "node" is not first' % (i + 1)
    assert all(isinstance(v, (int, float)) for k, v in row.items() if k != 'node'), 'non-number'
    nodes[row['node']] = row                      # a later line replaces an earlier one
truth = [json.loads(l) for l in open(os.path.join(d, 'truth.jsonl'))]
assert len(truth) == len(nodes) == 50, (len(truth), len(nodes))
ndef = 0
for t in truth:
    assert t['node'] in nodes, 'truth names unknown node %s' % t['node']
    if t['healthy']:
        continue
    ndef += 1
    assert t['size_pct'] in (3, 5, 8, 12, None), t
    assert t['component']['kind'] in ('gpu', 'hbm', 'pcie', 'nic', 'nvlink', 'disk', 'cpu', 'node')
    assert t['keys'], 'defect with no keys: %s' % t
    row = nodes[t['node']]
    for k in t['keys']:
        failed = t.get('failed') and (k.endswith('/return_code') or k not in row)
        assert k in row or failed, 'truth key %s absent from %s' % (k, t['node'])
assert ndef == 10, ndef
meta = json.load(open(os.path.join(d, 'meta.json')))
assert meta['naming'] == naming and meta['seed'] == 7 and meta['regime'] == 'all'
n = max(len(r) for r in nodes.values())
if naming == 'current':
    assert 600 <= n <= 910, 'keys per node: %d' % n
PY
  for r in superbench mad iqr; do
    python3 "$rules" --fleet "$dir/$naming-a/results-summary.jsonl" --rule $r \
      --out "$dir/$naming-a/f-$r.jsonl" > /dev/null
    if [[ $r == superbench ]]; then
      out=$(python3 "$rules" score --truth "$dir/$naming-a/truth.jsonl" --findings "$dir/$naming-a/f-$r.jsonl")
      grep -q '^overall' <<< "$out" || fail "$naming/$r: the scorer printed no table"
    fi
    python3 "$rules" score --truth "$dir/$naming-a/truth.jsonl" --findings "$dir/$naming-a/f-$r.jsonl" \
      --json | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["overall"]["defects"] == 10' ||
      fail "$naming/$r: bad JSON score"
  done
}
# The three generations in parallel (the test must stay under 10 s on a busy 2-core machine).
pids=()
for naming in v02 v04 current; do
  check_naming "$naming" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done
# Scoring the truth's own defects as findings is perfect.
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    t = json.loads(l)
    if not t["healthy"]:
        print(json.dumps({"node": t["node"], "component": t["component"], "keys": t["keys"]}))
' "$dir/current-a/truth.jsonl" > "$dir/oracle.jsonl"
python3 "$rules" score --truth "$dir/current-a/truth.jsonl" --findings "$dir/oracle.jsonl" --json |
  python3 -c 'import json,sys; o=json.load(sys.stdin)["overall"]; assert o["precision"] == o["recall"] == o["right_component_rate"] == 1.0, o' ||
  fail "the oracle does not score 1.0"
# The moderate regime's noise has a tail heavier than the clean one's (Student t of 8): of the GEMM
# values of healthy nodes, more lie beyond 3.5 robust sigmas of their key (0.84% against 0.17% at
# seed 7; a normal's share is 0.05%, robust sigmas of 48 values are themselves noisy), and no node
# is tagged noisy. The mixed regime's kernel launch times are heavier still (Student t of 3: 3.5%
# beyond), its GEMM values normal (0.49%; a normal key's share of 48 values reads 0.1-0.5%).
pids=()
for r in clean moderate mixed; do
  python3 "$gen" --nodes 50 --seed 7 --regime $r --out "$dir/tail-$r" > /dev/null & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a tail fleet was not generated"; done
python3 - "$dir" <<'PY' || fail "the moderate and mixed regimes' tails"
import json, os, statistics, sys
def beyond(regime, prefix):
    d = os.path.join(sys.argv[1], 'tail-' + regime)
    truth = [json.loads(line) for line in open(os.path.join(d, 'truth.jsonl'))]
    healthy = {t['node'] for t in truth if t['healthy']}
    cols = {}
    for row in map(json.loads, open(os.path.join(d, 'results-summary.jsonl'))):
        if row['node'] in healthy:
            for k, v in row.items():
                if k.startswith(prefix) and not k.endswith('return_code'):
                    cols.setdefault(k, []).append(v)
    far = n = 0
    for xs in cols.values():
        m = statistics.median(xs)
        s = 1.4826 * statistics.median(abs(x - m) for x in xs)
        if s > 0:
            far += sum(abs(x - m) > 3.5 * s for x in xs)
            n += len(xs)
    return far / n, sum('noisy' in t for t in truth)
clean, moderate = beyond('clean', 'gemm-flops/'), beyond('moderate', 'gemm-flops/')
assert moderate[1] == 0, moderate  # every node at one noise level
assert moderate[0] > 3 * clean[0] and moderate[0] > 0.004, (clean, moderate)
mixed_gemm, mixed_launch = beyond('mixed', 'gemm-flops/'), beyond('mixed', 'kernel-launch/')
assert mixed_gemm[1] == 0 and mixed_gemm[0] < 0.008, mixed_gemm
assert mixed_launch[0] > 3 * mixed_gemm[0] and mixed_launch[0] > 0.015, (mixed_gemm, mixed_launch)
PY
python3 "$gen" --nodes 5 --out "$dir/x" --sizes 3,banana > /dev/null 2>&1 && fail "a bad --sizes was accepted"
echo "fleetgen_test: ok"
