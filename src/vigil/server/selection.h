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
#include "vigil/server/service.h"

namespace vigil::server {

// The Selector's options from the query (horizon, budget, max_time, max_share, cost_weight, as
// `vigil select`'s flags; durations as ParseDuration reads them, "1d" or seconds). InvalidArgument
// naming the parameter.
Result<select::SelectOptions> SelectionQuery(const std::map<std::string, std::string>& query);

// The fleet's history as JSON Lines (select's format), up to the service's clock.
Result<std::string> FleetHistoryJsonl(FleetService& service);

class SelectionCache {
 public:
  explicit SelectionCache(FleetService& service) : service_(service) {}

  // The plan's JSON text. InvalidArgument with the Selector's reason when the history cannot
  // carry a plan (no node has uploaded, nothing to learn the suite or the risk from); the
  // store's errors otherwise.
  // REQUIRES: select::Validate(options) is OK.
  Result<std::string> Answer(const select::SelectOptions& options) EXCLUDES(mu_);
  // How many answers were computed rather than cached.
  int64_t computed() const EXCLUDES(mu_);

 private:
  FleetService& service_;
  mutable Mutex mu_;
  bool valid_ GUARDED_BY(mu_) = false;
  int64_t generation_ GUARDED_BY(mu_) = 0;
  select::SelectOptions options_ GUARDED_BY(mu_);
  std::string json_ GUARDED_BY(mu_);
  int64_t computed_ GUARDED_BY(mu_) = 0;
};

}  // namespace vigil::server
