// `vigil learn`'s entry point: criteria learned from fleet summary files and written to a file.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vigil/core/env.h"
#include "vigil/core/status.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/learn.h"
#include "vigil/learned/reach.h"

namespace vigil::learned {

struct LearnRequest {
  std::vector<std::string> data;  // fleet summary files; several are one training set
  std::string out;                // the criteria file to write (JSON)
  LearnOptions options;           // every class must have options.min_nodes nodes
};

// What LearnFromFiles learned, and from how much.
struct LearnedFromFiles {
  LearnedCriteria criteria;
  size_t nodes = 0;          // in the table learned from (all files)
  size_t metrics = 0;        // distinct metric keys in it
  std::vector<Reach> reach;  // what the criteria find, part by part (ReachOf)
};

// Checks that request.out can be written (before any work), reads the fleet files into one table
// (ReadFleetFiles), learns the criteria (Learn, every class required) and writes them to
// request.out atomically (CriteriaToJson, one space of indentation), all through `env`, and asks
// them what they find (ReachOf). Fails with
// the first error of those steps: InvalidArgument for bad input or an unwritable out, the
// read's or write's error otherwise; nothing is written then.
Result<LearnedFromFiles> LearnFromFiles(const LearnRequest& request, Env& env = Env::Default());

}  // namespace vigil::learned
