#include "vigil/bench/host/host_health.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "vigil/core/file.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"

namespace vigil {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::string_view kName = "host-health";

Metric Reading(std::string_view metric, double value, std::string_view unit, bool higher) {
  return MedianMetric(MetricKey{std::string(kName), std::string(metric), std::nullopt}, unit,
                      higher, {value});
}

class HostHealth : public Benchmark {
 public:
  std::string_view name() const override { return kName; }
  std::string_view component() const override { return "memory"; }
  std::string_view description() const override {
    return "host memory (GiB) and free space of / and the scratch directory; a filesystem with "
           "less than min_free left is a fault";
  }
  std::vector<ParamSpec> params() const override {
    return {{"min_free", ParamKind::kBytes, "1G", "1G",
             "free space below which a filesystem counts as full"}};
  }
  bool in_health_suite() const override { return true; }
  double time_limit_s(Suite) const override { return 10; }
  Status Available(const BenchContext&) const override { return Status::Ok(); }

  Result<std::vector<Metric>> Run(const BenchContext& ctx) const override {
    VIGIL_ASSIGN_OR_RETURN(const HostReading r, ReadHost("/proc", ctx.scratch_dir));
    return HostHealthMetrics(r, ctx.Param("min_free"));
  }
};

}  // namespace

Result<double> FreeBytes(const std::string& path) {
  struct statvfs st {};
  if (statvfs(path.c_str(), &st) != 0) {
    return Status::IoError(fmt::format("statvfs {}: {}", path, std::strerror(errno)));
  }
  return static_cast<double>(st.f_bavail) * static_cast<double>(st.f_frsize);
}

Status ParseMeminfo(std::string_view meminfo, HostReading& reading) {
  bool total = false, available = false;
  LineReader lines(meminfo);
  std::string_view line;
  while (lines.Next(line)) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view field = line.substr(0, colon);
    double* out = field == "MemTotal"       ? &reading.memory_total_bytes
                  : field == "MemAvailable" ? &reading.memory_available_bytes
                                            : nullptr;
    if (out == nullptr) continue;
    std::string_view value = Trim(line.substr(colon + 1));
    if (!value.ends_with(" kB")) {
      return Status::InvalidArgument(
          fmt::format("meminfo {}: {} is not in kB", field, Quote(value)));
    }
    value = Trim(value.substr(0, value.size() - 3));
    uint64_t kb = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), kb);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return Status::InvalidArgument(
          fmt::format("meminfo {}: {} is not a number", field, Quote(value)));
    }
    *out = static_cast<double>(kb) * 1024.0;
    (field == "MemTotal" ? total : available) = true;
  }
  if (!total) return Status::InvalidArgument("meminfo: no MemTotal field");
  if (!available) return Status::InvalidArgument("meminfo: no MemAvailable field");
  return Status::Ok();
}

Result<HostReading> ReadHost(const std::string& proc_root, const std::string& scratch) {
  HostReading r;
  const std::string path = proc_root + "/meminfo";
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  const Status parsed = ParseMeminfo(text, r);
  if (!parsed.ok()) return parsed.WithContext(path);
  VIGIL_ASSIGN_OR_RETURN(r.root_free_bytes, FreeBytes("/"));
  VIGIL_ASSIGN_OR_RETURN(r.scratch_free_bytes, FreeBytes(scratch));
  return r;
}

std::vector<Metric> HostHealthMetrics(const HostReading& r, double min_free_bytes) {
  return {Reading("memory_total_gib", r.memory_total_bytes / kGiB, "GiB", true),
          Reading("memory_available_gib", r.memory_available_bytes / kGiB, "GiB", true),
          Reading("root_free_gib", r.root_free_bytes / kGiB, "GiB", true),
          Reading("scratch_free_gib", r.scratch_free_bytes / kGiB, "GiB", true),
          Reading("root_full", r.root_free_bytes < min_free_bytes ? 1 : 0, "", false),
          Reading("scratch_full", r.scratch_free_bytes < min_free_bytes ? 1 : 0, "", false)};
}

std::unique_ptr<Benchmark> MakeHostHealthBenchmark() { return std::make_unique<HostHealth>(); }

}  // namespace vigil
