#!/bin/bash
# Runs Vigil's GPU checks on a GPU machine from a bundle made by bundle.sh, and PyTorch's
# reference figures on the same GPU in the same run (issue 3's targets): the gpu-labelled tests,
# the quick GPU suite (timed: it must take under 2 minutes on one GPU), gpu-copy's full suite
# (bidirectional figures), then perf/gpu/reference.py's table of ratios. Logs and results go to
# $OUT (or ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
bundle=$(realpath "${1:-.gpu}")
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
export CUDA_DEVICE_ORDER=PCI_BUS_ID

# cuBLASLt and NCCL are dlopen'ed: find the CUDA 13 libraries the machine has (toolkit or wheels).
libs=$bundle/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
  $(python3 -c 'import nvidia, os; [print(os.path.join(p, d, "lib")) for p in nvidia.__path__ for d in os.listdir(p)]' 2>/dev/null); do
  # Either library may be in a folder of its own (the wheels put cuBLAS and NCCL apart).
  if compgen -G "$d/libcublasLt.so.13*" >/dev/null || compgen -G "$d/libnccl.so.2*" >/dev/null; then
    libs=$libs:$d
  fi
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

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

echo "== PyTorch on the same GPU"
PYTHONUNBUFFERED=1 python3 perf/gpu/reference.py --vigil "$out/vigil-quick.json" \
  --out "$out/reference.json" | tee "$out/table.md"
reference=${PIPESTATUS[0]}

echo "gpu tests exit $tests, quick suite exit $quick (${seconds} s), reference exit $reference"
[[ $tests == 0 && $quick == 0 && $reference == 0 ]]
