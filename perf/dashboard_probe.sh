#!/usr/bin/env bash
# The dashboard at fleet scale (docs/benchmarks.md, "Dashboard at fleet scale"): a fresh
# `vigil serve`, NODES simulated nodes uploaded (`vigil simulate fleet`, one class) and criteria
# learned; then the fleet page's size and time (the first page, a search, the last page), a node's
# page, and the time to start again on the same database (the ranking read back from the store).
#   perf/dashboard_probe.sh BUILD_DIR [NODES]      # NODES: 10000 unless given
set -euo pipefail
build=${1:?usage: perf/dashboard_probe.sh BUILD_DIR [NODES]}
nodes=${2:-10000}
source "$(dirname "$0")/serve_start.sh"
start_serve "$build"
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
"$build/vigil" simulate fleet --nodes "$nodes" --second-class 0 --out "$work/fleet.jsonl" \
  --truth "$work/truth.csv" >/dev/null
# In parts of 1,000 lines: one request per file, under the server's 64 MB body limit.
split -l 1000 "$work/fleet.jsonl" "$work/part."
for part in "$work"/part.*; do
  "$build/vigil" report "$part" --report "$url" --token-file "$work/tok" >/dev/null || true
done
curl -sf -X POST -H "Authorization: Bearer t" "$url/api/v1/criteria/learn" >/dev/null
# Median of 9 requests of each page, and its size.
probe() {
  local what=$1 path=$2 times
  times=$(for _ in $(seq 9); do curl -s -o /dev/null -w '%{time_total}\n' "$url$path"; done | sort -n)
  printf '%-28s %8s bytes, median %.1f ms (min %.1f, max %.1f)\n' "$what" \
    "$(curl -s "$url$path" | wc -c)" "$(sed -n 5p <<<"$times" | awk '{print $1*1000}')" \
    "$(head -1 <<<"$times" | awk '{print $1*1000}')" "$(tail -1 <<<"$times" | awk '{print $1*1000}')"
}
echo "$nodes nodes"
probe "fleet page (100 nodes)" "/"
probe "search ?q=node-00" "/?q=node-00"
probe "last page (per_page=1000)" "/?per_page=1000&page=$(((nodes + 999) / 1000))"
first=$(curl -s "$url/" | grep -o 'data-node="[^"]*"' | head -1 | cut -d'"' -f2)
probe "node page of the worst" "/nodes/$first"
kill "$server"
wait "$server" 2>/dev/null || true
t0=$(date +%s.%N)
rm -f "$work/port"
"$build/vigil" --quiet serve --db "$work/fleet.db" --listen 127.0.0.1:0 --port-file "$work/port" \
  --token-file "$work/tok" 2>>"$work/serve.log" &
server=$!
while [[ ! -s $work/port ]]; do sleep 0.01; done
printf 'start again (ranking read back): %.2f s\n' "$(echo "$(date +%s.%N) - $t0" | bc)"
