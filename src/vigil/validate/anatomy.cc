#include "vigil/validate/anatomy.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cstdlib>
#include <utility>

namespace vigil::validate {
namespace {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

Direction DirectionOf(std::string_view name) {
  if (Contains(name, "return_code")) return Direction::kZero;
  // Counters of gpu-health (ECC errors, remapped rows, retired pages, throttle flags) are lower
  // when better; its PCIe link generation and width higher.
  static constexpr std::array<std::string_view, 13> kLower = {
      "time",  "latency", "overhead", "_lat",  "_us",     "_ms",     "duration",
      "error", "_ns",     "ecc_",     "remap", "retired", "throttle"};
  static constexpr std::array<std::string_view, 13> kHigher = {
      "bw",   "bandwidth", "flops", "iops",  "throughput", "gbps",    "tflops",
      "_ops", "score",     "rate",  "speed", "pcie_width", "pcie_gen"};
  for (std::string_view w : kLower) {
    if (Contains(name, w)) return Direction::kLower;
  }
  for (std::string_view w : kHigher) {
    if (Contains(name, w)) return Direction::kHigher;
  }
  return Direction::kEither;
}

// The readings of the GPU benchmarks with a fixed meaning (docs/run.md): gpu-health's and
// gpu-stress's from NVML, gpu-presence's from PCI, gpu-memtest's; judged by what they mean rather
// than by their name's words; kEither (not one of them) otherwise.
Direction HealthDirection(std::string_view benchmark, std::string_view name) {
  static constexpr std::pair<std::string_view, Direction> kHealth[] = {
      {"ecc_uncorrected_volatile", Direction::kClear},
      {"row_remap_pending", Direction::kClear},
      {"row_remap_failure", Direction::kClear},
      {"retired_pages_pending", Direction::kClear},
      {"throttle_hw_", Direction::kClear},
      {"throttle_sw_thermal", Direction::kClear},
      // Lifetime counts of errors corrected or repaired (rows remapped), a power cap, the
      // present draw: records, not faults. An idle GPU trains its link down a generation.
      {"ecc_corrected_", Direction::kInfo},
      {"ecc_uncorrected_aggregate", Direction::kInfo},
      {"remapped_rows_", Direction::kInfo},
      {"throttle_sw_power_cap", Direction::kInfo},
      {"power_w", Direction::kInfo},
      {"pcie_gen_max", Direction::kHigher},
      {"pcie_gen", Direction::kInfo},
      {"temperature", Direction::kLower}};
  // Under load the link runs at the generation it trained to: a slower one than its peers' is
  // a link that trained down.
  static constexpr std::pair<std::string_view, Direction> kStress[] = {
      {"throttled", Direction::kClear},
      {"miscompares", Direction::kClear},  // silent data corruption
      {"peak_temperature", Direction::kLower},
      {"pcie_gen", Direction::kHigher}};
  const auto find = [&](const auto& table) {
    for (const auto& [part, d] : table) {
      if (name.rfind(part, 0) == 0) return d;
    }
    return Direction::kEither;
  };
  // A GPU on PCI that the driver does not reach, a link short of lanes; words that mismatched.
  static constexpr std::pair<std::string_view, Direction> kPresence[] = {
      {"missing", Direction::kClear}, {"pcie_lanes_missing", Direction::kClear}};
  static constexpr std::pair<std::string_view, Direction> kMemtest[] = {
      {"errors", Direction::kClear}, {"tested_gib", Direction::kInfo}};
  if (benchmark == "gpu-health") return find(kHealth);
  if (benchmark == "gpu-stress") return find(kStress);
  if (benchmark == "gpu-presence") return find(kPresence);
  if (benchmark == "gpu-memtest") return find(kMemtest);
  return Direction::kEither;
}

// The component a benchmark's index names.
std::string ComponentOf(std::string_view benchmark, std::string_view index) {
  static constexpr std::pair<std::string_view, std::string_view> kKinds[] = {
      {"gemm", "GPU"},    {"kernel-launch", "GPU"}, {"gpu-burn", "GPU"},  {"gpu-stream", "GPU"},
      {"gpu-hbm", "GPU"}, {"mem-bw", "PCIe"},       {"gpu-copy", "PCIe"}, {"pcie", "PCIe"},
      {"gpu-", "GPU"},    {"ib-", "NIC"},           {"nic", "NIC"},       {"disk", "disk"},
      {"cpu", "NUMA"}};
  std::string_view kind;
  for (const auto& [prefix, k] : kKinds) {
    if (Contains(benchmark, prefix)) {
      kind = k;
      break;
    }
  }
  if (index.empty()) {
    if (Contains(benchmark, "nccl")) return "NVLink";
    return std::string(benchmark);
  }
  if (kind.empty()) return fmt::format("{}:{}", benchmark, index);
  if (Contains(index, "-")) return fmt::format("link {}", index);
  return fmt::format("{} {}", kind, index);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

MetricAnatomy Anatomize(std::string_view key) {
  MetricAnatomy a;
  const size_t slash = key.find('/');
  const size_t colon = key.rfind(':');
  const bool has_index = colon != std::string_view::npos && colon > slash;
  a.family = std::string(has_index ? key.substr(0, colon) : key);
  a.index = has_index ? std::string(key.substr(colon + 1)) : "";
  std::string_view benchmark = key.substr(0, slash);
  benchmark = benchmark.substr(0, benchmark.find(':'));
  const std::string_view name = slash == std::string_view::npos
                                    ? std::string_view()
                                    : std::string_view(a.family).substr(slash + 1);
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  a.direction = HealthDirection(benchmark, lower);
  if (a.direction == Direction::kEither) a.direction = DirectionOf(lower);
  a.component = ComponentOf(benchmark, a.index);
  // A sweep size: a run of at least three digits standing alone between '_' or '-' separators.
  for (size_t i = 0; i < name.size();) {
    if (!IsDigit(name[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < name.size() && IsDigit(name[j])) ++j;
    const bool alone = (i == 0 || name[i - 1] == '_' || name[i - 1] == '-') &&
                       (j == name.size() || name[j] == '_' || name[j] == '-');
    if (alone && j - i >= 3 && j - i <= 15) {
      const size_t at = slash + 1 + i;
      a.curve = a.family.substr(0, at) + "{size}" + a.family.substr(slash + 1 + j);
      a.size = std::strtod(std::string(name.substr(i, j - i)).c_str(), nullptr);
      break;
    }
    i = j;
  }
  return a;
}

std::string BenchmarkOfKey(std::string_view key) {
  return std::string(key.substr(0, key.rfind('/')));
}

std::string_view DirectionName(Direction d) {
  switch (d) {
    case Direction::kHigher:
      return "higher";
    case Direction::kLower:
      return "lower";
    case Direction::kZero:
      return "zero";
    case Direction::kEither:
      return "either";
    case Direction::kClear:
      return "clear";
    case Direction::kInfo:
      return "info";
  }
  return "either";
}

bool IsLearned(Direction d) {
  return d == Direction::kHigher || d == Direction::kLower || d == Direction::kEither;
}

}  // namespace vigil::validate
