// The component of a node that a finding names: a kind and, for one of several, its index or
// the pair a link joins ("GPU 3", "link 0-3", "NVLink 0-4"), or a kind alone for the node's whole
// part or a benchmark without components ("NVLink", "gemm-flops", "disk nvme0n1").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "vigil/results/metric_key.h"

namespace vigil {

struct ComponentId {
  std::string kind;                     // "GPU", "NIC", "PCIe", "HBM", "link", "NVLink", ...
  std::optional<ComponentIndex> index;  // none: the kind names the component by itself

  bool operator==(const ComponentId&) const = default;
};

// "GPU 3", "link 0-3", "NVLink": the kind, then a space and the index when there is one. The one
// spelling of a component in every output (JSON, HTML, metrics, the store).
std::string ComponentName(const ComponentId& component);

// The inverse of ComponentName, total: text whose last word is an index in ComponentIndex's
// canonical spelling ("3", "0-3") is that kind and index; any other text is a kind alone
// ("NVLink", "disk nvme0n1", "gemm-flops:x"). ComponentName(ParseComponent(s)) == s for every s.
ComponentId ParseComponent(std::string_view text);

}  // namespace vigil
