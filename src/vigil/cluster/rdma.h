// RDMA bandwidth and latency per NIC between two nodes of `vigil fleet run` (docs/multinode.md),
// with perftest's ib_write_bw and ib_write_lat (Debian's perftest): NIC i of the sender with NIC i
// of the receiver (the rails of a GPU cluster's fabric), every NIC at once, the receiver running
// one perftest server per NIC and the sender one client. Each rank lists its ports when it
// registers; the coordinator plans which NICs of a pair run (both ends ACTIVE) and names the
// others.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/cluster/command.h"
#include "vigil/core/status.h"

namespace vigil::cluster {

struct RdmaPort {
  std::string device;      // "mlx5_0"
  int port = 1;            // the device's port number
  std::string state;       // "ACTIVE", "DOWN", ... (sysfs's state without its number)
  std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
  double rate_gbps = 0;    // what the port trained at ("200 Gb/sec (4X HDR)"), 0 when unread

  bool active() const { return state == "ACTIVE"; }
  std::string Name() const;  // RdmaPortName's
};

// "mlx5_0", or "mlx5_0_p2" for a port other than the first (a metric's name holds it).
std::string RdmaPortName(std::string_view device, int port);

// Device names in natural order: "mlx5_2" before "mlx5_10" (the name without its trailing digits,
// then the digits as a number).
bool NaturalLess(const std::string& a, const std::string& b);

// Every RDMA port under sysfs_root/class/infiniband, whatever its state, ordered by device name
// (natural order: mlx5_2 before mlx5_10), then port: NIC i of a node is the i-th. None when the
// directory is missing.
std::vector<RdmaPort> RdmaPorts(const std::string& sysfs_root);

// The average bandwidth ib_write_bw reports, in Gbit/s: its table's "BW average[Gb/sec]" with
// --report_gbits, or "[MB/sec]" (perftest's MB are MiB) without. InvalidArgument saying what is
// missing when the output has no such table.
Result<double> ParseIbWriteBw(std::string_view output);

// The one-way latency ib_write_lat reports, in microseconds: its table's "t_typical[usec]" (the
// median; perftest halves each round trip of a write), or "t_avg[usec]" where the table has no
// typical (a run timed by -D). InvalidArgument saying what is missing when the output has no such
// table or its figure is not a positive number.
Result<double> ParseIbWriteLat(std::string_view output);

// One NIC's part of a pair's test, as the coordinator plans it: NIC `index` of each end, the
// device and port this end runs on, and the TCP port of perftest's handshake.
struct RdmaNic {
  int index = 0;
  std::string device;
  int port = 1;
  int tcp_port = 18515;
};

// The most round trips a latency measurement may ask for: at kRdmaRoundTripBoundS each, 20 s.
inline constexpr int kRdmaMaxIterations = 1000000;

// What a perftest run measures: bandwidth (ib_write_bw, -D seconds of 1 MiB writes) or latency
// (ib_write_lat, `iterations` ping-pongs of its default 2-byte writes).
enum class RdmaTest { kBandwidth, kLatency };

struct RdmaOptions {
  RdmaTest test = RdmaTest::kBandwidth;
  std::string program = "ib_write_bw";  // ib_write_lat for kLatency
  double seconds = 2;                   // each bandwidth measurement (-D)
  size_t message_bytes = size_t{1} << 20;
  int iterations = 10000;  // each latency measurement (-n), at most kRdmaMaxIterations
  // How long a client may take to reach its server; a server lives this long plus the
  // measurement and 5 s.
  double timeout_s = 30;
  const std::atomic<bool>* cancel = nullptr;  // stops every ib_write_bw when set
};

// The longest one latency round trip is allowed when bounding a measurement's time: 20 us, four
// times a slow RDMA write's round trip.
inline constexpr double kRdmaRoundTripBoundS = 20e-6;
// The longest `o`'s measurement takes once the two ends have met: its -D seconds, or its
// iterations at kRdmaRoundTripBoundS each; 1 s at least.
double RdmaMeasurementSeconds(const RdmaOptions& o);
// The longest a ServeRdma or SendRdma with `o` takes.
double RdmaLimitSeconds(const RdmaOptions& o);

// The receiving end: a server for every NIC of `nics` at once; returns once every server has
// ended (its client came and went, or its time ran out). The first server's error, naming its
// device.
Status ServeRdma(const std::vector<RdmaNic>& nics, const RdmaOptions& options,
                 CommandRunner& runner);

// The sending end: a client for every NIC of `nics` at once to `address`, each retried while its
// server is not listening yet (the two ends start at about the same time), until
// options.timeout_s. One figure per NIC, in order: its gbps or its us, as options.test says.
struct RdmaFigure {
  int index = 0;
  std::string device;  // this end's (RdmaPort::Name)
  double gbps = -1;    // bandwidth; -1 when not measured or it failed
  std::string error;   // why, when it failed
  double us = -1;      // one-way latency; -1 when not measured or it failed
};
std::vector<RdmaFigure> SendRdma(const std::string& address, const std::vector<RdmaNic>& nics,
                                 const RdmaOptions& options, CommandRunner& runner);

}  // namespace vigil::cluster
