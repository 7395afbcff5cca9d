#include "vigil/server/fleet_state.h"

#include <utility>

namespace vigil::server {

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
    nodes_.insert_or_assign(n.node, n);
  }
}

void FleetState::Uploaded(const store::Upload& u) {
  MutexLock lock(mu_);
  auto [it, added] = nodes_.try_emplace(u.node);
  store::NodeState& n = it->second;
  if (!added) {
    if (n.last_upload > u.id) {  // a later upload reported first: this one only counts
      ++n.uploads;
      return;
    }
    Count(n, -1);
  }
  n.Follow(u);
  Count(n, +1);
}

void FleetState::Rejudged(std::string_view node, const store::VerdictUpdate& v) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.last_upload != v.upload) return;
  Count(it->second, -1);
  it->second.verdict = v.verdict;
  it->second.failing = v.failing;
  Count(it->second, +1);
}

void FleetState::Retired(std::string_view node, double when) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.retired > 0) return;
  Count(it->second, -1);
  it->second.retired = when;
}

void FleetState::Renamed(std::string_view from, std::string_view to) {
  MutexLock lock(mu_);
  auto it = nodes_.find(from);
  if (it == nodes_.end()) return;
  auto moved = nodes_.extract(it);
  moved.key() = std::string(to);
  moved.mapped().node = std::string(to);
  nodes_.insert(std::move(moved));
}

FleetSnapshot FleetState::Snapshot(const store::NodeFilter& filter) const {
  FleetSnapshot out;
  MutexLock lock(mu_);
  out.gauges = gauges_;
  for (const auto& [name, n] : nodes_) {
    if ((n.retired > 0) != filter.retired) continue;
    if (filter.verdict && n.verdict != *filter.verdict) continue;
    if (!filter.hardware.empty() && n.hardware != filter.hardware) continue;
    out.nodes.push_back(n);
  }
  return out;
}

size_t FleetState::InFleet() const {
  MutexLock lock(mu_);
  int64_t n = 0;
  for (const int64_t count : gauges_.by_verdict) n += count;
  return static_cast<size_t>(n);
}

}  // namespace vigil::server
