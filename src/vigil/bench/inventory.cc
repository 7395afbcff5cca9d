#include "vigil/bench/inventory.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

// Vector and matrix extensions worth recording, as /proc/cpuinfo names them (x86 and Arm).
constexpr std::string_view kVectorFlags[] = {
    "sse2",        "avx",         "avx2",     "fma",      "avx512f", "avx512bw", "avx512vl",
    "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "asimd",   "sve",      "sve2"};

constexpr std::string_view kNvidiaVendor = "0x10de";

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

// "key : value" lines as /proc/cpuinfo and the driver's information files write them.
std::string ValueOf(std::string_view line, std::string_view key) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || Trim(line.substr(0, colon)) != key) return "";
  return std::string(Trim(line.substr(colon + 1)));
}

void ReadCpuInfo(const std::string& root, Inventory& inv) {
  Result<std::string> text = ReadFile(root + "/proc/cpuinfo");
  if (!text.ok()) return;
  std::istringstream in(*text);
  std::string line, physical = "0";
  std::set<std::string> sockets, cores;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    if (!ValueOf(line, "processor").empty()) ++inv.threads;
    if (std::string v = ValueOf(line, "model name"); !v.empty() && inv.cpu_model.empty()) {
      inv.cpu_model = v;
    }
    if (std::string v = ValueOf(line, "physical id"); !v.empty()) {
      physical = v;
      sockets.insert(v);
    }
    if (std::string v = ValueOf(line, "core id"); !v.empty()) cores.insert(physical + "/" + v);
    std::string f = ValueOf(line, "flags");
    if (f.empty()) f = ValueOf(line, "Features");  // Arm
    if (!f.empty() && flags.empty()) {
      std::istringstream fs(f);
      for (std::string w; fs >> w;) flags.insert(w);
    }
  }
  inv.sockets = std::max<int>(1, static_cast<int>(sockets.size()));
  inv.cores = cores.empty() ? inv.threads : static_cast<int>(cores.size());
  for (std::string_view f : kVectorFlags) {
    if (flags.contains(std::string(f))) inv.cpu_vector_extensions.emplace_back(f);
  }
}

void ReadNvidia(const std::string& root, Inventory& inv) {
  namespace fs = std::filesystem;
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..."
  const std::string version = ReadTrimmed(root + "/proc/driver/nvidia/version");
  if (const size_t at = version.find("Kernel Module"); at != std::string::npos) {
    std::istringstream in(version.substr(at + 13));
    in >> inv.gpu_driver;
  }
  std::error_code ec;
  std::vector<GpuInfo> gpus;
  for (const auto& entry : fs::directory_iterator(root + "/proc/driver/nvidia/gpus", ec)) {
    Result<std::string> text = ReadFile((entry.path() / "information").string());
    GpuInfo g;
    g.bus_id = entry.path().filename().string();
    if (text.ok()) {
      std::istringstream in(*text);
      for (std::string line; std::getline(in, line);) {
        if (std::string v = ValueOf(line, "Model"); !v.empty()) g.name = v;
        if (std::string v = ValueOf(line, "Bus Location"); !v.empty()) g.bus_id = v;
      }
    }
    gpus.push_back(std::move(g));
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuInfo& a, const GpuInfo& b) { return a.bus_id < b.bus_id; });
  for (size_t i = 0; i < gpus.size(); ++i) gpus[i].index = static_cast<int>(i);
  inv.gpus = std::move(gpus);
}

}  // namespace

std::vector<PciGpuInfo> ReadPciGpus(const std::string& sysfs_root) {
  namespace fs = std::filesystem;
  std::vector<PciGpuInfo> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(sysfs_root + "/bus/pci/devices", ec)) {
    const fs::path dir = entry.path();
    if (ReadTrimmed((dir / "vendor").string()) != kNvidiaVendor ||
        !IsGpuClass(ReadTrimmed((dir / "class").string()))) {
      continue;
    }
    PciGpuInfo g;
    g.bus_id = dir.filename().string();
    std::error_code link_ec;
    const fs::path driver = fs::read_symlink(dir / "driver", link_ec);
    if (!link_ec) g.driver = driver.filename().string();
    g.link_width = LeadingNumber(ReadTrimmed((dir / "current_link_width").string()));
    g.link_width_max = LeadingNumber(ReadTrimmed((dir / "max_link_width").string()));
    g.link_speed_gts = LeadingNumber(ReadTrimmed((dir / "current_link_speed").string()));
    g.link_speed_max_gts = LeadingNumber(ReadTrimmed((dir / "max_link_speed").string()));
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(),
            [](const PciGpuInfo& a, const PciGpuInfo& b) { return a.bus_id < b.bus_id; });
  return out;
}

Inventory ReadInventory(const std::string& root) {
  namespace fs = std::filesystem;
  Inventory inv;
  inv.hostname = ReadTrimmed(root + "/proc/sys/kernel/hostname");
  inv.kernel = ReadTrimmed(root + "/proc/sys/kernel/osrelease");
  ReadCpuInfo(root, inv);
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root + "/sys/devices/system/node", ec)) {
    const std::string n = entry.path().filename().string();
    if (n.size() > 4 && n.rfind("node", 0) == 0 && std::isdigit(static_cast<unsigned char>(n[4]))) {
      ++inv.numa_nodes;
    }
  }
  inv.numa_nodes = std::max(inv.numa_nodes, 1);
  if (Result<std::string> mem = ReadFile(root + "/proc/meminfo"); mem.ok()) {
    std::istringstream in(*mem);
    for (std::string line; std::getline(in, line);) {
      if (std::string v = ValueOf(line, "MemTotal"); !v.empty()) {
        inv.memory_bytes = std::strtod(v.c_str(), nullptr) * 1024.0;  // "263842532 kB"
      }
    }
  }
  if (Result<std::string> os = ReadFile(root + "/etc/os-release"); os.ok()) {
    std::istringstream in(*os);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        inv.os = line.substr(12);
        std::erase(inv.os, '"');
      }
    }
  }
  ReadNvidia(root, inv);
  inv.pci_gpus = ReadPciGpus(root + "/sys");
  return inv;
}

}  // namespace vigil
