#include "vigil/eval/evaluation.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn.h"
#include "vigil/results/anatomy.h"

namespace vigil::eval {

FoundSet FoundByLearned(const FleetTable& table,
                        const std::vector<learned::NodeFindings>& verdicts) {
  FoundSet found;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    for (const learned::Finding& f : verdicts[i].findings)
      found.emplace(table.node(i), ComponentName(f.component));
  }
  return found;
}

FoundSet FoundBySuperBenchStyle(const FleetTable& t) {
  std::vector<MetricAnatomy> anatomy;
  for (const std::string& key : t.metrics()) anatomy.push_back(Anatomize(key));
  FoundSet found;
  for (const auto& [hardware, nodes] : learned::NodesByHardware(t)) {
    for (size_t j = 0; j < t.metric_count(); ++j) {
      if (anatomy[j].direction == Direction::kInfo) continue;  // never judged
      double sum = 0;
      size_t n = 0;
      for (size_t i : nodes) {
        if (!std::isnan(t.at(i, j))) {
          sum += t.at(i, j);
          ++n;
        }
      }
      if (n == 0) continue;
      const double mean = sum / static_cast<double>(n);
      const bool expected =
          static_cast<double>(n) >= learned::kExpectedShare * static_cast<double>(nodes.size());
      for (size_t i : nodes) {
        const double v = t.at(i, j);
        const MetricAnatomy& a = anatomy[j];
        bool flagged = false;
        if (std::isnan(v)) {
          flagged = expected;
        } else if (a.direction == Direction::kZero || a.direction == Direction::kClear) {
          flagged = v != 0;
        } else if (mean != 0) {
          const double var = (v - mean) / mean;
          flagged = a.direction == Direction::kLower ? var > 0.1 : var < -0.1;
        }
        if (!flagged) continue;
        // A benchmark that failed or did not run is one finding, as the learned validator
        // reports it.
        const std::string benchmark = BenchmarkOfKey(t.metrics()[j]);
        const long rc = t.column(benchmark + "/return_code");
        const bool down = rc < 0 || std::isnan(t.at(i, static_cast<size_t>(rc))) ||
                          t.at(i, static_cast<size_t>(rc)) != 0;
        found.emplace(t.node(i),
                      down ? Anatomize(benchmark + "/return_code").component : a.component);
      }
    }
  }
  return found;
}

const ScoreRow* Score::Row(std::string_view label) const {
  for (const ScoreRow& r : rows) {
    if (r.label == label) return &r;
  }
  return nullptr;
}

Score ScoreFindings(const FoundSet& found, const std::vector<PlantedDefect>& truth) {
  FoundSet planted;
  for (const PlantedDefect& d : truth) planted.emplace(d.node, d.component);
  Score s;
  s.findings = static_cast<int>(found.size());
  for (const auto& pair : found) {
    if (!planted.contains(pair)) ++s.false_findings;
  }
  const auto label_of = [](const PlantedDefect& d) {
    if (d.kind == DefectKind::kFail || d.kind == DefectKind::kMissing) {
      return std::string(DefectKindName(d.kind));
    }
    return fmt::format("{}%", std::lround(d.size * 100));
  };
  std::map<std::string, ScoreRow> rows;
  const auto add = [&](ScoreRow& r, const PlantedDefect& d) {
    ++r.planted;
    if (found.contains({d.node, d.component})) ++r.found;
  };
  ScoreRow big{">=10%"}, all{"all"};
  for (const PlantedDefect& d : truth) {
    ScoreRow& r = rows[label_of(d)];
    r.label = label_of(d);
    add(r, d);
    if (d.size >= 0.1) add(big, d);
    add(all, d);
  }
  const auto finish = [&](ScoreRow r) {
    r.recall = r.planted > 0 ? static_cast<double>(r.found) / r.planted : 1;
    const int claimed = r.found + s.false_findings;
    r.precision = claimed > 0 ? static_cast<double>(r.found) / claimed : 1;
    r.f1 = r.recall + r.precision > 0 ? 2 * r.recall * r.precision / (r.recall + r.precision) : 0;
    s.rows.push_back(std::move(r));
  };
  for (const char* label : {"3%", "5%", "10%", "20%", "50%", "fail", "missing"}) {
    if (rows.contains(label)) finish(rows[label]);
  }
  finish(big);
  finish(all);
  return s;
}

}  // namespace vigil::eval
