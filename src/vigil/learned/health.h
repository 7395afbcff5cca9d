// Verdicts that need no fleet: readings whose meaning is fixed (anatomy.h's kClear), such as an
// uncorrectable ECC error since the driver loaded, a pending or failed row remap, hardware
// throttling, a silent-data-corruption miscompare, a memory test's mismatching words, a GPU on PCI
// that the driver does not reach, or a PCIe link short of lanes. Any value but 0 is a critical
// "health" finding naming the component, whatever the node's hardware class and whether or not
// criteria were learned (docs/validate.md).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "vigil/learned/judge.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/component.h"
#include "vigil/results/summary.h"

namespace vigil::learned {

class HealthRules {
 public:
  // Finds the columns with a fixed meaning, once for all of a table's nodes, from the anatomy of
  // each of its columns in order.
  explicit HealthRules(const std::vector<MetricAnatomy>& columns);

  // Node `node`'s findings, in column order: one per reading with a fixed meaning that is not 0
  // (a missing value is not judged here). REQUIRES: `table` has the columns this was built from.
  std::vector<Finding> Findings(const FleetTable& table, size_t node) const;

 private:
  std::vector<std::pair<size_t, ComponentId>> columns_;  // column, component it names
};

// The verdict of the one node of `row` by the rules alone.
NodeFindings JudgeHealth(const FleetTable& row);

}  // namespace vigil::learned
