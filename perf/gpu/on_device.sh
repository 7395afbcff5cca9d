#!/bin/bash
# Runs Vigil's GPU checks on a GPU machine from a bundle made by bundle.sh, and PyTorch's
# reference figures on the same GPU in the same run (issue 3's targets): the gpu-labelled tests,
# the quick GPU suite (timed: it must take under 2 minutes on one GPU), gpu-copy's full suite
# (bidirectional figures), perf/gpu/reference.py's table of ratios, the health suite's time
# (issue 23: ten starts of `vigil run --suite health`), and the gpu tests once more under
# compute-sanitizer's memcheck where the machine has it. Logs and results go to $OUT (or
# ./gpu-out). VIGIL_ROUNDS sets reference.py's rounds (5); VIGIL_DEADLINE_S the seconds after the
# start by which the sanitizer must end (540: within the device tool's 10-minute call).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
bundle=$(realpath "${1:-.gpu}")
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
# shellcheck source=perf/gpu/env.sh
source perf/gpu/env.sh

nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,clocks.max.sm --format=csv | tee "$out/gpus.csv"

echo "== gpu tests"
"$bundle/bin/gpu_test" 2>&1 | tee "$out/gpu_test.log" | tail -n 25
tests=${PIPESTATUS[0]}

gpu_benches=gpu-health,gpu-gemm,gpu-stress,gpu-membw,gpu-launch,gpu-copy,nccl
echo "== quick GPU suite"
start=$(date +%s%N)
"$bundle/bin/vigil" run --suite quick --bench "$gpu_benches" --out "$out/vigil-quick.json" 2>&1 |
  tee "$out/vigil-quick.log"
quick=${PIPESTATUS[0]}
ms=$((($(date +%s%N) - start) / 1000000))
seconds=$((ms / 1000)).$(printf %03d $((ms % 1000)))
echo "quick GPU suite: ${seconds} s wall, exit $quick" | tee "$out/quick-time.txt"

echo "== gpu-copy, full suite"
"$bundle/bin/vigil" run --suite full --bench gpu-copy --out "$out/vigil-copy-full.json" 2>&1 |
  tee "$out/vigil-copy-full.log"

rounds=${VIGIL_ROUNDS:-5}
echo "== PyTorch on the same GPU, alternating with Vigil's quick GPU suite ($rounds rounds)"
PYTHONUNBUFFERED=1 python3 perf/gpu/reference.py --rounds "$rounds" --vigil "$out/vigil-rounds.json" \
  --vigil-command "'$bundle/bin/vigil' run --suite quick --bench gpu-gemm,gpu-membw,gpu-copy --out '$out/vigil-rounds.json'" \
  --out "$out/reference.json" | tee "$out/table.md"
reference=${PIPESTATUS[0]}

echo "== health suite, ten starts"
"$bundle/bin/vigil" run --suite health --out "$out/vigil-health.json" 2>&1 | tee "$out/vigil-health.log"
health=${PIPESTATUS[0]}
for _ in $(seq 10); do
  start=$(date +%s%N)
  "$bundle/bin/vigil" -q run --suite health >/dev/null 2>&1
  echo $((($(date +%s%N) - start) / 1000000))
done | sort -n | tee "$out/health-ms.txt" | awk '{ms[NR] = $1} END {
  printf "health suite: median %d ms, max %d ms over %d starts\n",
    (ms[int((NR + 1) / 2)] + ms[int(NR / 2) + 1]) / 2, ms[NR], NR}' |
  tee "$out/health-time.txt"

sanitizer=skipped
# Within what is left of the deadline, or not at all.
left=$((${VIGIL_DEADLINE_S:-540} - SECONDS))
if command -v compute-sanitizer >/dev/null && ((left > 60)); then
  echo "== gpu tests under compute-sanitizer (memcheck), at most $left s"
  timeout -k 5 "$left" compute-sanitizer --tool memcheck --leak-check no --error-exitcode 3 \
    "$bundle/bin/gpu_test" --gtest_filter='-*Stress*' >"$out/sanitizer.log" 2>&1
  sanitizer=$?
  tail -n 5 "$out/sanitizer.log"
fi

echo "gpu tests exit $tests, quick suite exit $quick (${seconds} s), reference exit $reference," \
  "health suite exit $health, sanitizer $sanitizer"
[[ $tests == 0 && $quick == 0 && $reference == 0 && $health == 0 ]] &&
  [[ $sanitizer == skipped || $sanitizer == 0 ]]
