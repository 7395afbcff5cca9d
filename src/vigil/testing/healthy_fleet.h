// Test support: a generated fleet without defects, noise or missing values (validate's fleet
// generator), as rows and as the summary lines a node uploads. Header-only: for tests that link
// vigil_validate.
#pragma once

#include <string>
#include <vector>

#include "vigil/eval/fleet_gen.h"
#include "vigil/results/summary.h"

namespace vigil::testing {

// `nodes` healthy nodes; `second_class` of them (a fraction) of a second hardware class.
inline std::vector<FleetRow> HealthyFleet(int nodes, double second_class = 0) {
  eval::FleetGenOptions o;
  o.nodes = nodes;
  o.defect_rate = 0;
  o.noisy_rate = 0;
  o.missing_rate = 0;
  o.second_class = second_class;
  return eval::GenerateFleet(o)->rows;
}

// The rows as fleet summary lines (SuperBench's results-summary.jsonl).
inline std::string SummaryLines(const std::vector<FleetRow>& rows) {
  std::string out;
  for (const FleetRow& r : rows) out += FormatFleetRow(r);
  return out;
}

}  // namespace vigil::testing
