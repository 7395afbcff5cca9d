#!/usr/bin/env bash
# Measures Vigil's host benchmarks against well-known tools on this machine, in one session,
# alternating the two sides round by round so that drift hits both alike, and prints a Markdown
# table of medians and ratios for docs/benchmarks.md.
#
#   perf/compare_host.sh [ROUNDS] [SCRATCH_DIR]      (default 5 rounds, /var/tmp)
#
# Conventions, made identical on both sides:
#   copy   Vigil's cpu-stream copy with one thread (STREAM counts read + write bytes, so its figure
#          is halved here) against mbw's MEMCPY test (bytes copied once, MiB/s turned into GB/s),
#          both on 512 MiB arrays; mbw is single-threaded. mbw's median iteration is used.
#   disk   Vigil's disk against fio with the same file size, block size, O_DIRECT, synchronous
#          I/O (psync) and the same number of threads (fio --thread) for random reads.
#   list   `vigil bench list` wall time, median of 50 starts.
#   quick  `vigil run` with the quick suite, wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
scratch="${2:-/var/tmp}"
vigil=./build/release/vigil
[ -x "$vigil" ] || { echo "build first: make build" >&2; exit 3; }
command -v mbw >/dev/null && command -v fio >/dev/null || { echo "needs mbw and fio (scripts/setup.sh)" >&2; exit 3; }
command -v python3 >/dev/null || { echo "needs python3 to read JSON" >&2; exit 3; }
work=$(mktemp -d "$scratch/vigil-compare-XXXXXX")
trap 'rm -rf "$work"' EXIT

median() { python3 -c "import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
metric() {  # metric FILE KEY -> value
  python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
for b in d['benchmarks']:
    for m in b['metrics']:
        if m['key']==sys.argv[2]: print(m['value'])" "$1" "$2"
}
fio_json() {  # fio_json FIELD -> value from fio's JSON on stdin
  python3 -c "
import json,sys
j=json.load(sys.stdin)['jobs'][0]
print({'write':j['write']['bw_bytes']/1e6,'read':j['read']['bw_bytes']/1e6,'iops':j['read']['iops']}[sys.argv[1]])" "$1"
}

size=256M; jobs=16; rtime=2
declare -a v_copy m_copy v_w f_w v_r f_r v_i f_i
for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  "$vigil" -q run --bench cpu-stream --set cpu-stream.threads=1 --set cpu-stream.array_size=512M \
    --out "$work/s.json" >/dev/null
  v_copy+=("$(python3 -c "print($(metric "$work/s.json" cpu-stream/copy_gbps) / 2)")")
  mib=$(mbw -q -n 10 -t0 512 | awk '/^[0-9]/ {print $9}' | sort -n | awk '{a[NR]=$1} END {print (a[int((NR+1)/2)]+a[int(NR/2)+1])/2}')
  m_copy+=("$(python3 -c "print($mib * 1048576 / 1e9)")")

  "$vigil" -q run --bench disk --scratch "$work" --set disk.file_size=$size --set disk.random_jobs=$jobs \
    --set disk.random_time=$rtime --set disk.repetitions=3 --out "$work/d.json" >/dev/null
  v_w+=("$(metric "$work/d.json" disk/seq_write_mbps)")
  v_r+=("$(metric "$work/d.json" disk/seq_read_mbps)")
  v_i+=("$(metric "$work/d.json" disk/rand_read_iops)")
  f="$work/fio.dat"
  common=(--filename="$f" --direct=1 --ioengine=psync --size=$size --output-format=json)
  fio --name=layout "${common[@]}" --rw=write --bs=1M >/dev/null
  f_w+=("$(fio --name=w "${common[@]}" --rw=write --bs=1M --loops=3 | fio_json write)")
  f_r+=("$(fio --name=r "${common[@]}" --rw=read --bs=1M --loops=3 | fio_json read)")
  f_i+=("$(fio --name=rr "${common[@]}" --rw=randread --bs=4k --numjobs=$jobs --thread \
           --group_reporting --time_based --runtime=$rtime | fio_json iops)")
  rm -f "$f"
done

list_ms=()
for ((i = 0; i < 50; i++)); do
  t0=$(date +%s%N); "$vigil" bench list >/dev/null; t1=$(date +%s%N)
  list_ms+=("$(( (t1 - t0) / 1000 ))")
done
t0=$(date +%s%N)
"$vigil" -q run --scratch "$work" --out "$work/q.json" >/dev/null
t1=$(date +%s%N)

row() {  # row NAME UNIT VIGIL_MEDIAN REF_MEDIAN REF_NAME
  printf '| %s | %.1f %s | %.1f %s (%s) | %.3f |\n' "$1" "$3" "$2" "$4" "$2" "$5" \
    "$(python3 -c "print($3 / $4)")"
}
echo
echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs; rounds: $rounds; $(date -u +%Y-%m-%d)"
echo
echo "| figure | Vigil (median) | reference (median) | ratio |"
echo "|---|---|---|---|"
row "memory copy, 1 thread, 512 MiB" "GB/s" "$(median "${v_copy[@]}")" "$(median "${m_copy[@]}")" "mbw -t0"
row "sequential write, 1 MiB, O_DIRECT" "MB/s" "$(median "${v_w[@]}")" "$(median "${f_w[@]}")" "fio"
row "sequential read, 1 MiB, O_DIRECT" "MB/s" "$(median "${v_r[@]}")" "$(median "${f_r[@]}")" "fio"
row "random read 4 KiB, $jobs threads" "IOPS" "$(median "${v_i[@]}")" "$(median "${f_i[@]}")" "fio"
echo
printf '`vigil bench list`: %.1f ms (median of 50 starts). `vigil run` quick suite: %.1f s.\n' \
  "$(python3 -c "print($(median "${list_ms[@]}") / 1000)")" "$(python3 -c "print(($t1 - $t0) / 1e9)")"
