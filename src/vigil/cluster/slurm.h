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
#include "vigil/core/fault_line.h"
#include "vigil/core/status.h"

namespace vigil::cluster {

enum class NodeUse { kIdle, kBusy, kUnavailable };

struct SlurmNode {
  std::string name;
  std::vector<std::string> state;  // State= split at '+': "IDLE", "DRAIN", "NOT_RESPONDING"...
  std::string reason;              // Reason= without Slurm's " [user@time]" suffix; "" when none
  bool Drained() const;            // DRAIN is among its state flags (draining or drained)
  bool DrainedByVigil() const;     // drained, with a reason that Vigil wrote
  // What a job submitted now could do with it, from State= as Slurm prints it ("IDLE+DRAIN", or
  // before 21.08 "IDLE*" with a symbol for the flag): kIdle for IDLE with no flag but CLOUD;
  // kBusy for ALLOCATED, MIXED or COMPLETING, or IDLE that is reserved, planned or completing (a
  // job would wait for it); kUnavailable for every other state and flag (down, drained or
  // draining, failing, not responding, powered or powering down, maintenance, rebooting, FUTURE,
  // UNKNOWN, ERROR, and any flag Vigil does not know).
  NodeUse Use() const;
};

// One node of `scontrol show node --oneliner` (key=value words; Reason runs to the line's end).
// InvalidArgument naming the missing field when NodeName= or State= is not there.
Result<SlurmNode> ParseScontrolNode(std::string_view line);

struct SlurmOptions {
  std::string scontrol = "scontrol";  // the programs, looked up in PATH unless they hold a '/'
  std::string sbatch = "sbatch";
  std::string squeue = "squeue";
  std::string conf;       // SLURM_CONF for every call; "" keeps the environment's
  double timeout_s = 10;  // for each call
};

// A job in Slurm's queue (pending, running, suspended or completing), as squeue lists it.
struct SlurmJob {
  std::string id;
  std::string name;
  std::string state;  // PENDING, RUNNING...
};

// A validation that Vigil submits: one whole node (--exclusive), its script a shell command line.
// Its job name is ValidationJobName(node), which is how a later submission sees that the node
// already has one queued or running.
struct ValidationJob {
  std::string node;         // the Slurm node it must run on (--nodelist)
  std::string command;      // the job's script: one shell command line, run by /bin/sh
  double time_limit_s = 0;  // --time, rounded up to whole minutes; 0: the partition's limit
  std::string partition;    // "" : Slurm's default partition
  std::string account;      // "" : the user's default account
  std::string output;       // --output pattern; "" : Slurm's default (slurm-%j.out)
};

inline constexpr std::string_view kValidationJobPrefix = "vigil-validate:";
std::string ValidationJobName(std::string_view node);  // "vigil-validate:<node>"
// The node of a validation job's name; "" when the name is not one.
std::string_view ValidationJobNode(std::string_view job_name);

// sbatch's arguments for `job` (without the program): --parsable, the job name, the node, one
// task, the whole node (--exclusive, and all its memory: --mem=0), the limits, and --wrap with the
// command.
std::vector<std::string> SbatchArgs(const ValidationJob& job);

// InvalidArgument unless `job` names one node (letters, digits, '-', '_', '.': not a host-list
// expression) and has a command.
Status CheckValidationJob(const ValidationJob& job);

// squeue's --states for the jobs that hold or will hold their nodes.
inline constexpr std::string_view kQueuedStates =
    "--states=PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,RESIZING";

// What an action did.
enum class SlurmAction {
  kDone,         // the node's state was changed
  kAlready,      // it was already so (drained; or not drained, for a resume)
  kNotVigils,    // a resume of a node that someone else drained: left alone
  kBreakerOpen,  // a drain refused: Vigil already holds as many nodes drained as it may
};
std::string_view SlurmActionName(SlurmAction a);

// The circuit breaker's limit: how many of a cluster's `nodes` Vigil may hold drained at once,
// `max_share` of them rounded down, and at least 1 (so that a small cluster can drain its one bad
// node). 0 when `max_share` is 0 (draining is off).
size_t DrainLimit(double max_share, size_t nodes);

class Slurm {
 public:
  // `runner` is borrowed and must outlive this object.
  Slurm(CommandRunner& runner, SlurmOptions options);

  // The node's state and reason. NotFound when Slurm does not know the node; IoError (with the
  // command and what it printed) when scontrol fails otherwise; what CommandRunner::Run returns
  // when scontrol cannot run.
  Result<SlurmNode> Node(std::string_view node);

  // Drains `node` with `reason`, which must start with kFaultLinePrefix (InvalidArgument
  // otherwise) and hold no newline. A node already drained, by anyone, keeps its reason: kAlready.
  Result<SlurmAction> Drain(std::string_view node, std::string_view reason);

  // Every node Slurm knows, in its order. Errors as Node's.
  Result<std::vector<SlurmNode>> Nodes();

  // Drain under the circuit breaker: kAlready for a node drained already (by anyone: its reason
  // is kept), whatever the breaker says; kBreakerOpen, touching nothing, when Vigil already holds
  // DrainLimit(max_share, nodes) nodes drained; otherwise Drain. Drains that other hosts make at
  // the same instant are settled after the fact, without a lock: a call that finds Vigil holding
  // more than the limit after its drain undoes it (kBreakerOpen). Of the drains that stay, the
  // last one made saw all the others, so no more than the limit stay once the calls return;
  // racing calls may leave fewer (the next check drains them) (docs/slurm.md).
  Result<SlurmAction> DrainWithinLimit(std::string_view node, std::string_view reason,
                                       double max_share);

  // Resumes `node` when Vigil drained it (kDone); kAlready when it is not drained; kNotVigils,
  // touching nothing, when someone else drained it.
  Result<SlurmAction> Resume(std::string_view node);

  // The jobs that hold or will hold nodes (pending, running, suspended, completing,
  // configuring), every user's and in every partition, hidden ones too (`squeue --all`), as far as
  // Slurm lets this user see them (PrivateData=jobs hides other users' jobs; SQUEUE_* variables
  // of this process's environment are not passed on to squeue). IoError when squeue fails;
  // InvalidArgument when a line is not "id|name|state".
  Result<std::vector<SlurmJob>> Jobs();

  // Submits `job` with sbatch; its job id. CheckValidationJob's errors; IoError (with what sbatch
  // said) when sbatch refuses it.
  Result<std::string> Submit(const ValidationJob& job);

 private:
  Result<CommandOutput> Call(const std::string& program, std::vector<std::string> args,
                             std::vector<std::string> unset_prefixes = {});
  Result<CommandOutput> Scontrol(std::vector<std::string> args);
  Status Update(std::string_view node, std::vector<std::string> settings);

  CommandRunner& runner_;
  SlurmOptions options_;
};

}  // namespace vigil::cluster
