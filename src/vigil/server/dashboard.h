// The dashboard of `vigil serve`: HTML pages drawn by the server, with inline CSS and SVG plots,
// that fetch nothing from anywhere (they work on a cluster without internet access) and run no
// script: the fleet page reloads itself with a meta refresh and searches with a plain GET form.
// Every value that came from outside (node names, metrics, alerts, units) is escaped.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/server/fleet_state.h"
#include "vigil/server/service.h"
#include "vigil/store/store.h"

namespace vigil::server {

struct FleetPage {
  FleetQuery query;                        // what was asked: filter, search, page
  FleetRanking ranking;                    // the page's nodes, worst first, and the fleet's gauges
  std::vector<store::StoredAlert> alerts;  // the newest detector alerts, newest first
  int64_t criteria_version = 0;            // 0: none learned yet
  double now = 0;
  int refresh = 30;  // seconds between reloads of the page; 0: none
  // Remediation's state and its newest records; none when remediation is off.
  std::optional<remediate::RemediationStatus> remediation;
  std::vector<remediate::AuditRecord> actions;
  // The Selector's plan at its default options (GET /api/v1/selection's JSON), or null with
  // `selection_note` saying why there is none.
  Json selection;
  std::string selection_note;
};

// The detector alerts (machine, rule, component, evidence), then the nodes of the page worst first
// (WorseFirst) with how much of its healthy band each one's nearest value uses, a search form,
// links to the other pages, the validations the Selector plans (node, benchmarks, why, expected
// benefit), and remediation's state.
std::string RenderFleetPage(const FleetPage& page);

struct NodePage {
  store::NodeState node;
  std::vector<store::Upload> history;  // newest first
  const ActiveCriteria* criteria = nullptr;
  // The unit of each metric as the node's latest results document states it; metrics missing
  // here get the unit their name states (UnitOfMetric).
  std::map<std::string, std::string, std::less<>> units;
  double now = 0;
  std::vector<remediate::AuditRecord> actions;  // remediation's records of the node, newest first
};

// A node's findings (metric, value, expected range, deviation, severity), its plots per component
// over time against the band learned for its class, its verdict history and remediation's records.
std::string RenderNodePage(const NodePage& page);

// The unit a metric's name states by SuperBench's naming ("gemm-flops/fp16_flops" GFLOPS,
// "mem-bw/h2d_bw" GB/s, "kernel-launch/event_time" ms, ...); "" when it states none.
std::string UnitOfMetric(std::string_view key);

// A figure as people read it: four significant digits, thousands grouped, no exponent between
// 1e-6 and 1e15 ("33,858", "235", "23.68", "0.0057"); "-" for NaN.
std::string Readable(double value);

// The address of the fleet page `query` asks for, on page `page` (0 for the first); parameters at
// their defaults left out.
std::string FleetUrl(const FleetQuery& query, size_t page);

}  // namespace vigil::server
