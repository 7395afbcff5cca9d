#include "vigil/cluster/node_check.h"

#include <fmt/format.h>

#include "vigil/core/fault_line.h"
#include "vigil/core/text.h"

namespace vigil::cluster {

Result<NodeOutcome> ApplyNodeCheck(Slurm& slurm, const NodeCheck& check, double max_share,
                                   Clock& clock) {
  NodeOutcome out;
  if (check.line != "OK") {
    if (!check.line.starts_with(kFaultLinePrefix)) {
      return Status::InvalidArgument(
          fmt::format("check line {}: neither OK nor a fault line", Quote(check.line)));
    }
    if (check.drain_delay_s > 0) clock.SleepFor(check.drain_delay_s, nullptr);
    VIGIL_ASSIGN_OR_RETURN(const SlurmAction a,
                           slurm.DrainWithinLimit(check.node, check.line, max_share));
    switch (a) {
      case SlurmAction::kDone:
        out.change = NodeOutcome::Change::kDrained;
        out.text = fmt::format("drained {}: {}", check.node, check.line);
        break;
      case SlurmAction::kAlready:
        out.text = fmt::format("{} is already drained; its reason is kept", check.node);
        break;
      case SlurmAction::kBreakerOpen:
        out.text = fmt::format(
            "not drained {}: the circuit breaker is open (Vigil holds {:.0f}% of the nodes "
            "drained, the most it may; a person must look)",
            check.node, max_share * 100);
        break;
      case SlurmAction::kNotVigils:
        break;  // a drain never answers so
    }
    return out;
  }
  if (!check.passed_validation) return out;
  VIGIL_ASSIGN_OR_RETURN(const SlurmAction a, slurm.Resume(check.node));
  switch (a) {
    case SlurmAction::kDone:
      out.change = NodeOutcome::Change::kResumed;
      out.text = fmt::format("resumed {}: a validation passed", check.node);
      break;
    case SlurmAction::kNotVigils:
      out.text = fmt::format("{} was drained by someone else: left drained", check.node);
      break;
    case SlurmAction::kAlready:
    case SlurmAction::kBreakerOpen:
      break;
  }
  return out;
}

}  // namespace vigil::cluster
