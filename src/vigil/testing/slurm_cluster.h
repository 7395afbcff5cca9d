// Test support: a real Slurm (Debian's slurmctld and slurmd) on loopback, in a directory of its
// own, on free ports, stopped and removed when the object dies. Authentication is auth/none, so no
// munge daemon is needed; the daemons run as root (tests that need it skip otherwise).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/testing/child.h"

namespace vigil::testing {

struct SlurmClusterOptions {
  int nodes = 1;       // nodes with a slurmd of their own: vnode0, vnode1, ...
  int idle_nodes = 0;  // nodes only in slurm.conf (no slurmd): vidle0, ...; they can be drained
  std::string health_check_program;  // HealthCheckProgram; "" for none
  int health_check_interval_s = 5;   // HealthCheckInterval
};

class SlurmCluster {
 public:
  // Writes slurm.conf below `dir` (which must exist), starts slurmctld and each slurmd, and waits
  // (up to 30 s) until every slurmd node has registered. Unavailable, with why (the binary that is
  // missing, not root, the daemon's log), when Slurm cannot start here: tests skip on it.
  static Result<std::unique_ptr<SlurmCluster>> Start(const std::string& dir,
                                                     const SlurmClusterOptions& options);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  const std::string& conf() const { return conf_; }  // the slurm.conf path (SLURM_CONF)
  const std::vector<std::string>& nodes() const { return nodes_; }  // with a slurmd
  const std::vector<std::string>& idle_nodes() const { return idle_nodes_; }
  // The last lines of the controller's log, for a failing test's message.
  std::string ControllerLog() const;

 private:
  SlurmCluster() = default;
  std::string dir_;
  std::string conf_;
  std::vector<std::string> nodes_;
  std::vector<std::string> idle_nodes_;
  std::vector<std::unique_ptr<Child>> daemons_;  // slurmctld, then each slurmd
};

}  // namespace vigil::testing
