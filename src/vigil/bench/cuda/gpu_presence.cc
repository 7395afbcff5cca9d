#include "vigil/bench/cuda/gpu_presence.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace vigil {
namespace {

constexpr std::string_view kBenchmark = "gpu-presence";

// Lanes short of the maximum width at one look; empty when sysfs does not say.
std::optional<double> LanesShort(const PciGpuInfo& g) {
  if (!g.link_width || !g.link_width_max) return std::nullopt;
  return std::max(0.0, *g.link_width_max - *g.link_width);
}

const PciGpuInfo* Find(const std::vector<PciGpuInfo>& gpus, const std::string& bus_id) {
  auto it = std::find_if(gpus.begin(), gpus.end(),
                         [&](const PciGpuInfo& g) { return g.bus_id == bus_id; });
  return it == gpus.end() ? nullptr : &*it;
}

// Why the driver did not reach `bus_id` at look `r`; empty when it did.
std::string Unreached(const GpuPresenceReading& r, const std::string& bus_id) {
  if (!r.driver.status.ok()) return std::string(r.driver.status.message());
  const auto& ids = r.driver.bus_ids;
  if (std::find(ids.begin(), ids.end(), bus_id) != ids.end()) return "";
  if (!r.driver.errors.empty()) {
    return fmt::format("the driver does not see it ({})", fmt::join(r.driver.errors, "; "));
  }
  return fmt::format("the driver sees {} GPU(s), not this one", ids.size());
}

}  // namespace

GpuPresenceReading ReadGpuPresence(const std::string& sysfs_root, const std::string& nvml_path) {
  GpuPresenceReading r;
  r.pci = ReadPciGpus(sysfs_root);
  if (!r.pci.empty()) r.driver = nvml::ReadDriverGpus(nvml_path);
  return r;
}

std::optional<BenchmarkRecord> GpuPresenceRecord(const GpuPresenceReading& before,
                                                 const GpuPresenceReading& after,
                                                 double duration_s) {
  std::set<std::string> bus_ids;
  for (const auto* look : {&before, &after}) {
    for (const PciGpuInfo& g : look->pci) bus_ids.insert(g.bus_id);
  }
  if (bus_ids.empty()) return std::nullopt;
  BenchmarkRecord rec;
  rec.name = std::string(kBenchmark);
  rec.component = "gpu";
  rec.duration_s = duration_s;
  std::vector<std::string> problems;
  int index = 0;
  for (const std::string& id : bus_ids) {
    const PciGpuInfo* first = Find(before.pci, id);
    const PciGpuInfo* last = Find(after.pci, id);
    std::string why;
    if (first != nullptr && last == nullptr) {
      why = "left PCI during the run (fell off the bus)";
    } else if (std::string w = Unreached(before, id); !w.empty()) {
      why = std::move(w);
    } else {
      why = Unreached(after, id);
      if (!why.empty()) why = "lost during the run: " + why;
    }
    const ComponentIndex at{index, std::nullopt};
    rec.metrics.push_back(
        Metric{MetricKey{rec.name, "missing", at}, why.empty() ? 0.0 : 1.0, "", false, {}});
    std::optional<double> short_by;
    for (const PciGpuInfo* g : {first, last}) {
      if (g == nullptr) continue;
      if (const std::optional<double> s = LanesShort(*g)) {
        short_by = short_by ? std::min(*short_by, *s) : *s;
      }
    }
    if (short_by) {
      rec.metrics.push_back(
          Metric{MetricKey{rec.name, "pcie_lanes_missing", at}, *short_by, "lanes", false, {}});
    }
    if (!why.empty()) problems.push_back(fmt::format("GPU {} ({}) missing: {}", index, id, why));
    if (short_by && *short_by > 0) {
      const PciGpuInfo& g = first != nullptr ? *first : *last;
      problems.push_back(fmt::format("GPU {} ({}) PCIe link x{} of x{}", index, id,
                                     g.link_width_max.value_or(0) - *short_by,
                                     g.link_width_max.value_or(0)));
    }
    ++index;
  }
  if (!problems.empty()) {
    rec.status = BenchStatus::kFailed;
    rec.return_code = return_code::kFailed;
    rec.error = fmt::format("{}", fmt::join(problems, "; "));
  }
  return rec;
}

}  // namespace vigil
