// Slurm's node states through its own command, scontrol (docs/slurm.md): read a node's state and
// reason, drain it with a reason, and resume it only when Vigil drained it. A reason that Vigil
// writes starts with "vigil:", which is how a later resume tells Vigil's drains from everyone
// else's: a node that a person (or another tool) drained is never resumed by Vigil, and its reason
// is never overwritten.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vigil/cluster/command.h"
#include "vigil/core/status.h"

namespace vigil::cluster {

// How every reason Vigil gives Slurm begins.
inline constexpr std::string_view kVigilReasonPrefix = "vigil:";

struct SlurmNode {
  std::string name;
  std::vector<std::string> state;  // State= split at '+': "IDLE", "DRAIN", "NOT_RESPONDING"...
  std::string reason;              // Reason= without Slurm's " [user@time]" suffix; "" when none
  bool Drained() const;            // DRAIN is among its state flags (draining or drained)
  bool DrainedByVigil() const;     // drained, with a reason that Vigil wrote
};

// One node of `scontrol show node --oneliner` (key=value words; Reason runs to the line's end).
// InvalidArgument naming the missing field when NodeName= or State= is not there.
Result<SlurmNode> ParseScontrolNode(std::string_view line);

struct SlurmOptions {
  std::string scontrol = "scontrol";  // the program, looked up in PATH unless it holds a '/'
  std::string conf;                   // SLURM_CONF for every call; "" keeps the environment's
  double timeout_s = 10;              // for each scontrol call
};

// What an action did.
enum class SlurmAction {
  kDone,       // the node's state was changed
  kAlready,    // it was already so (drained; or not drained, for a resume)
  kNotVigils,  // a resume of a node that someone else drained: left alone
};
std::string_view SlurmActionName(SlurmAction a);

class Slurm {
 public:
  // `runner` is borrowed and must outlive this object.
  Slurm(CommandRunner& runner, SlurmOptions options);

  // The node's state and reason. NotFound when Slurm does not know the node; IoError (with the
  // command and what it printed) when scontrol fails otherwise; what CommandRunner::Run returns
  // when scontrol cannot run.
  Result<SlurmNode> Node(std::string_view node);

  // Drains `node` with `reason`, which must start with kVigilReasonPrefix (InvalidArgument
  // otherwise) and hold no newline. A node already drained, by anyone, keeps its reason: kAlready.
  Result<SlurmAction> Drain(std::string_view node, std::string_view reason);

  // Resumes `node` when Vigil drained it (kDone); kAlready when it is not drained; kNotVigils,
  // touching nothing, when someone else drained it.
  Result<SlurmAction> Resume(std::string_view node);

 private:
  Result<CommandOutput> Scontrol(std::vector<std::string> args);
  Status Update(std::string_view node, std::vector<std::string> settings);

  CommandRunner& runner_;
  SlurmOptions options_;
};

}  // namespace vigil::cluster
