// What carries out a remediation: Slurm (scontrol, cluster::Slurm) or an external command. The
// Remediator calls a backend from its worker thread only, one call at a time.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "vigil/cluster/command.h"
#include "vigil/core/status.h"
#include "vigil/remediate/policy.h"

namespace vigil::remediate {

// What a backend did.
enum class BackendOutcome {
  kDone,         // the node's state was changed
  kAlready,      // drained already (by anyone); or, for a resume, not drained
  kNotVigils,    // a resume of a node someone else drained: left alone
  kBreakerOpen,  // a drain refused by the backend's own breaker (Slurm::DrainWithinLimit)
};

// One call of a backend: its outcome, or the error that makes the Remediator try again; with
// the commands it ran and what they printed, for the audit log, either way.
struct Attempt {
  Status status;  // OK: `outcome` says what was done
  BackendOutcome outcome = BackendOutcome::kDone;
  std::string command;  // the command lines run, one per line
  std::string output;   // what they printed (stdout and stderr), trimmed
};

// What a backend knows of the cluster: the nodes that Vigil holds drained (Slurm: those whose
// reason starts with "vigil:", whoever wrote it), and how many nodes there are.
struct BackendView {
  std::set<std::string> vigils_drains;
  size_t nodes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "slurm", "command", or a fake's name.
  virtual std::string_view name() const = 0;
  // Drains `node` with `reason` (which starts with "vigil:").
  virtual Attempt Drain(std::string_view node, std::string_view reason) = 0;
  // Resumes `node` if Vigil drained it.
  virtual Attempt Resume(std::string_view node) = 0;
  // The cluster as the backend sees it; nullopt when it cannot tell (an external command),
  // an error when asking failed.
  virtual Result<std::optional<BackendView>> View() = 0;
};

// Slurm through scontrol: drains under Slurm::DrainWithinLimit with `max_drained_share`, so that
// drains by node-local health checks and by the service count against one limit; resumes only
// nodes whose reason Vigil wrote. `runner` is borrowed and must outlive the backend.
std::unique_ptr<Backend> MakeSlurmBackend(cluster::CommandRunner& runner,
                                          const cluster::SlurmOptions& options,
                                          double max_drained_share);

// An external program: `options.argv` with {action}, {node} and {reason} replaced in each
// argument, run without a shell; exit status 0 is done, anything else a failure (with its
// output). It cannot tell who drained a node: the Remediator resumes only the nodes its own
// record holds drained. `runner` is borrowed and must outlive the backend.
std::unique_ptr<Backend> MakeCommandBackend(cluster::CommandRunner& runner,
                                            const CommandBackendOptions& options);

// The backend `policy` names. `runner` is borrowed and must outlive the backend.
std::unique_ptr<Backend> MakeBackend(const Policy& policy, cluster::CommandRunner& runner);
// The same, running real processes (cluster::MakeProcessRunner, owned by the backend).
std::unique_ptr<Backend> MakeBackend(const Policy& policy);

// `arg` with every {action}, {node} and {reason} replaced (other braces kept as they are).
std::string Substitute(std::string_view arg, std::string_view action, std::string_view node,
                       std::string_view reason);

}  // namespace vigil::remediate
