// The remediation engine of the fleet service: events (an upload judged defective, a critical
// alert, a lemon node, a passing validation) become decisions under a Policy, every decision is
// recorded in an AuditLog, and the actions run through a Backend on a worker thread, so that the
// upload and alert paths never wait on a scheduler (docs/serve.md, "Remediation").
//
// Safe by construction: in dry-run (the default) nothing is called; a drain is refused once Vigil
// holds cluster::DrainLimit(max_drained_share, fleet nodes) nodes drained (its own record and,
// on Slurm, Slurm's listing of "vigil:" drains), and that opens the circuit breaker: one record
// and one log line, then no drain until a person resets it (resumes still run); at most
// rate_actions actions per window; the same action on a node is not repeated within dedupe_s; a
// resume touches only a node Vigil drained; a failing action is retried with exponential
// back-off, every attempt recorded with its command and output.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "vigil/core/clock.h"
#include "vigil/core/mutex.h"
#include "vigil/core/status.h"
#include "vigil/remediate/audit.h"
#include "vigil/remediate/backend.h"
#include "vigil/remediate/policy.h"
#include "vigil/results/verdict.h"

namespace vigil::remediate {

struct Event {
  Trigger trigger = Trigger::kDefective;
  std::string node;
  // Why, for a drain: "vigil: <component> <finding>" (DrainReason). A reason without the
  // "vigil:" prefix gets it; newlines become spaces.
  std::string reason;

  bool operator==(const Event&) const = default;
};

// What an upload tells remediation.
struct UploadFacts {
  std::string node;
  Verdict verdict = Verdict::kUnjudged;
  bool validation = true;  // a validation suite (quick, full, a summary line); not the health check
  std::string reason;      // the drain reason of a defective verdict (DrainReason)
  // The node's latest verdicts, newest first, this upload's included (at least lemon_uploads
  // of them when there are that many).
  std::vector<Verdict> recent;
};

// The event an upload makes under `policy`, if any: a defective upload is a lemon when the
// policy acts on lemons and at least lemon_defective of its latest lemon_uploads were
// defective, else a defective event when the policy acts on those; a healthy validation is a
// passing validation. Pure.
std::optional<Event> UploadEvent(const Policy& policy, const UploadFacts& upload);

// "vigil: <component> <finding>", one line, at most kMaxReason bytes.
inline constexpr size_t kMaxReason = 200;
std::string DrainReason(std::string_view component, std::string_view finding);

// What /metrics and the dashboard show.
struct RemediationStatus {
  Mode mode = Mode::kDryRun;
  std::string backend;
  bool breaker_open = false;
  std::vector<std::string> drained;  // the nodes Vigil holds drained, by name
  size_t limit = 0;                  // the breaker's limit now
  size_t queued = 0;                 // actions waiting for an attempt
  std::map<std::pair<Action, Outcome>, int64_t> decisions;  // final outcomes since start
};

class Remediator {
 public:
  // `log` and `clock` are borrowed and must outlive this object. `backend` may be null in
  // dry-run (nothing is ever called). `fleet_nodes` says how many nodes the fleet has now (the
  // breaker's denominator, with the backend's own count when it has one); it is called with
  // this object's lock held and must not call back into it.
  Remediator(Policy policy, std::unique_ptr<Backend> backend, AuditLog& log, Clock& clock,
             std::function<size_t()> fleet_nodes);
  ~Remediator();  // Stop()
  Remediator(const Remediator&) = delete;
  Remediator& operator=(const Remediator&) = delete;

  // Reads the audit log back (the nodes Vigil holds drained, whether the breaker is open) and,
  // when enforcing, the backend's view of the cluster (a failure there is logged, not returned:
  // the service starts, and the next action tries again). Errors: the log's. Call before Start.
  Status Restore() EXCLUDES(mu_);

  // Starts the worker thread that runs queued actions; Stop ends it (an attempt under way
  // finishes first; actions still queued are dropped: the log has them as "queued").
  void Start() EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);

  // Decides what `event` does, records the decision, and queues the action; never calls the
  // backend. Nullopt when the policy does nothing with it (a trigger without an action, a
  // passing validation of a node Vigil does not hold drained); else the decision's outcome
  // (kQueued for an action the worker will run). Thread-safe.
  std::optional<Outcome> Decide(const Event& event) EXCLUDES(mu_);

  // A person closes the breaker (POST /api/v1/remediation/reset): recorded. False when it was
  // not open. Thread-safe.
  bool ResetBreaker() EXCLUDES(mu_);

  // Runs, on the calling thread, every attempt due now; the number made. For tests that drive a
  // FakeClock without Start.
  size_t RunDueForTest() EXCLUDES(mu_);

  RemediationStatus Snapshot() const EXCLUDES(mu_);
  const Policy& policy() const { return policy_; }

 private:
  struct Job {
    Action action = Action::kDrain;
    Trigger trigger = Trigger::kDefective;
    std::string node;
    std::string reason;
    int attempt = 1;  // the next attempt's number
    double due = 0;   // monotonic seconds
  };

  void Work() EXCLUDES(mu_);
  // The earliest job due at `now`, taken off the queue.
  std::optional<Job> TakeDue(double now) REQUIRES(mu_);
  void Run(Job job) EXCLUDES(mu_);
  // The backend's view into drained_ and backend_nodes_ (enforce only).
  void Sync() EXCLUDES(mu_);
  size_t Limit() const REQUIRES(mu_);
  // Opens the breaker with its record; `node` is the drain that found it at the limit.
  void OpenBreaker(const Event& event, size_t held, size_t limit) REQUIRES(mu_);
  // Appends to the log; a failure is logged (the decision stands).
  void Record(AuditRecord record);
  void Count(Action action, Outcome outcome) REQUIRES(mu_);

  const Policy policy_;
  const std::unique_ptr<Backend> backend_;
  AuditLog& log_;
  Clock& clock_;
  const std::function<size_t()> fleet_nodes_;

  mutable Mutex mu_;
  CondVar cv_;
  std::set<std::string> drained_ GUARDED_BY(mu_);
  size_t backend_nodes_ GUARDED_BY(mu_) = 0;
  bool breaker_open_ GUARDED_BY(mu_) = false;
  std::map<std::pair<std::string, Action>, double> last_ GUARDED_BY(mu_);  // for dedupe
  std::deque<double> recent_ GUARDED_BY(mu_);  // times of accepted actions, for the rate limit
  std::vector<Job> queue_ GUARDED_BY(mu_);
  std::map<std::pair<Action, Outcome>, int64_t> counts_ GUARDED_BY(mu_);
  double last_sync_ GUARDED_BY(mu_) = 0;
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread worker_;
};

}  // namespace vigil::remediate
