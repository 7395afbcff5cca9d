// `vigil simulate fleet`'s entry point: a generated fleet written to its summary file, and its
// planted defects to their truth file.
#pragma once

#include <cstddef>
#include <string>

#include "vigil/core/status.h"
#include "vigil/eval/fleet_gen.h"

namespace vigil::eval {

struct FleetFilesRequest {
  FleetGenOptions fleet;
  std::string out;    // the fleet summary JSONL to write
  std::string truth;  // the planted defects CSV to write (FormatTruth); "" for none
};

// What GenerateFleetFiles wrote.
struct FleetFilesWritten {
  size_t nodes = 0;
  size_t defects = 0;  // planted, in the truth
};

// Checks that the files can be written (before any work), generates the fleet (GenerateFleet) and
// writes its summary (WriteFleetSummary) and, when asked, its truth, each atomically. Fails with
// the first error: InvalidArgument for bad options or an unwritable file.
Result<FleetFilesWritten> GenerateFleetFiles(const FleetFilesRequest& request);

}  // namespace vigil::eval
