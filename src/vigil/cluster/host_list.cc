#include "vigil/cluster/host_list.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <set>

#include "vigil/core/lines.h"
#include "vigil/core/text.h"

namespace vigil::cluster {
namespace {

// Applies one `key=value` word of a host line to `host`.
Status ApplyKey(std::string_view word, FleetHost& host, const std::string& where) {
  const size_t eq = word.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format(
        "{}: {}: expected key=value after the host name (rack=, slots=)", where, Quote(word)));
  }
  const std::string_view key = word.substr(0, eq);
  const std::string_view value = word.substr(eq + 1);
  if (value.empty()) {
    return Status::InvalidArgument(fmt::format("{}: {}: empty value", where, key));
  }
  if (key == "rack") {
    host.rack = std::string(value);
  } else if (key != "slots" && key != "max_slots" && key != "max-slots") {
    return Status::InvalidArgument(
        fmt::format("{}: {}: unknown key (known: rack, slots, max_slots)", where, Quote(key)));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<FleetHost>> ParseHostList(std::string_view text, const std::string& path) {
  std::vector<FleetHost> hosts;
  std::set<std::string, std::less<>> seen;
  LineReader reader(text);
  std::string_view line;
  while (reader.Next(line)) {
    const int line_number = static_cast<int>(reader.line_no());
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const std::vector<std::string_view> words = Words(line);
    if (words.empty()) continue;
    const std::string where = fmt::format("{}:{}", path, line_number);
    FleetHost host{std::string(words[0]), "", line_number};
    for (size_t i = 1; i < words.size(); ++i) {
      VIGIL_RETURN_IF_ERROR(ApplyKey(words[i], host, where));
    }
    if (!seen.insert(host.name).second) {
      return Status::InvalidArgument(
          fmt::format("{}: host: {} is listed twice", where, Quote(host.name)));
    }
    hosts.push_back(std::move(host));
  }
  if (hosts.empty()) return Status::InvalidArgument(fmt::format("{}: names no host", path));
  return hosts;
}

Result<std::string> ResolveHost(const std::string& name, const std::string& where) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return Status::InvalidArgument(
        fmt::format("{}: host: {} is not a known host ({})", where, Quote(name), gai_strerror(rc)));
  }
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr, text,
            sizeof text);
  freeaddrinfo(found);
  return std::string(text);
}

Result<std::string> LocalAddressToward(const std::string& address) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // discard; nothing is sent
  if (inet_pton(AF_INET, address.c_str(), &to.sin_addr) != 1) {
    return Status::InvalidArgument(fmt::format("\"{}\" is not an IPv4 address", address));
  }
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("socket: {}", strerror(errno)));
  sockaddr_in local{};
  socklen_t len = sizeof local;
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
  const int error = errno;
  close(fd);
  if (!ok) {
    return Status::IoError(fmt::format("no route to {}: {}", address, strerror(error)));
  }
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
  return std::string(text);
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string NodeName(const std::string& flag, const std::function<std::string(const char*)>& get) {
  if (!flag.empty()) return flag;
  if (std::string slurm = get("SLURMD_NODENAME"); !slurm.empty()) return slurm;
  return HostName();
}

}  // namespace vigil::cluster
