#include "vigil/bench/node_run.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "vigil/bench/cuda/device_hold.h"
#include "vigil/bench/cuda/gpu_presence.h"
#include "vigil/bench/inventory.h"
#include "vigil/core/clock.h"

namespace vigil {

Result<NodeResults> RunNode(const std::vector<const Benchmark*>& selected,
                            const RunnerOptions& runner, const NodeRunOptions& options,
                            const RunEvents& events, const std::atomic<bool>& interrupted,
                            Clock& clock) {
  NodeResults doc;
  doc.node = options.node;
  doc.vigil_version = options.vigil_version;
  doc.suite = std::string(SuiteName(runner.suite));
  doc.start_time = FormatUtc(clock.WallSeconds());
  doc.inventory = ReadInventory(options.host_root);

  // The GPUs stay initialised between the benchmarks' processes (device_hold.h), and which of
  // them the driver reaches is looked at before and after the benchmarks (gpu_presence.h): for
  // the whole node, so not when --gpus or CUDA_VISIBLE_DEVICES chose some of its GPUs.
  const bool gpus_measured = std::any_of(
      selected.begin(), selected.end(), [](const Benchmark* b) { return b->component() == "gpu"; });
  const std::unique_ptr<GpuDeviceHold> hold =
      gpus_measured ? GpuDeviceHold::Start(options.host_root + "/dev") : nullptr;
  const bool whole_node = gpus_measured && runner.gpus.empty();
  const std::string sysfs = options.host_root + "/sys";
  const double presence_start = clock.MonotonicSeconds();
  const GpuPresenceReading before = whole_node ? ReadGpuPresence(sysfs) : GpuPresenceReading{};

  VIGIL_ASSIGN_OR_RETURN(doc.benchmarks,
                         RunBenchmarks(selected, runner, events, interrupted, clock));
  if (whole_node) {
    const GpuPresenceReading after = ReadGpuPresence(sysfs);
    if (std::optional<BenchmarkRecord> presence =
            GpuPresenceRecord(before, after, clock.MonotonicSeconds() - presence_start)) {
      if (presence->status != BenchStatus::kOk) {
        spdlog::error("gpu-presence failed: {}", presence->error);
      }
      doc.benchmarks.push_back(*std::move(presence));
    }
  }
  doc.end_time = FormatUtc(clock.WallSeconds());
  return doc;
}

}  // namespace vigil
