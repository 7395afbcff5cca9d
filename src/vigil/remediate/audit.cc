#include "vigil/remediate/audit.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "vigil/core/text.h"

namespace vigil::remediate {
namespace {

template <class E, size_t N>
Result<E> ParseName(std::string_view text,
                    const std::array<std::pair<E, std::string_view>, N>& names,
                    std::string_view what) {
  std::string all;
  for (const auto& [e, name] : names) {
    if (name == text) return e;
    all += all.empty() ? "" : ", ";
    all += name;
  }
  return Status::InvalidArgument(
      fmt::format("{}: expected one of {}, got {}", what, all, Quote(text)));
}

template <class E, size_t N>
std::string_view NameOf(E e, const std::array<std::pair<E, std::string_view>, N>& names) {
  for (const auto& [value, name] : names) {
    if (value == e) return name;
  }
  return "unknown";
}

constexpr std::array<std::pair<Action, std::string_view>, 3> kActions = {
    {{Action::kDrain, "drain"}, {Action::kResume, "resume"}, {Action::kBreaker, "breaker"}}};

constexpr std::array<std::pair<Trigger, std::string_view>, 5> kTriggers = {
    {{Trigger::kDefective, "defective"},
     {Trigger::kCriticalAlert, "critical_alert"},
     {Trigger::kLemon, "lemon"},
     {Trigger::kPassingValidation, "passing_validation"},
     {Trigger::kPerson, "person"}}};

constexpr std::array<std::pair<Outcome, std::string_view>, 12> kOutcomes = {
    {{Outcome::kQueued, "queued"},
     {Outcome::kActed, "acted"},
     {Outcome::kDryRun, "dry-run"},
     {Outcome::kDuplicate, "duplicate"},
     {Outcome::kRateLimited, "rate-limited"},
     {Outcome::kBreakerOpen, "breaker-open"},
     {Outcome::kNotVigils, "not-vigils"},
     {Outcome::kAlready, "already"},
     {Outcome::kRetrying, "retrying"},
     {Outcome::kFailed, "failed"},
     {Outcome::kOpened, "opened"},
     {Outcome::kReset, "reset"}}};

}  // namespace

std::string_view ActionName(Action action) { return NameOf(action, kActions); }
Result<Action> ParseAction(std::string_view text) { return ParseName(text, kActions, "action"); }
std::string_view TriggerName(Trigger trigger) { return NameOf(trigger, kTriggers); }
Result<Trigger> ParseTrigger(std::string_view text) {
  return ParseName(text, kTriggers, "trigger");
}
std::string_view OutcomeName(Outcome outcome) { return NameOf(outcome, kOutcomes); }
Result<Outcome> ParseOutcome(std::string_view text) {
  return ParseName(text, kOutcomes, "outcome");
}

bool IsFinal(Outcome outcome) {
  return outcome != Outcome::kQueued && outcome != Outcome::kRetrying &&
         outcome != Outcome::kOpened && outcome != Outcome::kReset;
}

Status MemoryAuditLog::Append(AuditRecord& record) {
  MutexLock lock(mu_);
  record.id = static_cast<int64_t>(records_.size()) + 1;
  records_.push_back(record);
  return Status::Ok();
}

Result<std::vector<AuditRecord>> MemoryAuditLog::Records(const AuditFilter& filter) {
  MutexLock lock(mu_);
  std::vector<AuditRecord> out;
  for (auto it = records_.rbegin(); it != records_.rend() && out.size() < filter.limit; ++it) {
    if (filter.before > 0 && it->id >= filter.before) continue;
    if (!filter.node.empty() && it->node != filter.node) continue;
    out.push_back(*it);
  }
  return out;
}

std::vector<AuditRecord> MemoryAuditLog::All() const {
  MutexLock lock(mu_);
  return records_;
}

}  // namespace vigil::remediate
