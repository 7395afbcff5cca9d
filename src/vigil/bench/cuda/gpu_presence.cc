#include "vigil/bench/cuda/gpu_presence.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr std::string_view kNvidiaVendor = "0x10de";
constexpr std::string_view kBenchmark = "gpu-presence";

std::string ReadTrimmed(const std::filesystem::path& path) {
  Result<std::string> text = ReadFile(path.string());
  return text.ok() ? std::string(Trim(*text)) : "";
}

// The leading number of a sysfs value ("16", "32.0 GT/s PCIe"); empty when there is none, or for
// a link that reads "Unknown" (a device in a low power state).
std::optional<double> LeadingNumber(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0)) return std::nullopt;
  return v;
}

// A display (0x0300) or 3D (0x0302) controller: a GPU, not its audio function or an NVSwitch.
bool IsGpuClass(const std::string& pci_class) { return pci_class.rfind("0x03", 0) == 0; }

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

std::vector<PciGpuInfo> ReadPciGpus(const std::string& sysfs_root) {
  namespace fs = std::filesystem;
  std::vector<PciGpuInfo> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sysfs_root + "/bus/pci/devices", ec)) {
    const fs::path dir = entry.path();
    if (ReadTrimmed(dir / "vendor") != kNvidiaVendor || !IsGpuClass(ReadTrimmed(dir / "class"))) {
      continue;
    }
    PciGpuInfo g;
    g.bus_id = dir.filename().string();
    std::error_code link_ec;
    const fs::path driver = fs::read_symlink(dir / "driver", link_ec);
    if (!link_ec) g.driver = driver.filename().string();
    g.link_width = LeadingNumber(ReadTrimmed(dir / "current_link_width"));
    g.link_width_max = LeadingNumber(ReadTrimmed(dir / "max_link_width"));
    g.link_speed_gts = LeadingNumber(ReadTrimmed(dir / "current_link_speed"));
    g.link_speed_max_gts = LeadingNumber(ReadTrimmed(dir / "max_link_speed"));
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const PciGpuInfo& a, const PciGpuInfo& b) { return a.bus_id < b.bus_id; });
  return out;
}

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
