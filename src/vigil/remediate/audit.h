// The vocabulary of remediation and its audit log: what Vigil may do to a node (Action), what
// made it consider doing so (Trigger), what came of it (Outcome), and the record kept of every
// decision and every attempt (AuditRecord), in the fleet service's store (docs/serve.md,
// "Remediation").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/mutex.h"
#include "vigil/core/status.h"

namespace vigil::remediate {

enum class Action {
  kDrain,    // take the node out of scheduling (Slurm DRAIN, a cordon)
  kResume,   // put a node Vigil drained back
  kBreaker,  // the circuit breaker's own records: it opened, or a person reset it
};
// "drain", "resume", "breaker".
std::string_view ActionName(Action action);
// The inverse of ActionName; InvalidArgument naming the text for anything else.
Result<Action> ParseAction(std::string_view text);

enum class Trigger {
  kDefective,          // an upload judged defective
  kCriticalAlert,      // a detector alert of critical severity
  kLemon,              // a node defective in many of its latest uploads
  kPassingValidation,  // a healthy upload of a validation suite (not the health check)
  kPerson,             // someone through the API (a breaker reset)
};
// The policy's triggers, the keys of its `on:` map (kPerson is not one).
inline constexpr Trigger kPolicyTriggers[] = {Trigger::kDefective, Trigger::kCriticalAlert,
                                              Trigger::kLemon, Trigger::kPassingValidation};
// "defective", "critical_alert", "lemon", "passing_validation", "person".
std::string_view TriggerName(Trigger trigger);
Result<Trigger> ParseTrigger(std::string_view text);

enum class Outcome {
  kQueued,       // an action to run: its attempts follow, each a record of its own
  kActed,        // the backend did it
  kDryRun,       // it would have been done (policy mode dry-run): nothing was called
  kDuplicate,    // the same action on the same node was decided within the dedupe window
  kRateLimited,  // the policy's rate of actions was reached
  kBreakerOpen,  // a drain refused: the breaker is open (or this one opened it)
  kNotVigils,    // a resume refused: someone else drained the node
  kAlready,      // nothing to do: drained already (by anyone), or not drained for a resume
  kRetrying,     // an attempt failed; another one follows after a back-off
  kFailed,       // every attempt failed
  kOpened,       // the breaker opened (Action::kBreaker)
  kReset,        // a person reset the breaker (Action::kBreaker)
};
// "queued", "acted", "dry-run", "duplicate", "rate-limited", "breaker-open", "not-vigils",
// "already", "retrying", "failed", "opened", "reset".
std::string_view OutcomeName(Outcome outcome);
Result<Outcome> ParseOutcome(std::string_view text);
// Whether an outcome ends a decision (what /metrics counts): not kQueued and kRetrying, which
// records follow, and not the breaker's own kOpened and kReset.
bool IsFinal(Outcome outcome);

// What an attempt's record keeps of the commands' output; the rest is cut (a command may print
// a megabyte).
inline constexpr size_t kMaxAuditOutput = 4096;

// One line of the audit log.
struct AuditRecord {
  int64_t id = 0;    // assigned by the log, increasing
  double time = 0;   // Unix seconds
  std::string node;  // "" for a breaker record without a node
  Action action = Action::kDrain;
  Trigger trigger = Trigger::kDefective;
  Outcome outcome = Outcome::kQueued;
  // The drain reason ("vigil: GPU 3 ..."), or what a breaker record or a refusal says.
  std::string reason;
  int attempt = 0;      // 1, 2, ... for a run of the backend; 0 for a decision without one
  std::string command;  // what the attempt ran (one command line per line); "" for none
  std::string output;   // what it printed, or its error; "" for none
};

struct AuditFilter {
  std::string node;    // "" for any
  size_t limit = 100;  // the newest this many
  int64_t before = 0;  // only records with an id below this (paging); 0: from the newest
};

// Where the records go: the fleet service's store, or memory in tests.
class AuditLog {
 public:
  virtual ~AuditLog() = default;
  // Stores `record` durably and assigns its id. Thread-safe.
  virtual Status Append(AuditRecord& record) = 0;
  // The newest records that pass the filter, newest first. Thread-safe.
  virtual Result<std::vector<AuditRecord>> Records(const AuditFilter& filter) = 0;
};

// An audit log in memory (tests, and a service without a store). Thread-safe.
class MemoryAuditLog : public AuditLog {
 public:
  Status Append(AuditRecord& record) override EXCLUDES(mu_);
  Result<std::vector<AuditRecord>> Records(const AuditFilter& filter) override EXCLUDES(mu_);
  // Every record, oldest first.
  std::vector<AuditRecord> All() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::vector<AuditRecord> records_ GUARDED_BY(mu_);
};

}  // namespace vigil::remediate
