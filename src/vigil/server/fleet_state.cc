#include "vigil/server/fleet_state.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

namespace vigil::server {

namespace {

// Defective first, then unjudged (nothing known of it), then healthy.
int VerdictRank(Verdict v) {
  switch (v) {
    case Verdict::kDefective:
      return 0;
    case Verdict::kUnjudged:
      return 1;
    case Verdict::kHealthy:
      return 2;
  }
  return 1;
}

bool ContainsIgnoringCase(std::string_view text, std::string_view part) {
  return std::search(text.begin(), text.end(), part.begin(), part.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         }) != text.end();
}

bool Passes(const store::NodeState& n, const store::NodeFilter& filter) {
  if ((n.retired > 0) != filter.retired) return false;
  if (filter.verdict && n.verdict != *filter.verdict) return false;
  return filter.hardware.empty() || n.hardware == filter.hardware;
}

}  // namespace

bool WorseFirst(const RankedNode& a, const RankedNode& b) {
  const int ra = VerdictRank(a.node.verdict), rb = VerdictRank(b.node.verdict);
  if (ra != rb) return ra < rb;
  // Known before unknown; then the larger share of the band used first (NaN never compared).
  const bool ka = a.nearest.known() && !std::isnan(a.nearest.used);
  const bool kb = b.nearest.known() && !std::isnan(b.nearest.used);
  if (ka != kb) return ka;
  if (ka && a.nearest.used != b.nearest.used) return a.nearest.used > b.nearest.used;
  return a.node.node < b.node.node;
}

bool MatchesSearch(const store::NodeState& n, std::string_view search) {
  if (search.empty() || ContainsIgnoringCase(n.node, search) ||
      ContainsIgnoringCase(n.hardware, search)) {
    return true;
  }
  return std::any_of(n.failing.begin(), n.failing.end(), [&](const ComponentId& c) {
    return ContainsIgnoringCase(ComponentName(c), search);
  });
}

void FleetState::Count(const store::NodeState& n, int sign) {
  if (n.retired > 0) return;
  gauges_.by_verdict[static_cast<size_t>(n.verdict)] += sign;
  for (const ComponentId& c : n.failing) {
    auto it = gauges_.by_component.try_emplace(c.kind, 0).first;
    it->second += sign;
    if (it->second == 0) gauges_.by_component.erase(it);
  }
}

void FleetState::Reset(const std::vector<store::NodeState>& nodes) {
  MutexLock lock(mu_);
  nodes_.clear();
  gauges_ = FleetGauges{};
  for (const store::NodeState& n : nodes) {
    Count(n, +1);
    nodes_.insert_or_assign(n.node, RankedNode{n, {}});
  }
}

void FleetState::Uploaded(const store::Upload& u) {
  MutexLock lock(mu_);
  auto [it, added] = nodes_.try_emplace(u.node);
  store::NodeState& n = it->second.node;
  if (!added) {
    if (n.last_upload > u.id) {  // a later upload reported first: this one only counts
      ++n.uploads;
      return;
    }
    Count(n, -1);
  }
  n.Follow(u);
  it->second.nearest = {};  // the old upload's; Nearest follows with the new one's
  Count(n, +1);
}

void FleetState::Rejudged(std::string_view node, const store::VerdictUpdate& v) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.node.last_upload != v.upload) return;
  store::NodeState& n = it->second.node;
  Count(n, -1);
  n.verdict = v.verdict;
  n.failing = v.failing;
  Count(n, +1);
}

void FleetState::Nearest(std::string_view node, int64_t upload, NearestLimit nearest) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.node.last_upload != upload) return;
  it->second.nearest = std::move(nearest);
}

void FleetState::Retired(std::string_view node, double when) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.node.retired > 0) return;
  Count(it->second.node, -1);
  it->second.node.retired = when;
}

void FleetState::Renamed(std::string_view from, std::string_view to) {
  MutexLock lock(mu_);
  auto it = nodes_.find(from);
  if (it == nodes_.end()) return;
  auto moved = nodes_.extract(it);
  moved.key() = std::string(to);
  moved.mapped().node.node = std::string(to);
  nodes_.insert(std::move(moved));
}

FleetSnapshot FleetState::Snapshot(const store::NodeFilter& filter) const {
  FleetSnapshot out;
  MutexLock lock(mu_);
  out.gauges = gauges_;
  for (const auto& [name, n] : nodes_) {
    if (Passes(n.node, filter)) out.nodes.push_back(n.node);
  }
  return out;
}

FleetRanking FleetState::Ranked(const FleetQuery& q) const {
  FleetRanking out;
  std::vector<const RankedNode*> matched;
  MutexLock lock(mu_);
  out.gauges = gauges_;
  for (const auto& [name, n] : nodes_) {
    if (Passes(n.node, q.filter) && MatchesSearch(n.node, q.search)) matched.push_back(&n);
  }
  out.matched = matched.size();
  if (matched.empty()) return out;
  const size_t per_page = std::max<size_t>(q.per_page, 1);
  out.pages = (matched.size() + per_page - 1) / per_page;
  out.page = std::min(q.page, out.pages - 1);
  const size_t begin = out.page * per_page, end = std::min(begin + per_page, matched.size());
  // Only the pages up to the one shown need to be in order.
  std::partial_sort(matched.begin(), matched.begin() + static_cast<std::ptrdiff_t>(end),
                    matched.end(),
                    [](const RankedNode* a, const RankedNode* b) { return WorseFirst(*a, *b); });
  for (size_t i = begin; i < end; ++i) out.nodes.push_back(*matched[i]);
  return out;
}

size_t FleetState::InFleet() const {
  MutexLock lock(mu_);
  int64_t n = 0;
  for (const int64_t count : gauges_.by_verdict) n += count;
  return static_cast<size_t>(n);
}

}  // namespace vigil::server
