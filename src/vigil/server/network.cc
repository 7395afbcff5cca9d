#include "vigil/server/network.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>

#include "vigil/cluster/localise.h"

namespace vigil::server {
namespace {

// "net-pair/bw_gbps:" and "net-pair/lat_us:": what precedes "<from>-<to>".
const std::string kBandwidth =
    fmt::format("{}/{}:", cluster::kNetPairBenchmark, cluster::kPairBandwidthMetric);
const std::string kLatency =
    fmt::format("{}/{}:", cluster::kNetPairBenchmark, cluster::kPairLatencyMetric);

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
  cluster::NetworkPairs pairs;
  for (const store::Upload& u : latest) {
    index.emplace(u.node, static_cast<int>(pairs.nodes.size()));
    pairs.nodes.push_back(u.node);
  }
  for (const store::Upload& u : latest) {
    const int from = index.at(u.node);
    for (const auto& [key, value] : u.row.values) {
      const bool bw = key.starts_with(kBandwidth);
      if (!(bw || key.starts_with(kLatency)) || !(value >= 0)) continue;  // NaN: missing
      const std::string_view suffix =
          std::string_view(key).substr(bw ? kBandwidth.size() : kLatency.size());
      const auto to = index.find(PeerOf(suffix, u.node));
      if (to == index.end() || to->second == from) continue;
      (bw ? pairs.bandwidth : pairs.latency).push_back({from, to->second, value});
    }
  }
  VIGIL_ASSIGN_OR_RETURN(const std::vector<cluster::NamedCulprit> found,
                         cluster::LocaliseNetwork(pairs));
  Json culprits = Json::array();
  for (const cluster::NamedCulprit& c : found) culprits.push_back(cluster::CulpritJson(c));
  return Json{{"nodes", latest.size()},
              {"pairs", {{"bandwidth", pairs.bandwidth.size()}, {"latency", pairs.latency.size()}}},
              {"culprits", std::move(culprits)}};
}

}  // namespace vigil::server
