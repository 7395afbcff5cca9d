// GET /api/v1/selection: the Selector's plan (select/selector.h) from the fleet's history as the
// store holds it (fleet_history.h), the JSON `vigil select --json` prints. Planning fits a risk
// model on the whole history, so the answer is cached: it is computed again only when the service
// wrote to the store since (FleetService::generation) or other options are asked for. The plan is
// as of when it was computed (its "at").
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "vigil/core/mutex.h"
#include "vigil/core/status.h"
#include "vigil/select/selector.h"
#include "vigil/server/fleet_history.h"
#include "vigil/server/service.h"

namespace vigil::server {

// The Selector's options from the query (horizon, budget, max_time, max_share, cost_weight, as
// `vigil select`'s flags; durations as ParseDuration reads them, "1d" or seconds). InvalidArgument
// naming the parameter.
Result<select::SelectOptions> SelectionQuery(const std::map<std::string, std::string>& query);

// How long a cached plan (or refusal) is served with no write in between: the risk grows with
// the days since each node's last validation, so a quiet fleet's plan still moves.
inline constexpr double kSelectionMaxAgeS = 3600;

class SelectionCache {
 public:
  explicit SelectionCache(FleetService& service) : service_(service), history_(service.store()) {}

  // The fleet's history as JSON Lines (select's format), up to the service's clock: GET
  // /api/v1/history. Built by the same FleetHistoryBuilder as the plans, so that each stored
  // document is parsed once whichever is asked for.
  Result<std::string> HistoryJsonl();

  // The plan's JSON text, computed again when the service wrote since, the options differ, or it
  // is kSelectionMaxAgeS old. InvalidArgument with the Selector's reason when the history cannot
  // carry a plan (no node has uploaded, nothing to learn the suite or the risk from: cached like
  // a plan); the store's errors otherwise (not cached).
  // REQUIRES: select::Validate(options) is OK.
  Result<std::string> Answer(const select::SelectOptions& options) EXCLUDES(mu_);
  // How many answers were computed rather than cached.
  int64_t computed() const EXCLUDES(mu_);
  // How many stored documents the history's builds have parsed.
  int64_t documents_parsed() const { return history_.documents_parsed(); }

 private:
  FleetService& service_;
  FleetHistoryBuilder history_;
  mutable Mutex mu_;
  bool valid_ GUARDED_BY(mu_) = false;
  int64_t generation_ GUARDED_BY(mu_) = 0;
  select::SelectOptions options_ GUARDED_BY(mu_);
  std::string json_ GUARDED_BY(mu_);
  Status refusal_ GUARDED_BY(mu_);  // the cached answer when it is a refusal
  double at_ GUARDED_BY(mu_) = 0;   // when it was computed (the service's wall clock)
  int64_t computed_ GUARDED_BY(mu_) = 0;
};

}  // namespace vigil::server
