#include "vigil/sim/cluster_files.h"

#include "vigil/core/file.h"

namespace vigil::sim {

Result<ClusterSimOutput> WriteSimulatedCluster(const ClusterSimOptions& options,
                                               const ClusterFiles& files) {
  for (const std::string* path : {&files.sacct, &files.events, &files.truth}) {
    if (!path->empty()) VIGIL_RETURN_IF_ERROR(CheckWritable(*path));
  }
  VIGIL_ASSIGN_OR_RETURN(ClusterSimOutput out, SimulateCluster(options));
  VIGIL_RETURN_IF_ERROR(WriteFileAtomic(files.sacct, out.sacct));
  if (!files.events.empty()) VIGIL_RETURN_IF_ERROR(WriteFileAtomic(files.events, out.events));
  if (!files.truth.empty()) VIGIL_RETURN_IF_ERROR(WriteFileAtomic(files.truth, out.truth));
  return out;
}

}  // namespace vigil::sim
