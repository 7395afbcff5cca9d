// The remediation policy of `vigil serve --remediation POLICY.yaml` (docs/serve.md,
// "Remediation"): which events act on a node, through which backend, and the limits that keep it
// safe: dry-run unless told otherwise, a circuit breaker over the share of the fleet drained, a
// rate limit, de-duplication, and retries with back-off.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/cluster/slurm.h"
#include "vigil/core/status.h"
#include "vigil/remediate/audit.h"

namespace vigil::remediate {

enum class Mode {
  kDryRun,   // decide and record, call nothing
  kEnforce,  // act through the backend
};
std::string_view ModeName(Mode mode);  // "dry-run", "enforce"

enum class BackendKind {
  kSlurm,    // scontrol drain/resume (cluster::Slurm)
  kCommand,  // an external program (a Kubernetes cordon, a ticket, a reboot)
};
std::string_view BackendKindName(BackendKind kind);  // "slurm", "command"

struct CommandBackendOptions {
  // The program and its arguments; {action}, {node} and {reason} in any argument are replaced
  // by the action ("drain", "resume"), the node and the drain reason. No shell.
  std::vector<std::string> argv;
  double timeout_s = 30;  // then the program's process group is killed
};

struct Policy {
  Mode mode = Mode::kDryRun;
  BackendKind backend = BackendKind::kSlurm;
  cluster::SlurmOptions slurm;    // conf, scontrol, timeout (10 s)
  CommandBackendOptions command;  // required (argv) for the command backend
  // The action each trigger takes (kPolicyTriggers' order); none: the trigger does nothing.
  // Drains for the first three, resume for passing validations.
  std::array<std::optional<Action>, 4> on = {Action::kDrain, std::nullopt, std::nullopt,
                                             Action::kResume};
  int lemon_defective = 3;          // a lemon: defective in at least this many ...
  int lemon_uploads = 5;            // ... of its latest this many uploads
  double max_drained_share = 0.05;  // the breaker: cluster::DrainLimit of the fleet's nodes
  int rate_actions = 10;            // at most this many actions (queued or dry-run) ...
  double rate_per_s = 3600;         // ... in any window of this many seconds
  double dedupe_s = 3600;           // the same action on the same node within this: a duplicate
  double retry_initial_s = 30;      // the wait after a failed attempt, doubling after each ...
  double retry_max_s = 1800;        // ... up to this
  int retry_attempts = 8;           // attempts in all, the first included

  // The action `trigger` takes under this policy; none when it does nothing.
  std::optional<Action> ActionFor(Trigger trigger) const;
};

// Reads a policy from YAML text. Every error is InvalidArgument "<source>:<line>: <field>:
// <problem>" (the field as a dotted path: "retry.initial"); unknown keys are errors, as are
// values out of range. Never throws.
Result<Policy> ParsePolicy(std::string_view text, std::string_view source);

// Reads the file at `path` (IoError/NotFound when it cannot be read) and parses it.
Result<Policy> ReadPolicy(const std::string& path);

}  // namespace vigil::remediate
