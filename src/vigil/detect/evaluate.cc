#include "vigil/detect/evaluate.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "vigil/core/bounds.h"
#include "vigil/core/csv.h"
#include "vigil/core/lines.h"
#include "vigil/core/stats.h"
#include "vigil/telemetry/readers.h"

namespace vigil::detect {

Result<std::vector<FaultLabel>> ParseLabels(std::string_view text, std::string_view source) {
  LineReader lines(text);
  std::string_view header;
  if (!lines.Next(header)) {
    return Status::InvalidArgument(fmt::format("{}:1: header: empty file", source));
  }
  static constexpr std::array<std::string_view, 4> kNames = {"machine", "onset", "kind", "end"};
  VIGIL_ASSIGN_OR_RETURN(const CsvColumns columns, CsvColumns::Parse(header, kNames, 3, source));
  std::vector<FaultLabel> out;
  std::vector<std::string_view> f;
  std::string_view line;
  while (lines.Next(line)) {
    if (Trim(line).empty()) continue;
    const int64_t no = lines.line_no();
    VIGIL_RETURN_IF_ERROR(columns.Split(line, no, &f));
    auto bad = [&](std::string_view field, std::string_view what) {
      return Status::InvalidArgument(fmt::format("{}:{}: {}: {}", source, no, field, what));
    };
    FaultLabel l;
    if (f[0].empty()) return bad("machine", "empty");
    if (f[2].empty()) return bad("kind", "empty");
    l.machine = std::string(f[0]);
    l.kind = std::string(f[2]);
    const auto onset = telemetry::ParseNumber(f[1]);
    if (!onset || !std::isfinite(*onset)) {
      return bad("onset", fmt::format("{} is not a time in Unix seconds", Quote(f[1])));
    }
    if (!kUnixTimeBounds.Contains(*onset)) {
      return bad("onset", DescribeOutside(*onset, kUnixTimeBounds, f[1]));
    }
    l.onset = *onset;
    if (!f[3].empty()) {
      const auto end = telemetry::ParseNumber(f[3]);
      if (!end || !std::isfinite(*end) || *end < l.onset) {
        return bad("end", fmt::format("{} is not a time at or after the onset", Quote(f[3])));
      }
      if (!kUnixTimeBounds.Contains(*end)) {
        return bad("end", DescribeOutside(*end, kUnixTimeBounds, f[3]));
      }
      l.end = *end;
    }
    out.push_back(std::move(l));
  }
  return out;
}

double Score::precision() const {
  return alerts == 0 ? 1.0 : static_cast<double>(true_alerts) / static_cast<double>(alerts);
}
double Score::recall() const {
  return faults == 0 ? 1.0 : static_cast<double>(detected) / static_cast<double>(faults);
}
double Score::f1() const {
  const double p = precision(), r = recall();
  return p + r == 0 ? 0 : 2 * p * r / (p + r);
}

void Score::Add(const Score& o) {
  alerts += o.alerts;
  job_alerts += o.job_alerts;
  true_alerts += o.true_alerts;
  faults += o.faults;
  detected += o.detected;
  latencies.insert(latencies.end(), o.latencies.begin(), o.latencies.end());
  for (const auto& [kind, k] : o.by_kind) {
    KindScore& mine = by_kind[kind];
    mine.faults += k.faults;
    mine.detected += k.detected;
    mine.latencies.insert(mine.latencies.end(), k.latencies.begin(), k.latencies.end());
  }
  for (const auto& [rule, n] : o.false_by_rule) false_by_rule[rule] += n;
}

Score ScoreAlerts(const std::vector<Alert>& alerts, const std::vector<FaultLabel>& labels,
                  double slack) {
  Score s;
  s.faults = static_cast<int64_t>(labels.size());
  std::vector<double> first(labels.size(), std::numeric_limits<double>::infinity());
  for (const Alert& a : alerts) {
    // A job-wide stall that names no machine blames nobody: neither true nor false.
    if (a.machine == "*") {
      ++s.job_alerts;
      continue;
    }
    ++s.alerts;
    bool matched = false;
    for (size_t i = 0; i < labels.size(); ++i) {
      const FaultLabel& l = labels[i];
      if (l.machine != a.machine || a.detected + slack < l.onset) continue;
      if (l.end > 0 && a.detected > l.end) continue;
      matched = true;
      first[i] = std::min(first[i], a.detected);
    }
    if (matched) {
      ++s.true_alerts;
    } else {
      ++s.false_by_rule[fmt::format("{}/{}", AlertKindName(a.kind), a.rule)];
    }
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    KindScore& k = s.by_kind[labels[i].kind];
    ++k.faults;
    if (!std::isfinite(first[i])) continue;
    const double latency = std::max(0.0, first[i] - labels[i].onset);
    ++s.detected;
    ++k.detected;
    s.latencies.push_back(latency);
    k.latencies.push_back(latency);
  }
  return s;
}

Json ScoreToJson(const Score& s) {
  auto latency = [](const std::vector<double>& v) -> Json {
    if (v.empty()) return nullptr;
    return Json{{"median_s", stats::Median(v)}, {"p95_s", stats::Quantile(v, 0.95)}};
  };
  Json kinds = Json::object();
  for (const auto& [kind, k] : s.by_kind) {
    kinds[kind] = Json{{"faults", k.faults},
                       {"detected", k.detected},
                       {"recall", k.faults ? static_cast<double>(k.detected) / k.faults : 1.0},
                       {"latency", latency(k.latencies)}};
  }
  Json false_alerts = Json::object();
  for (const auto& [rule, n] : s.false_by_rule) false_alerts[rule] = n;
  return Json{{"alerts", s.alerts},
              {"job_alerts", s.job_alerts},
              {"true_alerts", s.true_alerts},
              {"faults", s.faults},
              {"detected", s.detected},
              {"precision", s.precision()},
              {"recall", s.recall()},
              {"f1", s.f1()},
              {"latency", latency(s.latencies)},
              {"by_kind", std::move(kinds)},
              {"false_alerts", std::move(false_alerts)}};
}

}  // namespace vigil::detect
