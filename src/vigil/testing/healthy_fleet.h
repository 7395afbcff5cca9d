// Test support: a generated fleet without defects, noise or missing values (eval's fleet
// generator), as rows, as the summary lines a node uploads, and as a table. Header-only: for tests
// that link vigil_eval.
#pragma once

#include <cstdint>
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

// One hardware class (A100), no planted defect and no benchmark missing; `noisy_rate` of the nodes
// noisy (twice the jitter and a node-wide offset).
inline eval::GeneratedFleet HealthyA100Fleet(int64_t nodes, double noisy_rate) {
  eval::FleetGenOptions o;
  o.nodes = nodes;
  o.defect_rate = 0;
  o.missing_rate = 0;
  o.noisy_rate = noisy_rate;
  o.second_class = 0;
  return *eval::GenerateFleet(o);
}

// The fleet's rows as one table, read from their summary lines as `vigil learn` reads a file.
inline FleetTable TableOf(const eval::GeneratedFleet& g) {
  return *ParseFleetTable(SummaryLines(g.rows), "fleet.jsonl");
}

}  // namespace vigil::testing
