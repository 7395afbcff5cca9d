// Learning criteria (criteria.h) from the fleet's own results (docs/validate.md): each hardware
// class on its own, each test's limit read from the tail of the fleet's own values.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/learned/criteria.h"
#include "vigil/results/summary.h"

namespace vigil::learned {

// The nodes of each hardware class (FleetTable::hardware), classes in first-appearance order.
std::vector<std::pair<std::string, std::vector<size_t>>> NodesByHardware(const FleetTable& table);

struct LearnOptions {
  double budget = 0.005;
  double resolution = 0.002;
  size_t min_nodes = 5;         // a class with fewer nodes is an error: too few to learn from
  double min_mode_share = 0.1;  // a second mode of a family holds at least this share of nodes
};

// A hardware class that Learn left out, and why.
struct LeftOutClass {
  std::string hardware;
  std::vector<std::string> nodes;  // in table order
  std::string reason;
};

// Learns criteria from a fleet table (one or several files appended), each hardware class on its
// own. A class with fewer than options.min_nodes nodes is an error (InvalidArgument naming it)
// when `left_out` is null; otherwise it is left out of the criteria and appended to *left_out,
// and only a table without any class to learn from is an error. `vigil learn` insists on every
// class; the fleet service must not let one odd node (one that lost a GPU reports a class of
// its own) stop the whole fleet's learning.
Result<LearnedCriteria> Learn(const FleetTable& table, const LearnOptions& options,
                              std::vector<LeftOutClass>* left_out = nullptr);

}  // namespace vigil::learned
