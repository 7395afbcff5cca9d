#!/bin/bash
# The whole fleet service for 10 minutes (docs/benchmarks.md, "The fleet service for 10 minutes"):
# a fresh `vigil serve` takes serve_load's open-loop uploads through HTTP while this script samples
# the server's RSS (/proc/PID/status) and the size of the database's -wal file every second, then
# stops the server with SIGTERM and times its exit (the last checkpoint included).
#
#   perf/serve_soak.sh BUILD_DIR [SECONDS] [RATE]      e.g. perf/serve_soak.sh build/release
#
# Prints a line every 30 s, then the maxima; the samples are left in $WORK/samples.tsv.
set -euo pipefail
build=${1:?usage: perf/serve_soak.sh BUILD_DIR [SECONDS] [RATE]}
seconds=${2:-600}
rate=${3:-1000}
source "$(dirname "$0")/serve_start.sh"
start_serve "$build"
trap 'kill $server 2>/dev/null || true' EXIT

"$build/perf/serve_load" --url "$url" --token-file "$work/tok" \
  --rate "$rate" --seconds "$seconds" >"$work/load.log" 2>&1 &
load=$!

printf 't_s\trss_mb\twal_mb\n' >"$work/samples.tsv"
t0=$(date +%s.%N)
while kill -0 $load 2>/dev/null; do
  rss=$(awk '/^VmRSS/ {print $2 / 1024}' "/proc/$server/status")
  wal=$(stat -c %s "$work/fleet.db-wal" 2>/dev/null || echo 0)
  t=$(echo "$(date +%s.%N) - $t0" | bc)
  printf '%.0f\t%.1f\t%.1f\n' "$t" "$rss" "$(echo "$wal / 1048576" | bc -l)" >>"$work/samples.tsv"
  awk -F'\t' 'END { if ($1 % 30 == 0) printf "%4d s: RSS %7.1f MB, WAL %6.1f MB\n", $1, $2, $3 }' \
    "$work/samples.tsv"
  sleep 1
done
wait $load && load_rc=0 || load_rc=$?
cat "$work/load.log"

stop0=$(date +%s.%N)
kill -TERM $server
wait $server && serve_rc=0 || serve_rc=$?
stop=$(echo "$(date +%s.%N) - $stop0" | bc)
trap - EXIT
awk -F'\t' -v stop="$stop" -v rc="$serve_rc" 'NR > 1 {
    if ($2 > rss) rss = $2; if ($3 > wal) wal = $3; last_rss = $2 }
  END { printf "largest RSS %.1f MB (%.1f MB at the end of the load), largest WAL %.1f MB; " \
        "stop %.2f s (exit %d)\n", rss, last_rss, wal, stop, rc }' "$work/samples.tsv"
echo "database: $(du -h "$work/fleet.db" | cut -f1); samples in $work/samples.tsv"
exit $load_rc
