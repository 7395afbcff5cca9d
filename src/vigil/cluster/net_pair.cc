#include "vigil/cluster/net_pair.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "vigil/core/stats.h"

namespace vigil::cluster {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The round trip that latency reports: a low quantile, the path's own delay. Queueing on the
// wire and waiting for a CPU only ever add to a round trip, so its lower end is what the link
// and the NICs take, while a median moves with how busy the hosts are (a 2x median is common on a
// loaded host; the 5th percentile barely moves). A link slowed for good raises every round trip.
constexpr double kLatencyQuantile = 0.05;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

std::string Peer(const std::string& address, int port) {
  return fmt::format("{}:{}", address, port);
}

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Result<sockaddr_in> Ipv4(const std::string& address, int port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1) {
    return Status::InvalidArgument(fmt::format("\"{}\" is not an IPv4 address", address));
  }
  return sa;
}

// Waits until `fd` is ready for `events` or `timeout_s` passes.
Status WaitFor(int fd, short events, double timeout_s, const std::string& peer) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int n = poll(&p, 1, static_cast<int>(timeout_s * 1000));
    if (n > 0) return Status::Ok();
    if (n == 0) {
      return Status::DeadlineExceeded(fmt::format("{}: no answer within {:g} s", peer, timeout_s));
    }
    if (errno != EINTR) return Status::IoError(fmt::format("{}: poll: {}", peer, strerror(errno)));
  }
}

Status SendAll(int fd, const char* data, size_t n, double timeout_s, const std::string& peer) {
  while (n > 0) {
    VIGIL_RETURN_IF_ERROR(WaitFor(fd, POLLOUT, timeout_s, peer));
    const ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::IoError(fmt::format("{}: send: {}", peer, strerror(errno)));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

// Reads exactly `n` bytes; IoError when the peer closes first.
Status ReceiveAll(int fd, char* data, size_t n, double timeout_s, const std::string& peer) {
  while (n > 0) {
    VIGIL_RETURN_IF_ERROR(WaitFor(fd, POLLIN, timeout_s, peer));
    const ssize_t r = recv(fd, data, n, 0);
    if (r == 0) return Status::IoError(fmt::format("{}: closed the connection", peer));
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::IoError(fmt::format("{}: recv: {}", peer, strerror(errno)));
    }
    data += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

Result<int> Connect(const std::string& address, int port, double timeout_s) {
  const std::string peer = Peer(address, port);
  VIGIL_ASSIGN_OR_RETURN(const sockaddr_in sa, Ipv4(address, port));
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("socket: {}", strerror(errno)));
  if (connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    const Status s = Status::IoError(fmt::format("{}: connect: {}", peer, strerror(errno)));
    close(fd);
    return s;
  }
  Status ready = WaitFor(fd, POLLOUT, timeout_s, peer);
  int error = 0;
  socklen_t len = sizeof error;
  if (ready.ok() && (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0)) {
    ready = Status::IoError(fmt::format("{}: connect: {}", peer, strerror(error)));
  }
  if (!ready.ok()) {
    close(fd);
    return ready;
  }
  return fd;
}

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// The listener's side of one connection: what its first byte asks for, until the sender closes.
void Serve(int fd, double timeout_s) {
  const Fd owned(fd);
  const std::string peer = "pair sender";
  char mode = 0;
  if (!ReceiveAll(fd, &mode, 1, timeout_s, peer).ok()) return;
  if (mode == 'L') {
    SetNoDelay(fd);
    char message[8];
    while (ReceiveAll(fd, message, sizeof message, timeout_s, peer).ok() &&
           SendAll(fd, message, sizeof message, timeout_s, peer).ok()) {
    }
    return;
  }
  if (mode != 'B') return;
  std::vector<char> buffer(1 << 20);
  uint64_t count = 0;
  for (;;) {
    if (!WaitFor(fd, POLLIN, timeout_s, peer).ok()) return;
    const ssize_t r = recv(fd, buffer.data(), buffer.size(), 0);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return;
    }
    count += static_cast<uint64_t>(r);
  }
  const uint64_t wire = htobe64(count);
  (void)SendAll(fd, reinterpret_cast<const char*>(&wire), sizeof wire, timeout_s, peer);
}

struct Listening {
  int fd;
  int port;
};

// A TCP socket listening on bind_address, on a port the kernel chose.
Result<Listening> ListenOnFreePort(const std::string& bind_address) {
  VIGIL_ASSIGN_OR_RETURN(const sockaddr_in sa, Ipv4(bind_address, 0));
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("socket: {}", strerror(errno)));
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  if (bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
    const Status s =
        Status::IoError(fmt::format("listening on {}: {}", bind_address, strerror(errno)));
    close(fd);
    return s;
  }
  return Listening{fd, ntohs(bound.sin_port)};
}

}  // namespace

std::vector<std::string> LocalSubnets() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || i->ifa_netmask == nullptr ||
        (i->ifa_flags & IFF_UP) == 0) {
      continue;
    }
    char text[INET_ADDRSTRLEN] = {};
    const in_addr addr = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
    const uint32_t mask =
        ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr);
    if (inet_ntop(AF_INET, &addr, text, sizeof text) == nullptr) continue;
    out.push_back(fmt::format("{}/{}", text, __builtin_popcount(mask)));
  }
  freeifaddrs(list);
  return out;
}

