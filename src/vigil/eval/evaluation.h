// Scoring a validator's findings against planted defects (docs/validate.md): precision and recall
// of (node, component) pairs, by defect size.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/judge.h"
#include "vigil/results/summary.h"

namespace vigil::eval {

using FoundSet = std::set<std::pair<std::string, std::string>>;  // (node, component)

// The (node, component) pairs of the findings of defective nodes.
FoundSet FoundByLearned(const FleetTable& table,
                        const std::vector<learned::NodeFindings>& verdicts);

// SuperBench's production rule style on the same fleet: per hardware class a mean baseline, and a
// metric flagged when it is 10% worse than it (variance < -10% for higher-is-better metrics,
// > +10% for lower-is-better), a return code is not 0, or an expected metric is missing.
FoundSet FoundBySuperBenchStyle(const FleetTable& table);

struct ScoreRow {
  std::string label;  // "3%", ..., "fail", "missing", ">=10%", "all"
  int planted = 0;
  int found = 0;  // planted pairs among the findings
  double recall = 0;
  double precision = 0;  // found / (found + findings that match no planted pair)
  double f1 = 0;
};

struct Score {
  int findings = 0;
  int false_findings = 0;  // pairs that match no planted defect
  std::vector<ScoreRow> rows;
  const ScoreRow* Row(std::string_view label) const;
};

Score ScoreFindings(const FoundSet& found, const std::vector<PlantedDefect>& truth);

}  // namespace vigil::eval
