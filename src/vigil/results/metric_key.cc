#include "vigil/results/metric_key.h"

#include <fmt/format.h>

#include <charconv>
#include "vigil/core/text.h"

namespace vigil {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<int> ToInt(std::string_view s) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string ComponentIndex::ToString() const {
  return second ? fmt::format("{}-{}", first, *second) : fmt::format("{}", first);
}

Result<MetricKey> MetricKey::Parse(std::string_view key) {
  for (char c : key) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(
          fmt::format("metric key {} holds a control character", Quote(key)));
    }
  }
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) {
    return Status::InvalidArgument(
        fmt::format("metric key {} has no '/' between benchmark and metric", Quote(key)));
  }
  MetricKey out;
  out.benchmark = std::string(key.substr(0, slash));
  std::string_view metric = key.substr(slash + 1);
  if (out.benchmark.empty()) {
    return Status::InvalidArgument(fmt::format("metric key {} has an empty benchmark", Quote(key)));
  }
  const size_t colon = metric.rfind(':');
  if (colon != std::string_view::npos) {
    const std::string_view suffix = metric.substr(colon + 1);
    const size_t dash = suffix.find('-');
    const std::string_view a = suffix.substr(0, dash);
    const std::string_view b = dash == std::string_view::npos ? "" : suffix.substr(dash + 1);
    const bool is_index = AllDigits(a) && (dash == std::string_view::npos || AllDigits(b));
    if (is_index) {
      ComponentIndex index;
      const std::optional<int> first = ToInt(a);
      const std::optional<int> second = b.empty() ? std::optional<int>() : ToInt(b);
      if (!first || (!b.empty() && !second)) {
        return Status::InvalidArgument(
            fmt::format("metric key {}: index out of range", Quote(key)));
      }
      index.first = *first;
      index.second = second;
      out.index = index;
      metric = metric.substr(0, colon);
    }
  }
  if (metric.empty()) {
    return Status::InvalidArgument(fmt::format("metric key {} has an empty metric", Quote(key)));
  }
  out.metric = std::string(metric);
  return out;
}

std::string_view MetricKey::BenchmarkName() const {
  const std::string_view b = benchmark;
  return b.substr(0, b.find(':'));
}

std::string MetricKey::BaseName() const { return benchmark + "/" + metric; }

std::string MetricKey::ToString() const {
  return index ? BaseName() + ":" + index->ToString() : BaseName();
}

}  // namespace vigil
