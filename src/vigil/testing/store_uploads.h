// Test support: an upload as the fleet service stores it, for the store's tests. Header-only: for
// tests that link vigil_store.
#pragma once

#include <string>

#include "vigil/results/component.h"
#include "vigil/results/summary.h"
#include "vigil/results/verdict.h"
#include "vigil/store/store.h"

namespace vigil::testing {

// An upload of `node` judged `verdict` ("defective": GPU 3 and NIC 5 failing), received at
// `received` (also its row's one value), with a results document.
inline store::Upload MakeUpload(const std::string& node, const std::string& verdict,
                                double received) {
  store::Upload u;
  u.node = node;
  u.hardware = "8x H100";
  u.received = received;
  u.start_time = "2026-11-22T10:00:00Z";
  u.verdict = *ParseVerdict(verdict);
  u.criteria_version = 1;
  if (verdict == "defective") u.failing = {ParseComponent("GPU 3"), ParseComponent("NIC 5")};
  u.findings = "[]";
  u.row = FleetRow{node, {{"cpu-stream/triad_gbps", received}}, u.hardware};
  u.document = R"({"schema": "vigil.results/1"})";
  return u;
}

}  // namespace vigil::testing
