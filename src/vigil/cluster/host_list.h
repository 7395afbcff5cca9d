// The hosts of `vigil fleet run --hosts FILE`: one host per line, as OpenMPI's host files have
// them, with an optional rack (the switch the host hangs from) for the topology pattern:
//
//   # comment
//   gpu-001 rack=r01
//   gpu-002 slots=8 rack=r01     (slots= and max_slots= are OpenMPI's: accepted and not used)
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::cluster {

struct FleetHost {
  std::string name;
  std::string rack;  // "" when the line has none
  int line = 0;      // where the host list names it (0: not from a file)
};

// Parses a host list's text. InvalidArgument naming "<path>:<line>" and the field for an unknown
// key, an empty value, a host named twice, or a list with no host.
Result<std::vector<FleetHost>> ParseHostList(std::string_view text, const std::string& path);

// The IPv4 address `name` resolves to (the first getaddrinfo gives). InvalidArgument naming
// `where` ("hosts.txt:3") and the host when it does not resolve.
Result<std::string> ResolveHost(const std::string& name, const std::string& where);

// This machine's host name; "localhost" when it has none.
std::string HostName();

// A node's name as its scheduler knows it: `flag` when given, else $SLURMD_NODENAME (slurmd sets it
// for its health check, prolog, epilog and jobs), else the host name. `get` reads an environment
// variable ("" when unset).
std::string NodeName(const std::string& flag, const std::function<std::string(const char*)>& get);

// The local address this machine would use to reach `address` (a UDP socket's route; no packet is
// sent): what ranks on that network can reach the coordinator at.
Result<std::string> LocalAddressToward(const std::string& address);

}  // namespace vigil::cluster
