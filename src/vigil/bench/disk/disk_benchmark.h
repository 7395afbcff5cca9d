// disk: sequential write and read bandwidth and random 4 KiB read IOPS of the filesystem that
// holds the scratch directory, bypassing the page cache (O_DIRECT).
#pragma once

#include <memory>

#include "vigil/bench/benchmark.h"

namespace vigil {

std::unique_ptr<Benchmark> MakeDiskBenchmark();

}  // namespace vigil
