#include "vigil/plan/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>

#include "vigil/core/file.h"
#include "vigil/core/stats.h"
#include "vigil/results/document.h"
#include "vigil/results/metric_key.h"

namespace vigil::plan {
namespace {

enum class Field { kBf16, kFp8, kHbm, kHostToDevice, kInterNode, kBus };

// One figure a key measures, in the profile's units. `bytes` is the message size of a sweep
// point, 0 where the key names none.
struct Reading {
  Field field;
  std::string collective;  // kBus only
  double bytes = 0;
  double value = 0;
};

using ReadingId = std::tuple<Field, std::string, double>;

constexpr double kGflopsPerTflops = 1e3;
constexpr double kMbPerGb = 1e3;

// A message size of a metric's name: digits only (no sign, no "nan" or "inf", which would break
// the ordering of the readings' map).
std::optional<double> WholeNumber(std::string_view text) {
  uint64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return static_cast<double>(v);
}

// "allreduce_busbw" -> (allreduce, 0); "allreduce_1073741824_busbw" -> (allreduce, 2^30).
std::optional<Reading> BusReading(std::string_view metric, double value) {
  constexpr std::string_view kSuffix = "_busbw";
  if (!metric.ends_with(kSuffix)) return std::nullopt;
  metric.remove_suffix(kSuffix.size());
  const size_t cut = metric.find('_');
  Reading r{Field::kBus, std::string(metric.substr(0, cut)), 0, value};
  if (cut != std::string_view::npos) {
    const std::optional<double> bytes = WholeNumber(metric.substr(cut + 1));
    if (!bytes) return std::nullopt;
    r.bytes = *bytes;
  }
  if (r.collective != "allreduce" && r.collective != "allgather" &&
      r.collective != "reducescatter" && r.collective != "alltoall") {
    return std::nullopt;
  }
  return r;
}

// ib-loopback's write bandwidth in its three naming generations (docs/validate.md).
std::optional<Reading> NicReading(std::string_view metric, double value) {
  const auto at = [&](std::string_view prefix, std::string_view stop, double scale) {
    std::optional<Reading> none;
    if (!metric.starts_with(prefix)) return none;
    const std::string_view rest = metric.substr(prefix.size());
    const std::optional<double> bytes = WholeNumber(rest.substr(0, rest.find(stop)));
    if (!bytes) return none;
    return std::optional<Reading>(Reading{Field::kInterNode, "", *bytes, value / scale});
  };
  if (metric.starts_with("IB_write_")) return at("IB_write_", "_Avg_", kMbPerGb);
  if (metric.starts_with("ib_write_bw_")) return at("ib_write_bw_", "\x01", 1);
  if (metric.starts_with("ib_write_")) return at("ib_write_", "_ib", kMbPerGb);
  return std::nullopt;
}

std::optional<Reading> ReadingOf(const MetricKey& key, double value) {
  const std::string_view bench = key.BenchmarkName();
  const std::string_view annotation = key.benchmark.size() > bench.size()
                                          ? std::string_view(key.benchmark).substr(bench.size() + 1)
                                          : std::string_view();
  const std::string& m = key.metric;
  if (bench == "gpu-gemm" && m == "bf16_tflops") return Reading{Field::kBf16, "", 0, value};
  if (bench == "gpu-gemm" && m == "fp8_tflops") return Reading{Field::kFp8, "", 0, value};
  if (bench == "gemm-flops" && (m == "BF16_TC" || m == "bf16_tc_flops")) {
    return Reading{Field::kBf16, "", 0, value / kGflopsPerTflops};
  }
  if (bench == "gpu-membw" && m == "triad_gbps") return Reading{Field::kHbm, "", 0, value};
  if ((bench == "gpu-copy" && m == "h2d_gbps") ||
      (bench == "mem-bw" && (m == "H2D_Mem_BW" || m == "h2d_bw"))) {
    return Reading{Field::kHostToDevice, "", 0, value};
  }
  if (bench == "nccl" || (bench == "nccl-bw" && (annotation.empty() || annotation == "nvlink"))) {
    return BusReading(m, value);
  }
  if (bench == "ib-loopback") return NicReading(m, value);
  return std::nullopt;
}

// Whether node i's run of the key's benchmark ended well (or the table has no return code).
bool RanWell(const FleetTable& table, size_t node, const MetricKey& key) {
  const long rc = table.column(fmt::format("{}/return_code", key.benchmark));
  if (rc < 0) return true;
  const double code = table.at(node, static_cast<size_t>(rc));
  return std::isnan(code) || code == 0;
}

// The fleet's median of each figure: per node over its components (their median or their
// minimum: every figure read is higher-is-better), then over the nodes.
std::map<ReadingId, double> FleetMedians(const FleetTable& table, PerNode per_node) {
  std::vector<std::optional<std::pair<ReadingId, MetricKey>>> columns;
  for (const std::string& name : table.metrics()) {
    Result<MetricKey> key = MetricKey::Parse(name);
    std::optional<Reading> r = key.ok() ? ReadingOf(*key, 1) : std::nullopt;
    columns.push_back(
        r ? std::optional(std::pair(ReadingId{r->field, r->collective, r->bytes}, std::move(*key)))
          : std::nullopt);
  }
  std::map<ReadingId, std::vector<double>> over_nodes;
  for (size_t i = 0; i < table.node_count(); ++i) {
    std::map<ReadingId, std::vector<double>> in_node;
    for (size_t j = 0; j < columns.size(); ++j) {
      const double v = table.at(i, j);
      if (!columns[j] || !std::isfinite(v) || v <= 0 || !RanWell(table, i, columns[j]->second)) {
        continue;
      }
      const std::optional<Reading> r = ReadingOf(columns[j]->second, v);
      in_node[columns[j]->first].push_back(r->value);
    }
    for (auto& [id, values] : in_node) {
      over_nodes[id].push_back(per_node == PerNode::kWorst ? *std::ranges::min_element(values)
                                                           : stats::Median(values));
    }
  }
  std::map<ReadingId, double> out;
  for (auto& [id, values] : over_nodes) out[id] = stats::Median(values);
  return out;
}

// "a.json and 2 more": what the profile's source names.
std::string PathsText(const std::vector<std::string>& paths) {
  std::string what = paths.empty() ? "no file" : paths.front();
  if (paths.size() > 1) what += fmt::format(" and {} more", paths.size() - 1);
  return what;
}

}  // namespace

Result<HardwareProfile> MeasuredProfile(const FleetTable& table, const HardwareProfile& base,
                                        std::string_view what, PerNode per_node) {
  const std::map<ReadingId, double> medians = FleetMedians(table, per_node);
  if (medians.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: no GEMM, HBM, host copy, NCCL or InfiniBand figure to build a hardware profile from "
        "(docs/plan.md lists the keys read)",
        what));
  }
  HardwareProfile p = base;
  p.source = fmt::format("measured: {} ({} nodes), {} for the rest", what, table.node_count(),
                         base.source);
  double nic_bytes = -1;
  double bus_bytes = -1;
  for (const auto& [id, value] : medians) {
    const auto& [field, collective, bytes] = id;
    switch (field) {
      case Field::kBf16:
        p.bf16_tflops = value;
        p.bf16_efficiency = 1;
        break;
      case Field::kFp8:
        p.fp8_tflops = value;
        p.fp8_efficiency = 1;
        break;
      case Field::kHbm:
        p.hbm_gbps = value;
        p.hbm_efficiency = 1;
        break;
      case Field::kHostToDevice:
        p.host_to_device_gbps = value;
        break;
      case Field::kInterNode:
        // The map is in ascending size: the largest message is the link's bandwidth.
        if (bytes > 0) p.inter_node_curve.emplace_back(bytes, value);
        if (bytes > nic_bytes) p.inter_node_gbps = value, nic_bytes = bytes, p.nic_efficiency = 1;
        break;
      case Field::kBus:
        if (bytes > 0) p.intra_node_bus[collective].emplace_back(bytes, value);
        if (collective == "allreduce" && (bytes == 0 || (bus_bytes != 0 && bytes > bus_bytes))) {
          p.intra_node_gbps = value;
          bus_bytes = bytes;
          p.nvlink_efficiency = 1;
        }
        break;
    }
  }
  return p;
}

