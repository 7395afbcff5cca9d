// One node's run, as `vigil run` makes it: the benchmarks in their isolated processes (runner.h)
// between two looks at which GPUs the driver reaches (cuda/gpu_presence.h), with the GPUs held
// initialised meanwhile (cuda/device_hold.h), into a results document with the node's inventory.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "vigil/bench/benchmark.h"
#include "vigil/bench/runner.h"
#include "vigil/core/clock.h"
#include "vigil/core/status.h"
#include "vigil/results/document.h"

namespace vigil {

struct NodeRunOptions {
  std::string node;           // the node's name in the document
  std::string vigil_version;  // the document's vigil_version
  // Read the host's /sys, /proc and /dev below this directory ("": this machine's own).
  std::string host_root;
};

// Runs `selected` with `runner`'s options and returns the node's results document: start and end
// times from `clock`, the inventory, one record per benchmark, and a "gpu-presence" record when
// a GPU benchmark ran over the whole node (not when runner.gpus chose some of its GPUs) and PCI
// shows NVIDIA GPUs. Errors: RunBenchmarks' (Cancelled when `interrupted` was set: scratch files
// are removed and no document is made). Not thread-safe: it forks (the device hold and the
// benchmarks' processes); call it from a program's main thread.
Result<NodeResults> RunNode(const std::vector<const Benchmark*>& selected,
                            const RunnerOptions& runner, const NodeRunOptions& options,
                            const RunEvents& events, const std::atomic<bool>& interrupted,
                            Clock& clock);

}  // namespace vigil
