#!/bin/bash
# Every GPU measurement of perf/ in one call of the device tool, whose time is short: what a
# transformer block of the plan's published tables costs besides its products
# (perf/plan/block_costs.py), the GEMM shapes of those tables (perf/plan/gemm_shapes.py), the GPU
# checks and PyTorch reference (perf/gpu/on_device.sh), and PyTorch's training and inference
# beside `vigil plan` (perf/plan/on_device.sh), each under its own time limit, in that order. The
# tool brings back at most 8 files, so every step's logs and results are packed into
# $OUT/results.tgz, again after each step: a call stopped at its limit keeps what finished. Run
# from a bundle made by perf/gpu/bundle.sh, e.g. `perf/all_on_device.sh .gpu 540` with .gpu
# carried; the second argument is the seconds the whole run may take (540). Exits 1 when a step
# failed or ran out of time, 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bundle=$(realpath "${1:-.gpu}")
budget=${2:-540}
final=${OUT:-$PWD/device-out}
work=$(mktemp -d)
mkdir -p "$final"

pack() { tar czf "$final/results.tgz.part" -C "$work" . && mv "$final/results.tgz.part" "$final/results.tgz"; }

# step NAME LIMIT COMMAND...: runs COMMAND with OUT set to the step's folder, at most LIMIT seconds
# and never past the budget. The step's own deadline (VIGIL_DEADLINE_S, read by on_device.sh) is
# 15 s earlier, so that its own time limits end its children before this one ends it.
failed=0
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - SECONDS))
  ((limit > left)) && limit=$left
  if ((limit < 10)); then
    echo "$name: skipped, no time left" | tee -a "$work/steps.txt"
    failed=1
    return
  fi
  mkdir -p "$work/$name"
  echo "== $name (at most $limit s, $SECONDS s in)"
  OUT=$work/$name VIGIL_DEADLINE_S=$((limit - 15)) timeout -k 5 "$limit" "$@" >"$work/$name/stdout.log" 2>&1
  local rc=$?
  ((rc == 0)) || failed=1
  echo "$name: exit $rc after $SECONDS s" | tee -a "$work/steps.txt"
  tail -n 12 "$work/$name/stdout.log"
  pack
}

nvidia-smi >"$work/nvidia-smi.txt" 2>&1
step block-costs 150 env PYTHONUNBUFFERED=1 python3 perf/plan/block_costs.py --out "$work/block-costs/block-costs.json"
step gemm-shapes 100 env PYTHONUNBUFFERED=1 python3 perf/plan/gemm_shapes.py --out "$work/gemm-shapes/gemm-shapes.json"
step gpu 240 env VIGIL_ROUNDS="${VIGIL_ROUNDS:-2}" perf/gpu/on_device.sh "$bundle"
step plan 400 perf/plan/on_device.sh "$bundle"
nvidia-smi --query-gpu=temperature.gpu,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv \
  >>"$work/nvidia-smi.txt" 2>&1
pack
cat "$work/steps.txt"
exit "$failed"
