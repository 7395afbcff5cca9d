#include "vigil/learned/health.h"

#include <cmath>
#include <limits>

#include "vigil/results/anatomy.h"

namespace vigil::learned {

HealthRules::HealthRules(const std::vector<MetricAnatomy>& columns) {
  for (size_t j = 0; j < columns.size(); ++j) {
    if (columns[j].direction == Direction::kClear) {
      columns_.emplace_back(j, ParseComponent(columns[j].component));
    }
  }
}

std::vector<Finding> HealthRules::Findings(const FleetTable& table, size_t node) const {
  std::vector<Finding> out;
  for (const auto& [j, component] : columns_) {
    const double v = table.at(node, j);
    if (std::isnan(v) || v == 0) continue;
    Finding f;
    f.component = component;
    f.metric = table.metrics()[j];
    f.test = FindingTest::kHealth;
    f.value = v;
    f.sigmas = std::numeric_limits<double>::infinity();
    f.severity = Severity::kCritical;
    out.push_back(std::move(f));
  }
  return out;
}

NodeFindings JudgeHealth(const FleetTable& row) {
  NodeFindings nf;
  if (row.node_count() == 0) return nf;
  std::vector<MetricAnatomy> columns;
  for (const std::string& key : row.metrics()) columns.push_back(Anatomize(key));
  nf.findings = HealthRules(columns).Findings(row, 0);
  nf.defective = !nf.findings.empty();
  return nf;
}

}  // namespace vigil::learned
