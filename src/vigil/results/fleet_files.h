// Fleet summary files read into one table, as the commands that judge or learn from a fleet take
// them (`vigil learn`, `validate`, `diagnose`, `baseline`): several files are one fleet.
#pragma once

#include <string>
#include <vector>

#include "vigil/core/env.h"
#include "vigil/core/status.h"
#include "vigil/results/summary.h"

namespace vigil {

// Reads the fleet summary files `paths` (each as ReadFleetTable does: a node listed twice in one
// file keeps its last line) and appends them into one table (FleetTable::Append), logging each of
// its warnings. InvalidArgument naming the files when they hold no node at all; the first file's
// error otherwise. The files are read through `env`; the machine's (Env::Default()) are loaded by
// simdjson itself, without a second copy of what may be half a gigabyte.
Result<FleetTable> ReadFleetFiles(const std::vector<std::string>& paths, Env& env = Env::Default());

}  // namespace vigil
