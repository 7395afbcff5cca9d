#include "vigil/bench/benchmark.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <numeric>

#include "vigil/core/bounds.h"
#include "vigil/core/stats.h"
#include "vigil/core/text.h"

namespace vigil {

Metric MedianMetric(MetricKey key, std::string_view unit, bool higher_is_better,
                    std::vector<double> samples) {
  const double median = stats::Median(samples);
  return Metric{std::move(key), median, std::string(unit), higher_is_better, std::move(samples)};
}

std::vector<int> BenchContext::Gpus(int count) const {
  if (!gpus.empty()) return gpus;  // checked against the node's GPUs before the run
  std::vector<int> all(static_cast<size_t>(std::max(0, count)));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

std::string_view SuiteName(Suite suite) {
  switch (suite) {
    case Suite::kHealth:
      return "health";
    case Suite::kQuick:
      return "quick";
    case Suite::kFull:
      return "full";
  }
  return "unknown";
}

Result<Suite> ParseSuite(std::string_view name) {
  for (const Suite s : {Suite::kHealth, Suite::kQuick, Suite::kFull}) {
    if (name == SuiteName(s)) return s;
  }
  return Status::InvalidArgument(
      fmt::format("unknown suite {} (expected health, quick or full)", Quote(name)));
}

const std::string& ParamSpec::Default(Suite suite) const {
  switch (suite) {
    case Suite::kHealth:
      return health_default.empty() ? quick_default : health_default;
    case Suite::kQuick:
      return quick_default;
    case Suite::kFull:
      return full_default;
  }
  return quick_default;
}

Result<double> ParseParamValue(ParamKind kind, std::string_view value) {
  std::string_view digits = value;
  double multiplier = 1.0;
  if (kind == ParamKind::kBytes && !digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K':
        multiplier = 1024.0;
        break;
      case 'M':
        multiplier = 1024.0 * 1024.0;
        break;
      case 'G':
        multiplier = 1024.0 * 1024.0 * 1024.0;
        break;
      case 'T':
        multiplier = 1024.0 * 1024.0 * 1024.0 * 1024.0;
        break;
      default:
        break;
    }
    if (multiplier != 1.0) digits.remove_suffix(1);
  }
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  const bool whole = ptr == digits.data() + digits.size() && !digits.empty();
  if (ec != std::errc() || !whole || !std::isfinite(v) || v < 0) {
    return Status::InvalidArgument(fmt::format("{} is not a {}", Quote(value),
                                               kind == ParamKind::kBytes     ? "size (e.g. 256M)"
                                               : kind == ParamKind::kSeconds ? "duration in seconds"
                                               : kind == ParamKind::kFraction
                                                   ? "fraction in (0, 1]"
                                                   : "non-negative integer"));
  }
  if (kind == ParamKind::kInt && v != std::floor(v)) {
    return Status::InvalidArgument(fmt::format("{} is not a whole number", Quote(value)));
  }
  if (kind == ParamKind::kFraction && !(v > 0 && v <= 1)) {
    return Status::InvalidArgument(fmt::format("{} is not a fraction in (0, 1]", Quote(value)));
  }
  // Generous for any node, and far from the overflows and the runs of hours beyond.
  constexpr Bounds kIntBounds{.lo = 0, .hi = 1048576};
  constexpr Bounds kBytesBounds{.lo = 0, .hi = 17592186044416.0};  // 16 TiB
  constexpr Bounds kSecondsBounds{.lo = 0, .hi = 86400, .seconds = true};
  const Bounds bounds = kind == ParamKind::kInt       ? kIntBounds
                        : kind == ParamKind::kBytes   ? kBytesBounds
                        : kind == ParamKind::kSeconds ? kSecondsBounds
                                                      : Bounds{.lo = 0, .hi = 1};
  if (!bounds.Contains(v * multiplier)) {
    return Status::InvalidArgument(DescribeOutside(v * multiplier, bounds, value));
  }
  return v * multiplier;
}

}  // namespace vigil
