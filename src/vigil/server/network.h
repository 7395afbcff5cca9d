// The fleet service's view of the network between nodes: the pairs that `vigil fleet run` put in
// each node's document (`net-pair/bw_gbps:<node>-<peer>`, `net-pair/lat_us:<node>-<peer>`,
// `net-pair/rdma_gbps_<device>:<node>-<peer>`, `net-pair/rdma_lat_us_<device>:<node>-<peer>`),
// localised as `vigil fleet run` does (cluster/localise.h): GET /api/v1/network.
#pragma once

#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/store/store.h"

namespace vigil::server {

// From the latest upload of every node: the pairs each node sent to another node of the fleet,
// and the culprits by bandwidth, by latency, then by each RDMA rail in natural order of device,
// its bandwidth then its latency ("rdma mlx5_0", "rdma latency mlx5_0": a document keys RDMA by
// the sender's device, not by the NIC's position, so a rail is the sends of every node's device
// of that name). {"nodes": n, "rails": [device...], "pairs": {"bandwidth": n, "latency": n,
// "rdma": n, "rdma_latency": n}, "culprits": [cluster::CulpritJson...]}.
// A pair whose peer is not a node of the fleet is left out (its sender's name ends the key's
// prefix: "<node>-"), and names no rail.
Result<Json> NetworkVerdict(const std::vector<store::Upload>& latest);

}  // namespace vigil::server
