// What a node's own check does to its state in Slurm (docs/slurm.md): `vigil run --slurm` on the
// node, from Slurm's HealthCheckProgram, a prolog or epilog, or a validation run. A fault drains
// the node with the check's line as the reason, under the circuit breaker; only a validation that
// passed (the quick or full suite, judged healthy) resumes it, and only when Vigil drained it. A
// health check that passes changes nothing: it is too short to clear a node that a validation
// found at fault.
#pragma once

#include <string>

#include "vigil/cluster/slurm.h"
#include "vigil/core/clock.h"

namespace vigil::cluster {

// The default of the circuit breaker (NVSentinel's): Vigil holds at most 5% of the nodes drained.
inline constexpr double kDefaultMaxDrainedShare = 0.05;

struct NodeCheck {
  std::string node;  // the node's name in Slurm
  // "OK", or the fault line, which starts with kFaultLinePrefix (core/fault_line.h).
  std::string line;
  // A validation that judged the node healthy: every benchmark of the quick or full suite ran,
  // none failed, and criteria (learned, or the fleet service's) found nothing.
  bool passed_validation = false;
  // How long to wait before a drain's count of the breaker (the caller draws it at random, up to
  // kDefaultDrainJitter): slurmd starts the health checks of every node at the same moment, and
  // checks that count and drain at the same instant all find the limit passed and all undo their
  // drains (slurm.h), interval after interval. Spread out, they drain one after another.
  double drain_delay_s = 0;
};

// The spread of the drain delays: well inside Slurm's 60 s for a health check.
inline constexpr double kDefaultDrainJitter = 10;

// What the check did to the node.
struct NodeOutcome {
  enum class Change { kNone, kDrained, kResumed };
  Change change = Change::kNone;
  // One line for the log: "drained vnode0: vigil: ...", "not drained: the circuit breaker ...",
  // "vnode0 was drained by someone else (reason \"fan\"): left drained"...
  std::string text;
};

// Acts on `check` through `slurm`: drains on a fault line (after check.drain_delay_s on `clock`,
// DrainWithinLimit with `max_share`), resumes after a passed validation (Resume), nothing
// otherwise. Errors are Slurm's (the command and what it printed); InvalidArgument for a line
// that is neither "OK" nor a fault line.
Result<NodeOutcome> ApplyNodeCheck(Slurm& slurm, const NodeCheck& check, double max_share,
                                   Clock& clock);

}  // namespace vigil::cluster
