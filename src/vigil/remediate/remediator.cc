#include "vigil/remediate/remediator.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "vigil/cluster/slurm.h"
#include "vigil/core/duration.h"
#include "vigil/core/fault_line.h"
#include "vigil/core/text.h"

namespace vigil::remediate {
namespace {

// How often the worker asks the backend which nodes Vigil holds drained, when nothing else made
// it ask; and the longest it sleeps at once (so that a test's FakeClock is seen moving).
constexpr double kSyncIntervalS = 60;
constexpr double kMaxSleepS = 1;
// Audit records read back per page at start.
constexpr size_t kRestorePage = 10000;

// A reason Slurm takes: one line, with Vigil's prefix, not too long.
std::string CleanReason(std::string_view reason) {
  std::string out(Trim(reason));
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  if (out.rfind(kFaultLinePrefix, 0) != 0) {
    out = fmt::format("{} {}", kFaultLinePrefix, out);
  }
  if (out.size() > kMaxReason) out.resize(kMaxReason);
  return out;
}

}  // namespace

std::string DrainReason(std::string_view component, std::string_view finding) {
  return CleanReason(fmt::format("{} {} {}", kFaultLinePrefix, component, finding));
}

std::optional<Event> UploadEvent(const Policy& policy, const UploadFacts& upload) {
  if (upload.verdict == Verdict::kDefective) {
    const size_t window = std::min(upload.recent.size(), static_cast<size_t>(policy.lemon_uploads));
    const auto defective = std::count(upload.recent.begin(),
                                      upload.recent.begin() + static_cast<std::ptrdiff_t>(window),
                                      Verdict::kDefective);
    if (policy.ActionFor(Trigger::kLemon) && defective >= policy.lemon_defective) {
      return Event{Trigger::kLemon, upload.node,
                   CleanReason(fmt::format("{} (lemon: {} of the last {} uploads defective)",
                                           upload.reason, defective, window))};
    }
    if (policy.ActionFor(Trigger::kDefective)) {
      return Event{Trigger::kDefective, upload.node, upload.reason};
    }
    return std::nullopt;
  }
  if (upload.verdict == Verdict::kHealthy && upload.validation &&
      policy.ActionFor(Trigger::kPassingValidation)) {
    return Event{Trigger::kPassingValidation, upload.node, ""};
  }
  return std::nullopt;
}

Remediator::Remediator(Policy policy, std::unique_ptr<Backend> backend, AuditLog& log, Clock& clock,
                       std::function<size_t()> fleet_nodes)
    : policy_(std::move(policy)),
      backend_(std::move(backend)),
      log_(log),
      clock_(clock),
      fleet_nodes_(std::move(fleet_nodes)) {}

Remediator::~Remediator() { Stop(); }

Status Remediator::Restore() {
  std::vector<AuditRecord> all;
  AuditFilter page{"", kRestorePage, 0};
  while (true) {
    VIGIL_ASSIGN_OR_RETURN(std::vector<AuditRecord> got, log_.Records(page));
    if (got.empty()) break;
    page.before = got.back().id;
    const bool last = got.size() < kRestorePage;
    all.insert(all.end(), std::make_move_iterator(got.begin()), std::make_move_iterator(got.end()));
    if (last) break;
  }
  const bool enforce = policy_.mode == Mode::kEnforce;
  {
    MutexLock lock(mu_);
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      const AuditRecord& r = *it;
      if (r.action == Action::kBreaker) {
        if (r.outcome == Outcome::kOpened) breaker_open_ = true;
        if (r.outcome == Outcome::kReset) breaker_open_ = false;
        continue;
      }
      const bool done = enforce ? r.outcome == Outcome::kActed : r.outcome == Outcome::kDryRun;
      if (r.action == Action::kDrain && done) drained_.insert(r.node);
      if (r.action == Action::kResume && (done || (enforce && (r.outcome == Outcome::kNotVigils ||
                                                               r.outcome == Outcome::kAlready)))) {
        drained_.erase(r.node);
      }
    }
  }
  if (enforce && backend_) Sync();
  return Status::Ok();
}

void Remediator::Start() {
  if (policy_.mode != Mode::kEnforce || !backend_ || worker_.joinable()) return;
  {
    MutexLock lock(mu_);
    stop_ = false;
  }
  worker_ = std::thread([this] { Work(); });
}

void Remediator::Stop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  if (worker_.joinable()) worker_.join();
}

size_t Remediator::Limit() const {
  return cluster::DrainLimit(policy_.max_drained_share, std::max(fleet_nodes_(), backend_nodes_));
}

