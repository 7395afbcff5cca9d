// The dashboard of `vigil serve`: HTML pages drawn by the server, with inline CSS and SVG plots,
// that fetch nothing from anywhere (they work on a cluster without internet access).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/server/service.h"
#include "vigil/store/store.h"

namespace vigil::server {

struct FleetPage {
  std::vector<store::NodeState> nodes;     // already filtered
  std::vector<store::StoredAlert> alerts;  // the newest detector alerts
  std::optional<Verdict> verdict;          // the filter shown: none for any
  std::string hardware;                    // "" for any
  int64_t criteria_version = 0;            // 0: none learned yet
  double now = 0;
  // Remediation's state and its newest records; none when remediation is off.
  std::optional<remediate::RemediationStatus> remediation;
  std::vector<remediate::AuditRecord> actions;
};

// Nodes by verdict and hardware class, when each was last validated, its failing components.
std::string RenderFleetPage(const FleetPage& page);

// A node's verdict history and plots of its key metrics over time (the components named in its
// latest findings first), each against the healthy range learned for its hardware class.
// `history` is newest first; so are `actions`, remediation's records of the node (none shown
// when empty).
std::string RenderNodePage(const store::NodeState& node, const std::vector<store::Upload>& history,
                           const ActiveCriteria* criteria, double now,
                           const std::vector<remediate::AuditRecord>& actions = {});

}  // namespace vigil::server
