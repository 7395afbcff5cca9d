#include "vigil/server/selection.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "vigil/core/duration.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/server/fleet_history.h"

namespace vigil::server {
namespace {

// ?name= as a finite number; `fallback` when absent.
Result<double> Number(const std::map<std::string, std::string>& query, const std::string& name,
                      double fallback) {
  auto it = query.find(name);
  if (it == query.end()) return fallback;
  double v = 0;
  const std::string& text = it->second;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
    return Status::InvalidArgument(fmt::format("{}: expected a number, got {}", name, Quote(text)));
  }
  return v;
}

Result<double> Duration(const std::map<std::string, std::string>& query, const std::string& name,
                        double fallback) {
  auto it = query.find(name);
  if (it == query.end()) return fallback;
  Result<double> d = ParseDuration(it->second);
  if (!d.ok()) return d.status().WithContext(name);
  return *d;
}

bool SameOptions(const select::SelectOptions& a, const select::SelectOptions& b) {
  return a.horizon_s == b.horizon_s && a.budget_node_hours == b.budget_node_hours &&
         a.max_benchmark_s == b.max_benchmark_s && a.max_share == b.max_share &&
         a.alert_window_s == b.alert_window_s && a.cost_weight == b.cost_weight &&
         a.idle_only == b.idle_only;
}

}  // namespace

Result<select::SelectOptions> SelectionQuery(const std::map<std::string, std::string>& query) {
  for (const auto& [key, value] : query) {
    if (key != "horizon" && key != "budget" && key != "max_time" && key != "max_share" &&
        key != "cost_weight") {
      return Status::InvalidArgument(fmt::format(
          "{}: unknown parameter (horizon, budget, max_time, max_share, cost_weight)", key));
    }
  }
  select::SelectOptions o;
  VIGIL_ASSIGN_OR_RETURN(o.horizon_s, Duration(query, "horizon", o.horizon_s));
  VIGIL_ASSIGN_OR_RETURN(o.budget_node_hours, Number(query, "budget", o.budget_node_hours));
  VIGIL_ASSIGN_OR_RETURN(o.max_benchmark_s, Duration(query, "max_time", o.max_benchmark_s));
  VIGIL_ASSIGN_OR_RETURN(o.max_share, Number(query, "max_share", o.max_share));
  VIGIL_ASSIGN_OR_RETURN(o.cost_weight, Number(query, "cost_weight", o.cost_weight));
  // Validate names the CLI's flags; the query's names are these.
  if (Status s = select::Validate(o); !s.ok()) {
    return Status::InvalidArgument(
        fmt::format("{} (as query parameters: horizon, budget, "
                    "max_time, max_share, cost_weight)",
                    s.message()));
  }
  return o;
}

Result<std::string> SelectionCache::HistoryJsonl() {
  VIGIL_ASSIGN_OR_RETURN(const select::History h, history_.Build(service_.clock().WallSeconds()));
  return select::HistoryToJsonl(h);
}

namespace {

Result<std::string> ComputeSelection(const std::string& text,
                                     const select::SelectOptions& options) {
  // The plan is made from the history as `vigil select --url` reads it, parsed back: one
  // history, whichever way it is asked for. A failure here is a bug of FleetHistoryBuilder.
  Result<select::History> history = select::ParseHistory(text, "the fleet's history");
  if (!history.ok()) return Status::Internal(history.status().message());
  VIGIL_ASSIGN_OR_RETURN(const select::Selection s, select::SelectFromHistory(*history, options));
  return DumpJson(select::SelectionToJson(s, *history));
}

}  // namespace

Result<std::string> SelectionCache::Answer(const select::SelectOptions& options) {
  MutexLock lock(mu_);
  // Read before the history: a write that lands while this plans makes the next answer fresh.
  const int64_t generation = service_.generation();
  const double now = service_.clock().WallSeconds();
  if (valid_ && generation_ == generation && SameOptions(options_, options) &&
      now - at_ < kSelectionMaxAgeS) {
    if (!refusal_.ok()) return refusal_;
    return json_;
  }
  Result<std::string> text = HistoryJsonl();
  Result<std::string> answer = text.ok() ? ComputeSelection(*text, options) : text.status();
  ++computed_;
  // A refusal (no incident yet, too little history) is kept like a plan, so that a dashboard
  // refreshing a young fleet does not rebuild the history each time; a store error is not.
  valid_ = answer.ok() || answer.status().code() == StatusCode::kInvalidArgument;
  generation_ = generation;
  options_ = options;
  at_ = now;
  refusal_ = answer.ok() ? Status::Ok() : answer.status();
  json_ = answer.ok() ? *answer : std::string();
  return answer;
}

int64_t SelectionCache::computed() const {
  MutexLock lock(mu_);
  return computed_;
}

}  // namespace vigil::server