void Remediator::Record(AuditRecord record) {
  if (Status s = log_.Append(record); !s.ok()) {
    spdlog::error("remediation: cannot write the audit log ({} {} {}): {}",
                  ActionName(record.action), record.node, OutcomeName(record.outcome), s.message());
  }
}

void Remediator::Count(Action action, Outcome outcome) {
  if (IsFinal(outcome)) ++counts_[{action, outcome}];
}

void Remediator::OpenBreaker(const Event& event, size_t held, size_t limit) {
  breaker_open_ = true;
  const std::string why = fmt::format(
      "Vigil holds {} node{} drained, the limit ({} of {} nodes at a share of {}): no more "
      "drains until a person resets it (POST /api/v1/remediation/reset)",
      held, held == 1 ? "" : "s", limit, std::max(fleet_nodes_(), backend_nodes_),
      policy_.max_drained_share);
  spdlog::error("remediation: circuit breaker open, refusing to drain {}: {}", event.node, why);
  Record(AuditRecord{0, clock_.WallSeconds(), event.node, Action::kBreaker, event.trigger,
                     Outcome::kOpened, why, 0, "", ""});
}

std::optional<Outcome> Remediator::Decide(const Event& event) {
  const std::optional<Action> action = policy_.ActionFor(event.trigger);
  if (!action || event.node.empty()) return std::nullopt;
  const bool drain = *action == Action::kDrain;
  const std::string reason = drain ? CleanReason(event.reason) : "";
  MutexLock lock(mu_);
  const bool queued_drain = std::any_of(queue_.begin(), queue_.end(), [&](const Job& j) {
    return j.node == event.node && j.action == Action::kDrain;
  });
  if (!drain && !drained_.contains(event.node) && !queued_drain) return std::nullopt;
  const double now = clock_.MonotonicSeconds();
  AuditRecord r{
      0, clock_.WallSeconds(), event.node, *action, event.trigger, Outcome::kQueued, reason, 0, "",
      ""};
  const auto decided = [&](Outcome o) {
    mu_.AssertHeld();  // called below, under the lock
    r.outcome = o;
    Count(*action, o);
    Record(r);
    return o;
  };
  const auto key = std::make_pair(event.node, *action);
  const auto last = last_.find(key);
  if ((last != last_.end() && now - last->second < policy_.dedupe_s) || (drain && queued_drain)) {
    return decided(Outcome::kDuplicate);
  }
  if (drain && drained_.contains(event.node)) return decided(Outcome::kAlready);
  if (drain) {
    if (breaker_open_) return decided(Outcome::kBreakerOpen);
    const size_t held =
        drained_.size() +
        static_cast<size_t>(std::count_if(queue_.begin(), queue_.end(),
                                          [](const Job& j) { return j.action == Action::kDrain; }));
    const size_t limit = Limit();
    if (held >= limit) {
      OpenBreaker(event, held, limit);
      return decided(Outcome::kBreakerOpen);
    }
  }
  while (!recent_.empty() && now - recent_.front() >= policy_.rate_per_s) recent_.pop_front();
  if (recent_.size() >= static_cast<size_t>(policy_.rate_actions)) {
    return decided(Outcome::kRateLimited);
  }
  recent_.push_back(now);
  last_[key] = now;
  if (policy_.mode == Mode::kDryRun || !backend_) {
    if (drain) {
      drained_.insert(event.node);
    } else {
      drained_.erase(event.node);
    }
    return decided(Outcome::kDryRun);
  }
  queue_.push_back(Job{*action, event.trigger, event.node, reason, 1, now});
  decided(Outcome::kQueued);
  cv_.NotifyAll();
  return Outcome::kQueued;
}

bool Remediator::ResetBreaker() {
  MutexLock lock(mu_);
  if (!breaker_open_) return false;
  breaker_open_ = false;
  spdlog::warn("remediation: circuit breaker reset by a person; Vigil holds {} node{} drained",
               drained_.size(), drained_.size() == 1 ? "" : "s");
  Record(AuditRecord{0, clock_.WallSeconds(), "", Action::kBreaker, Trigger::kPerson,
                     Outcome::kReset,
                     fmt::format("reset with {} node{} drained by Vigil", drained_.size(),
                                 drained_.size() == 1 ? "" : "s"),
                     0, "", ""});
  return true;
}

std::optional<Remediator::Job> Remediator::TakeDue(double now) {
  auto best = queue_.end();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->due <= now && (best == queue_.end() || it->due < best->due)) best = it;
  }
  if (best == queue_.end()) return std::nullopt;
  Job job = std::move(*best);
  queue_.erase(best);
  return job;
}

