// A backend in memory for tests: nodes drained by Vigil or by a person, calls counted, failures
// and hangs on demand. Thread-safe.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "vigil/core/mutex.h"
#include "vigil/remediate/backend.h"

namespace vigil::remediate {

class FakeBackend : public Backend {
 public:
  explicit FakeBackend(size_t nodes = 0, bool knows_drains = true)
      : nodes_(nodes), knows_drains_(knows_drains) {}

  std::string_view name() const override { return "fake"; }

  Attempt Drain(std::string_view node, std::string_view reason) override EXCLUDES(mu_) {
    return Act("drain", node, reason);
  }
  Attempt Resume(std::string_view node) override EXCLUDES(mu_) { return Act("resume", node, ""); }

  Result<std::optional<BackendView>> View() override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (!knows_drains_) return std::optional<BackendView>();
    BackendView v;
    v.nodes = nodes_;
    for (const auto& [node, reason] : drained_) {
      if (reason.rfind("vigil:", 0) == 0) v.vigils_drains.insert(node);
    }
    return std::optional<BackendView>(v);
  }

  // A person drains `node` with `reason` (or Vigil's node-local health check, with "vigil:").
  void DrainByHand(const std::string& node, const std::string& reason) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    drained_[node] = reason;
  }
  // The next `n` calls fail with the output "scontrol: connection refused".
  void FailNext(int n) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    fail_ = n;
  }
  // Calls wait until Release (a scheduler that hangs).
  void Hang() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    hang_ = true;
  }
  void Release() EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      hang_ = false;
    }
    cv_.NotifyAll();
  }
  std::vector<std::string> calls() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return calls_;
  }
  std::map<std::string, std::string> drained() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return drained_;
  }

 private:
  Attempt Act(std::string_view action, std::string_view node, std::string_view reason)
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    calls_.push_back(fmt::format("{} {}", action, node));  // a call, even one that hangs
    while (hang_) cv_.Wait(mu_);
    Attempt a;
    a.command = fmt::format("fake {} {}", action, node);
    if (fail_ > 0) {
      --fail_;
      a.output = "scontrol: connection refused";
      a.status = Status::IoError(fmt::format("{}: exit 1: {}", a.command, a.output));
      return a;
    }
    const auto it = drained_.find(std::string(node));
    if (action == "drain") {
      if (it != drained_.end()) {
        a.outcome = BackendOutcome::kAlready;
      } else {
        drained_[std::string(node)] = std::string(reason);
      }
      return a;
    }
    if (it == drained_.end()) {
      a.outcome = BackendOutcome::kAlready;
    } else if (it->second.rfind("vigil:", 0) != 0) {
      a.outcome = BackendOutcome::kNotVigils;
    } else {
      drained_.erase(it);
    }
    return a;
  }

  mutable Mutex mu_;
  CondVar cv_;
  const size_t nodes_;
  const bool knows_drains_;
  std::map<std::string, std::string> drained_ GUARDED_BY(mu_);
  std::vector<std::string> calls_ GUARDED_BY(mu_);
  int fail_ GUARDED_BY(mu_) = 0;
  bool hang_ GUARDED_BY(mu_) = false;
};

}  // namespace vigil::remediate
