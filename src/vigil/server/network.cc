#include "vigil/server/network.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>

#include "vigil/cluster/localise.h"
#include "vigil/cluster/rdma.h"

namespace vigil::server {
namespace {

// "net-pair/bw_gbps:" and "net-pair/lat_us:": what precedes "<from>-<to>"; "net-pair/rdma_gbps_"
// and "net-pair/rdma_lat_us_": what precedes "<device>:<from>-<to>".
const std::string kBandwidth =
    fmt::format("{}/{}:", cluster::kNetPairBenchmark, cluster::kPairBandwidthMetric);
const std::string kLatency =
    fmt::format("{}/{}:", cluster::kNetPairBenchmark, cluster::kPairLatencyMetric);
const std::string kRdma =
    fmt::format("{}/{}_", cluster::kNetPairBenchmark, cluster::kPairRdmaMetric);
const std::string kRdmaLatency =
    fmt::format("{}/{}_", cluster::kNetPairBenchmark, cluster::kPairRdmaLatencyMetric);

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
  // Each RDMA device's pairs, in natural order of device (mlx5_2 before mlx5_10).
  const auto natural = [](const std::string& a, const std::string& b) {
    return cluster::NaturalLess(a, b);
  };
  std::map<std::string, cluster::RailPairs, decltype(natural)> rails(natural);
  for (const store::Upload& u : latest) {
    const int from = index.at(u.node);
    for (const auto& [key, value] : u.row.values) {
      if (!(value >= 0)) continue;  // NaN: missing
      std::string_view rest = key;
      std::vector<cluster::PairMeasure>* into = nullptr;
      std::string_view device;  // an RDMA figure's: the sender's device names the rail
      bool rdma_latency = false;
      if (rest.starts_with(kBandwidth)) {
        rest.remove_prefix(kBandwidth.size());
        into = &pairs.bandwidth;
      } else if (rest.starts_with(kLatency)) {
        rest.remove_prefix(kLatency.size());
        into = &pairs.latency;
      } else if (rest.starts_with(kRdma) || rest.starts_with(kRdmaLatency)) {
        rdma_latency = rest.starts_with(kRdmaLatency);
        rest.remove_prefix(rdma_latency ? kRdmaLatency.size() : kRdma.size());
        const size_t colon = rest.find(':');
        if (colon == 0 || colon == std::string_view::npos) continue;
        device = rest.substr(0, colon);
        rest.remove_prefix(colon + 1);
      } else {
        continue;
      }
      const auto to = index.find(PeerOf(rest, u.node));
      if (to == index.end() || to->second == from) continue;
      // Documents do not carry the NIC's position, only its device.
      if (!device.empty()) {
        cluster::RailPairs& rail = rails[std::string(device)];
        into = rdma_latency ? &rail.latency : &rail.bandwidth;
      }
      into->push_back({from, to->second, value});
    }
  }
  size_t rdma_pairs = 0, rdma_latency_pairs = 0;
  for (auto& [device, rail] : rails) {
    rdma_pairs += rail.bandwidth.size();
    rdma_latency_pairs += rail.latency.size();
    rail.name = device;
    pairs.rdma.push_back(std::move(rail));
  }
  VIGIL_ASSIGN_OR_RETURN(const std::vector<cluster::NamedCulprit> found,
                         cluster::LocaliseNetwork(pairs));
  Json culprits = Json::array();
  for (const cluster::NamedCulprit& c : found) culprits.push_back(cluster::CulpritJson(c));
  Json rail_names = Json::array();
  for (const cluster::RailPairs& rail : pairs.rdma) rail_names.push_back(rail.name);
  return Json{{"nodes", latest.size()},
              {"rails", std::move(rail_names)},
              {"pairs",
               {{"bandwidth", pairs.bandwidth.size()},
                {"latency", pairs.latency.size()},
                {"rdma", rdma_pairs},
                {"rdma_latency", rdma_latency_pairs}}},
              {"culprits", std::move(culprits)}};
}

}  // namespace vigil::server