void Remediator::Run(Job job) {
  const Attempt a = job.action == Action::kDrain ? backend_->Drain(job.node, job.reason)
                                                 : backend_->Resume(job.node);
  AuditRecord r{
      0,          clock_.WallSeconds(), job.node,  job.action, job.trigger, Outcome::kActed,
      job.reason, job.attempt,          a.command, a.output};
  if (!a.status.ok()) r.output = a.status.message();
  if (r.output.size() > kMaxAuditOutput) {
    r.output.resize(kMaxAuditOutput);
    r.output += " [cut]";
  }
  bool changed = false;
  {
    MutexLock lock(mu_);
    if (!a.status.ok()) {
      if (job.attempt < policy_.retry_attempts) {
        const double wait =
            std::min(policy_.retry_initial_s * std::pow(2.0, static_cast<double>(job.attempt - 1)),
                     policy_.retry_max_s);
        r.outcome = Outcome::kRetrying;
        spdlog::warn("remediation: {} {} failed (attempt {} of {}), again in {}: {}",
                     ActionName(job.action), job.node, job.attempt, policy_.retry_attempts,
                     FormatDuration(wait), a.status.message());
        ++job.attempt;
        job.due = clock_.MonotonicSeconds() + wait;
        queue_.push_back(job);
      } else {
        r.outcome = Outcome::kFailed;
        spdlog::error("remediation: {} {} failed after {} attempts: {}", ActionName(job.action),
                      job.node, job.attempt, a.status.message());
      }
    } else {
      switch (a.outcome) {
        case BackendOutcome::kDone:
          r.outcome = Outcome::kActed;
          changed = true;
          if (job.action == Action::kDrain) {
            drained_.insert(job.node);
          } else {
            drained_.erase(job.node);
          }
          spdlog::warn("remediation: {} {}{}", job.action == Action::kDrain ? "drained" : "resumed",
                       job.node, job.reason.empty() ? "" : fmt::format(": {}", job.reason));
          break;
        case BackendOutcome::kAlready:
          r.outcome = Outcome::kAlready;
          if (job.action == Action::kResume) drained_.erase(job.node);
          break;
        case BackendOutcome::kNotVigils:
          r.outcome = Outcome::kNotVigils;
          drained_.erase(job.node);
          spdlog::warn("remediation: {} was drained by someone else: not resumed", job.node);
          break;
        case BackendOutcome::kBreakerOpen:
          r.outcome = Outcome::kBreakerOpen;
          if (!breaker_open_) {
            const size_t limit = Limit();
            OpenBreaker(Event{job.trigger, job.node, job.reason}, std::max(drained_.size(), limit),
                        limit);
          }
          break;
      }
    }
    Count(job.action, r.outcome);
    Record(r);
  }
  if (changed) Sync();
}

void Remediator::Sync() {
  if (!backend_) return;
  Result<std::optional<BackendView>> view = backend_->View();
  MutexLock lock(mu_);
  last_sync_ = clock_.MonotonicSeconds();
  if (!view.ok()) {
    spdlog::warn("remediation: cannot read the cluster's drained nodes from {}: {}",
                 backend_->name(), view.status().message());
    return;
  }
  if (!view->has_value()) return;
  drained_ = (*view)->vigils_drains;
  backend_nodes_ = (*view)->nodes;
}

void Remediator::Work() {
  while (true) {
    std::optional<Job> job;
    bool sync = false;
    {
      MutexLock lock(mu_);
      while (true) {
        if (stop_) return;
        const double now = clock_.MonotonicSeconds();
        job = TakeDue(now);
        sync = now - last_sync_ >= kSyncIntervalS;
        if (job || sync) break;
        double wait = kMaxSleepS;
        for (const Job& j : queue_) wait = std::min(wait, j.due - now);
        cv_.WaitUntil(mu_, std::chrono::steady_clock::now() +
                               std::chrono::duration<double>(std::max(wait, 0.001)));
      }
    }
    if (sync) Sync();
    if (job) Run(std::move(*job));
  }
}

size_t Remediator::RunDueForTest() {
  size_t made = 0;
  while (true) {
    std::optional<Job> job;
    {
      MutexLock lock(mu_);
      job = TakeDue(clock_.MonotonicSeconds());
    }
    if (!job) return made;
    Run(std::move(*job));
    ++made;
  }
}

RemediationStatus Remediator::Snapshot() const {
  RemediationStatus s;
  s.mode = policy_.mode;
  s.backend =
      backend_ ? std::string(backend_->name()) : std::string(BackendKindName(policy_.backend));
  MutexLock lock(mu_);
  s.breaker_open = breaker_open_;
  s.drained.assign(drained_.begin(), drained_.end());
  s.limit = Limit();
  s.queued = queue_.size();
  s.decisions = counts_;
  return s;
}

}  // namespace vigil::remediate
