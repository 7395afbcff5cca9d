// The fleet service's view of the network between nodes: the pairs that `vigil fleet run` put in
// each node's document (`net-pair/bw_gbps:<node>-<peer>`, `net-pair/lat_us:<node>-<peer>`),
// localised as `vigil fleet run` does (cluster/localise.h): GET /api/v1/network.
#pragma once

#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/store/store.h"

namespace vigil::server {

// From the latest upload of every node: the pairs each node sent to another node of the fleet,
// and the culprits by bandwidth and by latency. {"nodes": n, "pairs": {"bandwidth": n,
// "latency": n}, "culprits": [cluster::CulpritJson...]}. A pair whose peer is not a node of the
// fleet is left out (its sender's name ends the key's prefix: "<node>-").
Result<Json> NetworkVerdict(const std::vector<store::Upload>& latest);

}  // namespace vigil::server
