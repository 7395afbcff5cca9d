// RDMA bandwidth per NIC between two nodes of `vigil fleet run` (docs/multinode.md), with
// perftest's ib_write_bw (Debian's perftest): the receiver runs one ib_write_bw server per active
// RDMA port, the sender one client per port, all ports at once, NIC i to NIC i (the rails of a GPU
// cluster's fabric), each pair on TCP port tcp_port_base + i for perftest's own handshake.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vigil/cluster/command.h"
#include "vigil/core/status.h"

namespace vigil::cluster {

struct RdmaPort {
  std::string device;      // "mlx5_0"
  int port = 1;            // the device's port number
  std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
  double rate_gbps = 0;    // what the port trained at ("200 Gb/sec (4X HDR)"), 0 when unread
};

// The RDMA ports whose state is ACTIVE under sysfs_root/class/infiniband, ordered by device name
// (natural order: mlx5_2 before mlx5_10), then port. None when the directory is missing.
std::vector<RdmaPort> ActiveRdmaPorts(const std::string& sysfs_root);

// The average bandwidth ib_write_bw reports, in Gbit/s: its table's "BW average[Gb/sec]" with
// --report_gbits, or "[MB/sec]" (perftest's MB are MiB) without. InvalidArgument saying what is
// missing when the output has no such table.
Result<double> ParseIbWriteBw(std::string_view output);

struct RdmaOptions {
  std::string program = "ib_write_bw";
  int tcp_port_base = 18515;  // perftest's default port, for the first NIC
  double seconds = 2;         // each measurement (-D)
  size_t message_bytes = size_t{1} << 20;
  double timeout_s = 30;  // for a client to reach its server, and for a server to be reached
  std::string sysfs_root = "/sys";
};

// The receiving end: a server for every active port at once; returns once every server has ended
// (its client came and went, or timeout_s passed). Unavailable when this node has no active
// RDMA port; otherwise the first server's error, naming its device.
Status ServeRdma(const RdmaOptions& options, CommandRunner& runner);

// The sending end: a client for every active port at once to `address`, each retried while its
// server is not listening yet (the two ends start at about the same time). One figure per port,
// in ActiveRdmaPorts' order: NIC i of this node measured with NIC i of the receiver. Unavailable
// when this node has no active RDMA port.
struct RdmaFigure {
  std::string device;  // this node's
  double gbps = -1;    // -1 when it failed
  std::string error;   // why, when it failed
};
Result<std::vector<RdmaFigure>> SendRdma(const std::string& address, const RdmaOptions& options,
                                         CommandRunner& runner);

}  // namespace vigil::cluster
