// `vigil validate`'s entry point: a fleet's nodes judged by criteria from a file, and the findings
// scored against planted defects when their truth is given (docs/validate.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "vigil/core/env.h"
#include "vigil/core/status.h"
#include "vigil/eval/evaluation.h"
#include "vigil/learned/judge.h"
#include "vigil/results/summary.h"

namespace vigil::eval {

struct ValidateRequest {
  std::vector<std::string> data;  // fleet summary files; several are one fleet
  std::string criteria;           // from `vigil learn`
  std::string truth;              // planted defects (FormatTruth's CSV); "" for none
};

struct Validation {
  FleetTable table;                             // the fleet judged, all files
  std::vector<learned::NodeFindings> verdicts;  // by node of `table`
  size_t defective = 0;                         // nodes with a finding
  std::optional<Score> learned;                 // with truth: the findings' score
  std::optional<Score> superbench;              // with truth: SuperBench's rule style's
};

// Reads the criteria (learned::ReadCriteria), the truth when given (ParseTruth) and the fleet
// files (ReadFleetFiles), in that order and all through `env`; judges every node
// (learned::Judge) and, with truth, scores the findings and SuperBench's production rule style
// on the same data. Fails with the first error of the reads (InvalidArgument or NotFound naming
// the file for bad input).
Result<Validation> ValidateFiles(const ValidateRequest& request, Env& env = Env::Default());

}  // namespace vigil::eval
