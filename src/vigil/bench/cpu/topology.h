// What the host benchmarks need to know of the CPU: NUMA nodes and their CPUs, cache sizes.
#pragma once

#include <string>
#include <vector>

#include "vigil/core/status.h"

namespace vigil {

// Linux's largest NR_CPUS is 8192; a list (of CPUs or GPUs) may name at most this many entries.
inline constexpr size_t kMaxCpuListEntries = 65536;
// The largest number a list may hold (CPUs, GPUs by index).
inline constexpr int kMaxCpuNumber = (1 << 20) - 1;

// Parses a Linux CPU list ("0-3,8,10-11") into CPU numbers. InvalidArgument when malformed or
// longer than kMaxCpuListEntries, or with a number above kMaxCpuNumber.
Result<std::vector<int>> ParseCpuList(std::string_view text);

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;  // online CPUs only
};

struct CpuTopology {
  // The NUMA nodes with online CPUs, by id; one node 0 with every CPU on a UMA machine.
  std::vector<NumaNode> nodes;
  // The sum of all distinct last-level caches, in bytes (0 when sysfs does not say).
  size_t llc_bytes_total = 0;

  std::vector<int> AllCpus() const;
  // The first `limit` CPUs in number order, or all of them when `limit` is 0 or larger.
  std::vector<int> FirstCpus(size_t limit) const;
};

// Reads the topology from sysfs under `sysfs_root` ("/sys" on a real machine; tests pass a fake
// tree). Falls back to one node holding CPUs 0..n-1 when the node directory is absent.
Result<CpuTopology> ReadCpuTopology(const std::string& sysfs_root = "/sys");

// Binds the calling thread to one CPU. Errors are returned, not fatal: callers may run unpinned.
Status PinThisThread(int cpu);

}  // namespace vigil
