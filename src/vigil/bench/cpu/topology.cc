#include "vigil/bench/cpu/topology.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

Result<int> ParseInt(std::string_view s, std::string_view whole) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty() || v < 0) {
    return Status::InvalidArgument(fmt::format("malformed CPU list {}", Quote(whole)));
  }
  if (v > kMaxCpuNumber) {  // and `for (c = lo; c <= hi; ++c)` cannot overflow
    return Status::InvalidArgument(
        fmt::format("CPU list {}: {} is outside [0, {}]", Quote(whole), v, kMaxCpuNumber));
  }
  return v;
}

// "32K", "1024K", "32M" as sysfs writes cache sizes.
size_t ParseCacheSize(std::string_view s) {
  s = Trim(s);
  if (s.empty()) return 0;
  size_t mult = 1;
  if (s.back() == 'K') mult = 1024;
  if (s.back() == 'M') mult = 1024 * 1024;
  if (mult != 1) s.remove_suffix(1);
  size_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() ? v * mult : 0;
}

}  // namespace

Result<std::vector<int>> ParseCpuList(std::string_view text) {
  std::vector<int> cpus;
  std::string_view rest = text;
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
  if (rest.empty()) return cpus;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const size_t dash = item.find('-');
    VIGIL_ASSIGN_OR_RETURN(int lo, ParseInt(item.substr(0, dash), text));
    int hi = lo;
    if (dash != std::string_view::npos) {
      VIGIL_ASSIGN_OR_RETURN(hi, ParseInt(item.substr(dash + 1), text));
    }
    if (hi < lo || hi - lo > 1 << 16) {
      return Status::InvalidArgument(fmt::format("malformed CPU list {}", Quote(text)));
    }
    // Each range is short, but a long list of them must not allocate without limit either.
    if (cpus.size() + static_cast<size_t>(hi - lo) + 1 > kMaxCpuListEntries) {
      return Status::InvalidArgument(fmt::format("CPU list {} names more than {} entries",
                                                 Quote(text.substr(0, 40)), kMaxCpuListEntries));
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return cpus;
}

std::vector<int> CpuTopology::AllCpus() const {
  std::vector<int> all;
  for (const NumaNode& node : nodes) all.insert(all.end(), node.cpus.begin(), node.cpus.end());
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<int> CpuTopology::FirstCpus(size_t limit) const {
  std::vector<int> cpus = AllCpus();
  if (limit > 0 && limit < cpus.size()) cpus.resize(limit);
  return cpus;
}

Result<CpuTopology> ReadCpuTopology(const std::string& sysfs_root) {
  namespace fs = std::filesystem;
  CpuTopology topo;
  std::vector<int> online;
  if (Result<std::string> text = ReadFile(sysfs_root + "/devices/system/cpu/online"); text.ok()) {
    VIGIL_ASSIGN_OR_RETURN(online, ParseCpuList(*text));
  } else {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < n; ++c) online.push_back(c);
  }
  const std::set<int> online_set(online.begin(), online.end());

  const fs::path node_dir = fs::path(sysfs_root) / "devices/system/node";
  std::error_code ec;
  std::vector<NumaNode>& nodes = topo.nodes;
  for (const auto& entry : fs::directory_iterator(node_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0) continue;
    const Result<int> id = ParseInt(std::string_view(name).substr(4), name);
    if (!id.ok()) continue;  // "node_possible" and friends are not nodes
    Result<std::string> list = ReadFile((entry.path() / "cpulist").string());
    if (!list.ok()) continue;
    VIGIL_ASSIGN_OR_RETURN(std::vector<int> cpus, ParseCpuList(*list));
    std::erase_if(cpus, [&](int c) { return !online_set.contains(c); });
    if (!cpus.empty()) nodes.push_back(NumaNode{*id, std::move(cpus)});
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  if (nodes.empty()) nodes.push_back(NumaNode{0, online});

  // Sum the distinct last-level caches: each is listed once per CPU that shares it.
  std::set<std::string> seen;
  int llc_level = 0;
  for (int cpu : online) {
    const fs::path cache =
        fs::path(sysfs_root) / fmt::format("devices/system/cpu/cpu{}/cache", cpu);
    for (const auto& entry : fs::directory_iterator(cache, ec)) {
      if (entry.path().filename().string().rfind("index", 0) != 0) continue;
      Result<std::string> level = ReadFile((entry.path() / "level").string());
      Result<std::string> type = ReadFile((entry.path() / "type").string());
      Result<std::string> size = ReadFile((entry.path() / "size").string());
      Result<std::string> shared = ReadFile((entry.path() / "shared_cpu_list").string());
      if (!level.ok() || !size.ok() || !shared.ok()) continue;
      if (type.ok() && Trim(*type) == "Instruction") continue;
      const int lvl = std::atoi(level->c_str());
      if (lvl > llc_level) {
        llc_level = lvl;
        seen.clear();
        topo.llc_bytes_total = 0;
      }
      if (lvl == llc_level && seen.insert(std::string(Trim(*shared))).second) {
        topo.llc_bytes_total += ParseCacheSize(*size);
      }
    }
  }
  return topo;
}

Status PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0)
    return Status::IoError(fmt::format("cannot pin thread to CPU {}: error {}", cpu, rc));
  return Status::Ok();
}

}  // namespace vigil
