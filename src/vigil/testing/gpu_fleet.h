// Test support: a fleet of 8-GPU nodes whose every value a test chooses, as a table. Header-only.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "vigil/results/summary.h"

namespace vigil::testing {

// `nodes` nodes (n0000, n0001, ...), each reporting, for each of its 8 GPUs g, the keys `keys(g)`
// and then `node_keys` once; each value is `value(node, key)`, asked in that order.
inline FleetTable GpuFleet(int nodes, const std::function<std::vector<std::string>(int)>& keys,
                           const std::function<double(int, const std::string&)>& value,
                           const std::vector<std::string>& node_keys = {}) {
  std::vector<FleetRow> rows;
  for (int n = 0; n < nodes; ++n) {
    FleetRow& r = rows.emplace_back();
    r.node = fmt::format("n{:04}", n);
    for (int g = 0; g < 8; ++g) {
      for (const std::string& key : keys(g)) r.values.emplace_back(key, value(n, key));
    }
    for (const std::string& key : node_keys) r.values.emplace_back(key, value(n, key));
  }
  return TableOfRows(rows, "fleet.jsonl");
}

}  // namespace vigil::testing