Result<std::vector<std::string>> ResultFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!fs::is_directory(path, error)) {
      files.push_back(path);  // a file, or nothing: ReadFile says which
      continue;
    }
    std::vector<std::string> inside;
    for (fs::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
      const std::string ext = it->path().extension().string();
      if ((ext == ".json" || ext == ".jsonl") && it->is_regular_file(error)) {
        inside.push_back(it->path().string());
      }
    }
    if (error) {
      return Status::InvalidArgument(fmt::format("{}: cannot list: {}", path, error.message()));
    }
    if (inside.empty()) {
      return Status::InvalidArgument(
          fmt::format("{}: a directory with no *.json or *.jsonl results file", path));
    }
    std::ranges::sort(inside);
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

Result<FleetTable> ReadResultsTable(const std::vector<std::string>& paths) {
  VIGIL_ASSIGN_OR_RETURN(const std::vector<std::string> files, ResultFiles(paths));
  FleetTable fleet;
  for (const std::string& path : files) {
    VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
    VIGIL_ASSIGN_OR_RETURN(std::optional<NodeResults> doc, ParseIfResultsDocument(text, path));
    if (doc) {
      VIGIL_RETURN_IF_ERROR(fleet.Append(TableOfRows({FleetRowOf(*doc)}, path)));
      continue;
    }
    VIGIL_ASSIGN_OR_RETURN(FleetTable table, ParseFleetTable(text, path));
    table.KeepLastOfEachNode();
    VIGIL_RETURN_IF_ERROR(fleet.Append(std::move(table)));
  }
  return fleet;
}

Result<HardwareProfile> ReadMeasuredProfile(const std::vector<std::string>& paths,
                                            const HardwareProfile& base) {
  VIGIL_ASSIGN_OR_RETURN(const FleetTable fleet, ReadResultsTable(paths));
  return MeasuredProfile(fleet, base, PathsText(paths));
}

Result<HardwareProfile> ProfileFor(std::string_view gpu, const std::vector<std::string>& hardware) {
  VIGIL_ASSIGN_OR_RETURN(HardwareProfile sheet, DatasheetProfile(gpu));
  if (hardware.empty()) return sheet;
  return ReadMeasuredProfile(hardware, sheet);
}

Result<FleetProfiles> ProfilesFor(std::string_view gpu, const std::vector<std::string>& hardware) {
  VIGIL_ASSIGN_OR_RETURN(HardwareProfile sheet, DatasheetProfile(gpu));
  if (hardware.empty()) return FleetProfiles{sheet, sheet};
  VIGIL_ASSIGN_OR_RETURN(const FleetTable fleet, ReadResultsTable(hardware));
  FleetProfiles p;
  VIGIL_ASSIGN_OR_RETURN(p.median, MeasuredProfile(fleet, sheet, PathsText(hardware)));
  VIGIL_ASSIGN_OR_RETURN(p.worst,
                         MeasuredProfile(fleet, sheet, PathsText(hardware), PerNode::kWorst));
  return p;
}

}  // namespace vigil::plan
