#!/bin/bash
# The server's CPU per upload (docs/benchmarks.md, "CPU per upload"): a fresh `vigil serve` is
# seeded and learns as under serve_load, then takes RATE uploads/s for SECONDS; the server's CPU
# time (user + system, /proc/PID/stat) is read when the seeding's learn is done and when the load
# ends, and divided by the uploads. Then the median of 10 GETs each of /metrics and of the
# dashboard's fleet page over the 10,000 nodes.
#
#   perf/serve_cpu.sh BUILD_DIR [SECONDS] [RATE]      e.g. perf/serve_cpu.sh build/release 20 500
set -euo pipefail
build=${1:?usage: perf/serve_cpu.sh BUILD_DIR [SECONDS] [RATE]}
seconds=${2:-20}
rate=${3:-500}
source "$(dirname "$0")/serve_start.sh"
start_serve "$build"
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
ticks=$(getconf CLK_TCK)
cpu() { awk -v t="$ticks" '{ print ($14 + $15) / t }' "/proc/$server/stat"; }

stdbuf -oL "$build/perf/serve_load" --url "$url" --token-file "$work/tok" --rate "$rate" \
  --seconds "$seconds" >"$work/load.log" 2>&1 &
load=$!
until grep -q '^learn from' "$work/load.log"; do
  kill -0 $load 2>/dev/null || { cat "$work/load.log"; exit 3; }
  sleep 0.05
done
before=$(cpu)
wait $load
after=$(cpu)
grep -E '^(learn|uploads|latency|achieved|GET /api)' "$work/load.log" || cat "$work/load.log"
uploads=$((seconds * rate))
awk -v a="$after" -v b="$before" -v n="$uploads" \
  'BEGIN { printf "server CPU after the seeding: %.2f s for %d uploads = %.3f ms per upload\n", a - b, n, (a - b) / n * 1000 }'
for path in /metrics /; do
  for _ in $(seq 10); do
    curl -s -o /dev/null -w '%{time_total}\n' "$url$path"
  done | sort -n | awk -v p="$path" '{ t[NR] = $1 } END { printf "GET %s: median %.1f ms, max %.1f ms\n", p, (t[5] + t[6]) / 2 * 1000, t[NR] * 1000 }'
done
