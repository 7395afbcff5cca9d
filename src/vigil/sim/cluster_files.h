// `vigil simulate cluster`: the generated Slurm log, node events and planted lemons written to
// files (SimulateCluster makes them in memory).
#pragma once

#include <string>

#include "vigil/core/status.h"
#include "vigil/sim/cluster_sim.h"

namespace vigil::sim {

struct ClusterFiles {
  std::string sacct;   // the sacct log (required)
  std::string events;  // the node events CSV; "": not written
  std::string truth;   // the planted lemons CSV; "": not written
};

// Generates the cluster's logs (SimulateCluster) and writes each file atomically; returns what
// was generated. Every path is checked writable before anything is generated. Validate's error;
// IoError for a file that cannot be written. REQUIRES: files.sacct is not empty.
Result<ClusterSimOutput> WriteSimulatedCluster(const ClusterSimOptions& options,
                                               const ClusterFiles& files);

}  // namespace vigil::sim
