#include "vigil/eval/fleet_files.h"

#include "vigil/core/file.h"
#include "vigil/results/summary.h"

namespace vigil::eval {

Result<FleetFilesWritten> GenerateFleetFiles(const FleetFilesRequest& request) {
  VIGIL_RETURN_IF_ERROR(CheckWritable(request.out));
  if (!request.truth.empty()) VIGIL_RETURN_IF_ERROR(CheckWritable(request.truth));
  VIGIL_ASSIGN_OR_RETURN(const GeneratedFleet fleet, GenerateFleet(request.fleet));
  VIGIL_RETURN_IF_ERROR(WriteFleetSummary(request.out, fleet.rows));
  if (!request.truth.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteFileAtomic(request.truth, FormatTruth(fleet.truth)));
  }
  return FleetFilesWritten{fleet.rows.size(), fleet.truth.size()};
}

}  // namespace vigil::eval
