#include "vigil/agent/run_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "vigil/core/figure.h"
#include "vigil/core/stats.h"
#include "vigil/core/text_table.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/summary.h"

namespace vigil::agent {
namespace {

using learned::ClassModel;
using learned::FamilyModel;
using learned::Finding;
using learned::FindingTest;

const FamilyModel* FamilyOf(const ClassModel* model, const std::string& family) {
  if (model == nullptr) return nullptr;
  for (const FamilyModel& f : model->families) {
    if (f.family == family) return &f;
  }
  return nullptr;
}

// The healthy range of `key` in `f`: the mode the node's level picks, as the judge picks it, its
// limits scaled back by the member's factor; one side open where only the other is worse.
Finding RangeOf(const FamilyModel& f, const std::string& key, double value, double level) {
  const double factor = learned::MemberFactor(f, key);
  const learned::Mode& m = learned::NearestMode(f, level);
  Finding range;
  range.value = value;
  range.expected_low =
      f.direction == Direction::kLower ? -INFINITY : (m.centre - f.limit * m.spread) * factor;
  range.expected_high =
      f.direction == Direction::kHigher ? INFINITY : (m.centre + f.limit * m.spread) * factor;
  return range;
}

// Where the value lies against `range`: "within 700..820", "below 700..820", "above 700..820";
// where only one side is worse, "above floor 700" or "below floor 700" (higher is better),
// "below ceiling 3.5" or "above ceiling 3.5" (lower is better).
std::string Against(const Finding& range) {
  const bool has_low = std::isfinite(range.expected_low);
  const bool has_high = std::isfinite(range.expected_high);
  const std::string lo = FormatFigure(range.expected_low), hi = FormatFigure(range.expected_high);
  if (has_low && !has_high) {
    return fmt::format("{} floor {}", range.value < range.expected_low ? "below" : "above", lo);
  }
  if (has_high && !has_low) {
    return fmt::format("{} ceiling {}", range.value > range.expected_high ? "above" : "below", hi);
  }
  const char* where = range.value < range.expected_low    ? "below"
                      : range.value > range.expected_high ? "above"
                                                          : "within";
  return fmt::format("{} {}..{}", where, lo, hi);
}

// Each family's level in the node (the median of its values, each divided by its member's
// factor), which picks the mode that judges it (learned/measures.h's NodeCentres).
std::map<std::string, double> FamilyLevels(const NodeResults& doc, const ClassModel* model) {
  std::map<std::string, std::vector<double>> values;
  for (const BenchmarkRecord& r : doc.benchmarks) {
    for (const Metric& m : r.metrics) {
      const std::string key = m.key.ToString();
      const std::string family = Anatomize(key).family;
      const FamilyModel* f = FamilyOf(model, family);
      if (f == nullptr || std::isnan(m.value)) continue;
      values[family].push_back(m.value / learned::MemberFactor(*f, key));
    }
  }
  std::map<std::string, double> levels;
  for (auto& [family, v] : values) levels[family] = stats::Median(v);
  return levels;
}

}  // namespace

std::string MetricReading(const std::string& key, double value, double level,
                          const learned::NodeFindings& judged, const ClassModel* model,
                          bool with_criteria) {
  const auto finding = std::find_if(judged.findings.begin(), judged.findings.end(),
                                    [&](const Finding& f) { return f.metric == key; });
  if (finding != judged.findings.end()) {
    if (finding->test == FindingTest::kHealth || finding->test == FindingTest::kReturnCode) {
      return "fault: must be 0";
    }
    return "fault: " + Against(*finding);
  }
  const MetricAnatomy a = Anatomize(key);
  if (a.direction == Direction::kClear || a.direction == Direction::kZero) return "must be 0";
  if (a.direction == Direction::kInfo) return "for information";
  if (!with_criteria) return std::string(kNoReference);
  const FamilyModel* f = FamilyOf(model, a.family);
  if (f == nullptr || f->modes.empty() || std::isnan(value)) return "no learned range";
  const Finding range = RangeOf(*f, key, value, level);
  // A family judged by the balance inside the node leaves the node's own offset out: a value
  // beyond the fleet's range is not a fault there, and the row says why.
  const bool out = range.value < range.expected_low || range.value > range.expected_high;
  if (f->balanced && out) return Against(range) + " (in balance within the node)";
  return Against(range);
}

std::string RenderRunTable(const NodeResults& doc, const learned::NodeFindings& judged,
                           const learned::LearnedCriteria* criteria) {
  struct Reason {
    BenchStatus status;
    std::string error;
    std::vector<std::string> benchmarks;
  };
  const ClassModel* model =
      criteria != nullptr ? learned::ClassFor(*criteria, FleetRowOf(doc).hardware) : nullptr;
  const std::map<std::string, double> levels = FamilyLevels(doc, model);
  Table t({"BENCHMARK", "RUN", "METRIC", "VALUE", "UNIT",
           criteria != nullptr ? "VERDICT" : "REFERENCE"});
  std::vector<Reason> reasons;  // in order of first appearance
  for (const BenchmarkRecord& r : doc.benchmarks) {
    if (r.status != BenchStatus::kOk) {
      t.Add({r.name, std::string(BenchStatusName(r.status)), "-", "", "", ""});
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& x) {
        return x.status == r.status && x.error == r.error;
      });
      if (it == reasons.end()) it = reasons.insert(reasons.end(), Reason{r.status, r.error, {}});
      it->benchmarks.push_back(r.name);
      continue;
    }
    for (const Metric& m : r.metrics) {
      std::string metric = m.key.metric;
      // fmt, not ":" + string: gcc 12's -Wrestrict misreads that at -O3 (bug 105329).
      if (m.key.index) metric += fmt::format(":{}", m.key.index->ToString());
      const std::string key = m.key.ToString();
      const auto level = levels.find(Anatomize(key).family);
      t.Add({r.name, "ran", metric, FormatFigure(m.value), m.unit,
             MetricReading(key, m.value, level == levels.end() ? NAN : level->second, judged, model,
                           criteria != nullptr)});
    }
  }
  std::string out = t.ToString();
  if (!reasons.empty()) out += "\n";
  for (const Reason& r : reasons) {
    out += fmt::format("{} {}: {}\n", BenchStatusName(r.status), fmt::join(r.benchmarks, ", "),
                       r.error);
  }
  return out;
}

}  // namespace vigil::agent
