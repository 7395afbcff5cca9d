#include "vigil/server/network.h"

#include <map>
#include <string>
#include <string_view>

#include "vigil/cluster/localise.h"

namespace vigil::server {
namespace {

constexpr std::string_view kBandwidth = "net-pair/bw_gbps:";
constexpr std::string_view kLatency = "net-pair/lat_us:";

// The peer of `node` in a pair key's suffix "<node>-<peer>"; "" when the suffix is not that.
std::string_view PeerOf(std::string_view suffix, std::string_view node) {
  if (suffix.size() <= node.size() + 1 || suffix.substr(0, node.size()) != node ||
      suffix[node.size()] != '-') {
    return {};
  }
  return suffix.substr(node.size() + 1);
}

}  // namespace

Result<Json> NetworkVerdict(const std::vector<store::Upload>& latest) {
  std::map<std::string, int, std::less<>> index;
  cluster::PairSet bandwidth, latency;
  for (const store::Upload& u : latest) {
    index.emplace(u.node, static_cast<int>(bandwidth.nodes.size()));
    bandwidth.nodes.push_back(u.node);
  }
  latency.nodes = bandwidth.nodes;
  latency.higher_is_better = false;
  for (const store::Upload& u : latest) {
    const int from = index.at(u.node);
    for (const auto& [key, value] : u.row.values) {
      const bool bw = key.starts_with(kBandwidth);
      if (!(bw || key.starts_with(kLatency)) || !(value >= 0)) continue;  // NaN: missing
      const std::string_view suffix =
          std::string_view(key).substr(bw ? kBandwidth.size() : kLatency.size());
      const auto to = index.find(PeerOf(suffix, u.node));
      if (to == index.end() || to->second == from) continue;
      (bw ? bandwidth : latency).pairs.push_back({from, to->second, value});
    }
  }
  Json culprits = Json::array();
  for (const auto* set : {&bandwidth, &latency}) {
    VIGIL_ASSIGN_OR_RETURN(const std::vector<cluster::Culprit> found, cluster::Localise(*set, {}));
    for (const cluster::Culprit& c : found) {
      culprits.push_back(cluster::CulpritJson(c, set == &bandwidth ? "bandwidth" : "latency"));
    }
  }
  return Json{{"nodes", latest.size()},
              {"pairs", {{"bandwidth", bandwidth.pairs.size()}, {"latency", latency.pairs.size()}}},
              {"culprits", std::move(culprits)}};
}

}  // namespace vigil::server
