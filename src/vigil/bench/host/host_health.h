// host-health: the host's memory and free disk space, read in a few milliseconds, for the health
// suite of a scheduler's checks (LBNL NHC's check_hw_physmem and check_fs_free) and for every
// run. A node whose memory is short of its peers' (a DIMM that did not train) is found by the
// fleet's criteria on memory_total_gib; a filesystem nearly full, which fails jobs whatever the
// fleet looks like, is a reading with a fixed meaning (`root_full`, `scratch_full`).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vigil/bench/benchmark.h"
#include "vigil/core/status.h"

namespace vigil {

// One look at the host.
struct HostReading {
  double memory_total_bytes = 0;
  double memory_available_bytes = 0;
  double root_free_bytes = 0;     // for an unprivileged user, on the filesystem of "/"
  double scratch_free_bytes = 0;  // on the filesystem of the run's scratch directory
};

// The bytes an unprivileged user may still write on the filesystem of `path` (statvfs: f_bavail
// blocks of f_frsize). IoError naming the path when it cannot be asked.
Result<double> FreeBytes(const std::string& path);

// MemTotal and MemAvailable from `meminfo` (/proc/meminfo's text). InvalidArgument naming the
// field when one is missing or not a number of kB.
Status ParseMeminfo(std::string_view meminfo, HostReading& reading);

// Reads `proc_root`/meminfo and the free space of "/" and `scratch` (statvfs). Errors name the
// file or directory.
Result<HostReading> ReadHost(const std::string& proc_root, const std::string& scratch);

// The metrics of a reading: memory_total_gib, memory_available_gib, root_free_gib,
// scratch_free_gib (GiB), and root_full / scratch_full: 1 when the filesystem has less than
// `min_free_bytes` free, otherwise 0.
std::vector<Metric> HostHealthMetrics(const HostReading& reading, double min_free_bytes);

std::unique_ptr<Benchmark> MakeHostHealthBenchmark();

}  // namespace vigil