bool InSubnet(const std::string& address, const std::string& subnet) {
  const size_t slash = subnet.find('/');
  if (slash == std::string::npos) return false;
  in_addr a{}, net{};
  if (inet_pton(AF_INET, address.c_str(), &a) != 1 ||
      inet_pton(AF_INET, subnet.substr(0, slash).c_str(), &net) != 1) {
    return false;
  }
  const std::string bits_text = subnet.substr(slash + 1);
  char* end = nullptr;
  const long bits = std::strtol(bits_text.c_str(), &end, 10);
  if (bits_text.empty() || *end != '\0' || bits < 0 || bits > 32) return false;
  const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (ntohl(a.s_addr) & mask) == (ntohl(net.s_addr) & mask);
}

Result<int> FreeTcpPort(const std::string& bind_address) {
  VIGIL_ASSIGN_OR_RETURN(const Listening l, ListenOnFreePort(bind_address));
  close(l.fd);
  return l.port;
}

Result<std::unique_ptr<PairListener>> PairListener::Start(const std::string& bind_address,
                                                          double io_timeout_s) {
  VIGIL_ASSIGN_OR_RETURN(const Listening l, ListenOnFreePort(bind_address));
  const int stop_fd = eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    close(l.fd);
    return Status::IoError(fmt::format("eventfd: {}", strerror(errno)));
  }
  return std::unique_ptr<PairListener>(new PairListener(l.fd, stop_fd, l.port, io_timeout_s));
}

PairListener::PairListener(int fd, int stop_fd, int port, double io_timeout_s)
    : fd_(fd), stop_fd_(stop_fd), port_(port), io_timeout_s_(io_timeout_s), acceptor_([this] {
        AcceptLoop();
      }) {}

PairListener::~PairListener() {
  stopping_ = true;
  const uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof one);
  acceptor_.join();
  std::vector<std::thread> connections;
  {
    MutexLock lock(mu_);
    connections.swap(connections_);
  }
  // Each connection ends within io_timeout_s of its peer going quiet.
  for (std::thread& t : connections) t.join();
  close(fd_);
  close(stop_fd_);
}

void PairListener::AcceptLoop() {
  while (!stopping_) {
    pollfd p[2] = {{fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents != 0) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    const int conn = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (conn < 0) continue;
    MutexLock lock(mu_);
    connections_.emplace_back(Serve, conn, io_timeout_s_);
  }
}

Result<double> MeasureBandwidthGbps(const std::string& address, int port,
                                    const BandwidthOptions& options) {
  const std::string peer = Peer(address, port);
  VIGIL_ASSIGN_OR_RETURN(const int raw, Connect(address, port, options.timeout_s));
  const Fd fd(raw);
  const std::vector<char> buffer(std::max<size_t>(options.buffer, 1), 'v');
  const char mode = 'B';
  VIGIL_RETURN_IF_ERROR(SendAll(fd.get(), &mode, 1, options.timeout_s, peer));
  const auto start = SteadyClock::now();
  uint64_t sent = 0;
  while (SecondsSince(start) < options.seconds) {
    VIGIL_RETURN_IF_ERROR(SendAll(fd.get(), buffer.data(), buffer.size(), options.timeout_s, peer));
    sent += buffer.size();
  }
  shutdown(fd.get(), SHUT_WR);
  uint64_t wire = 0;
  VIGIL_RETURN_IF_ERROR(
      ReceiveAll(fd.get(), reinterpret_cast<char*>(&wire), sizeof wire, options.timeout_s, peer));
  const double elapsed = SecondsSince(start);
  const uint64_t received = be64toh(wire);
  if (received != sent) {
    return Status::IoError(
        fmt::format("{}: received {} of the {} bytes sent", peer, received, sent));
  }
  return static_cast<double>(received) * 8 / elapsed / 1e9;
}

Result<double> MeasureLatencyUs(const std::string& address, int port,
                                const LatencyOptions& options) {
  const std::string peer = Peer(address, port);
  constexpr int kWarmUp = 10;
  VIGIL_ASSIGN_OR_RETURN(const int raw, Connect(address, port, options.timeout_s));
  const Fd fd(raw);
  SetNoDelay(fd.get());
  const char mode = 'L';
  VIGIL_RETURN_IF_ERROR(SendAll(fd.get(), &mode, 1, options.timeout_s, peer));
  std::vector<double> round_trips;
  round_trips.reserve(static_cast<size_t>(std::max(options.round_trips, 1)));
  char message[8] = {};
  for (int i = 0; i < kWarmUp + std::max(options.round_trips, 1); ++i) {
    const auto start = SteadyClock::now();
    VIGIL_RETURN_IF_ERROR(SendAll(fd.get(), message, sizeof message, options.timeout_s, peer));
    VIGIL_RETURN_IF_ERROR(ReceiveAll(fd.get(), message, sizeof message, options.timeout_s, peer));
    if (i >= kWarmUp) round_trips.push_back(SecondsSince(start));
  }
  return stats::Quantile(round_trips, kLatencyQuantile) / 2 * 1e6;
}

}  // namespace vigil::cluster
