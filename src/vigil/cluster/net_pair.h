// The network test between two nodes of `vigil fleet run`: one end listens (PairListener), the
// other sends to it for a while (bandwidth) or bounces small messages off it (latency), over TCP.
// Every wait has a deadline, so a peer that dies or a link that stops cannot hang either end.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "vigil/core/mutex.h"
#include "vigil/core/status.h"

namespace vigil::cluster {

// The listening end: answers every connection in a thread of its own, until destroyed. A
// connection's first byte says what it wants: 'B' (count what arrives until the sender closes,
// then answer the count) or 'L' (echo 8-byte messages until the sender closes).
class PairListener {
 public:
  // Listens on `bind_address` (an IPv4 address; "0.0.0.0" for every interface) on a free port.
  // IoError when the socket cannot be made; InvalidArgument for an address that is not IPv4.
  static Result<std::unique_ptr<PairListener>> Start(const std::string& bind_address,
                                                     double io_timeout_s = 60);
  ~PairListener();
  PairListener(const PairListener&) = delete;
  PairListener& operator=(const PairListener&) = delete;

  int port() const { return port_; }

 private:
  PairListener(int fd, int stop_fd, int port, double io_timeout_s);
  void AcceptLoop();

  int fd_;
  int stop_fd_;  // an eventfd that wakes the accept loop to stop
  int port_;
  double io_timeout_s_;
  Mutex mu_;
  std::vector<std::thread> connections_ GUARDED_BY(mu_);
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;  // last: starts once the members above exist
};

// A TCP port on `bind_address` that was free a moment ago (the kernel's choice, then closed): for
// a program that takes its port by number, as NCCL's bootstrap does. Another process may take it
// in between; the caller's error then names the port. Errors as PairListener::Start's.
Result<int> FreeTcpPort(const std::string& bind_address);

// This machine's IPv4 subnets, one per address of an interface that is up: "10.0.0.5/24".
std::vector<std::string> LocalSubnets();

// Whether IPv4 `address` lies in `subnet` ("10.0.0.0/24", the host bits may be set). False for
// anything that does not parse.
bool InSubnet(const std::string& address, const std::string& subnet);

struct BandwidthOptions {
  double seconds = 1.0;     // how long to send
  size_t buffer = 1 << 20;  // bytes per write
  double timeout_s = 30;    // connecting, any write, and waiting for the count
};

// Sends to the listener at address:port for options.seconds and returns the rate at which the
// listener received it, in Gbit/s (bytes counted by the receiver over the time from the first byte
// to the receiver's answer). DeadlineExceeded or IoError naming the peer when it cannot be done.
Result<double> MeasureBandwidthGbps(const std::string& address, int port,
                                    const BandwidthOptions& options);

struct LatencyOptions {
  int round_trips = 1000;  // after 10 that warm up and are not counted
  double timeout_s = 10;   // connecting, and each round trip
};

// Half the 5th percentile of the round trips of 8-byte messages to the listener at address:port, in
// microseconds: the path's own delay, without what a busy host adds (net_pair.cc says why).
Result<double> MeasureLatencyUs(const std::string& address, int port,
                                const LatencyOptions& options);

}  // namespace vigil::cluster
