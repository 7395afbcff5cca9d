#!/bin/bash
# Packs what a GPU machine without Vigil's build dependencies needs to run its GPU checks: the
# release `vigil` (built with CUDA here), the `gpu` test program, and every shared library they
# load except the C and C++ runtimes, which the target has. Used with on_device.sh, e.g. through
# the device tool: `perf/gpu/bundle.sh .gpu`, then run `perf/gpu/on_device.sh .gpu` there with
# .gpu carried (docs/benchmarks.md, "GPU benchmarks").
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-.gpu}

cmake --preset release -DVIGIL_CUDA=ON >/dev/null
cmake --build --preset release --target vigil
cmake --preset dev -DVIGIL_CUDA=ON >/dev/null
cmake --build --preset dev --target gpu_test

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp build/release/vigil "$out/bin/"
cp build/dev/src/vigil/bench/gpu_test "$out/bin/"
strip "$out/bin/gpu_test"
ldd "$out"/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
  case $(basename "$lib") in
    libc.so* | libm.so* | libstdc++.so* | libgcc_s.so* | ld-linux* | libpthread.so* | libdl.so* | librt.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
du -sh "$out"
