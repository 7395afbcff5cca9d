// Test support: an upload as the fleet service stores it, for the store's tests. Header-only: for
// tests that link vigil_store.
#pragma once

#include <fmt/format.h>

#include <string>

#include "vigil/store/store.h"

namespace vigil::testing {

// An upload of `node` judged `verdict` ("defective": GPU 3 and NIC 5 failing), received at
// `received` (also its summary line's one value), with a results document.
inline store::Upload MakeUpload(const std::string& node, const std::string& verdict,
                                double received) {
  store::Upload u;
  u.node = node;
  u.hardware = "8x H100";
  u.received = received;
  u.start_time = "2026-11-22T10:00:00Z";
  u.verdict = verdict;
  u.criteria_version = 1;
  if (verdict == "defective") u.failing = {"GPU 3", "NIC 5"};
  u.findings = "[]";
  u.row = fmt::format(R"({{"node": "{}", "cpu-stream/triad_gbps": {}}})", node, received);
  u.document = R"({"schema": "vigil.results/1"})";
  return u;
}

}  // namespace vigil::testing
