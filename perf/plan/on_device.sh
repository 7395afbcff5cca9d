#!/bin/bash
# Measures on a GPU machine what perf/plan/compare.py scores `vigil plan` against: Vigil's own
# profile of the GPU (GEMM, HBM and host copies: the figures `--hardware` reads) and PyTorch's
# training steps and inference latencies (perf/plan/measure.py), in one run on the same GPU.
# Run from a bundle made by perf/gpu/bundle.sh, e.g. through the device tool with .gpu carried:
# `perf/plan/on_device.sh .gpu`. Results go to $OUT (or ./plan-out).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
bundle=$(realpath "${1:-.gpu}")
out=${OUT:-$PWD/plan-out}
mkdir -p "$out"
# shellcheck source=perf/gpu/env.sh
source perf/gpu/env.sh

nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv | tee "$out/gpus.csv"
echo "== Vigil's profile of the GPU"
"$bundle/bin/vigil" run --suite quick --bench gpu-gemm,gpu-membw,gpu-copy --out "$out/vigil-profile.json" 2>&1 |
  tee "$out/vigil-profile.log"
profile=${PIPESTATUS[0]}
echo "== PyTorch training steps and inference latencies"
PYTHONUNBUFFERED=1 python3 perf/plan/measure.py --out "$out/plan-measured.json" 2>&1 | tee "$out/measure.log"
measured=${PIPESTATUS[0]}
echo "vigil run: exit $profile; measure.py: exit $measured"
[ "$profile" -le 1 ] && [ "$measured" -eq 0 ]
