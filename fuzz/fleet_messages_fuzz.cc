// What `vigil fleet run` reads from outside: the host list a person writes, and the registrations
// and answers ranks send the coordinator over the network. Reading them never crashes, and what is
// accepted is usable: hosts with names, ports that are ports.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "vigil/cluster/fleet_coordinator.h"
#include "vigil/cluster/host_list.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: {
      const auto hosts = vigil::cluster::ParseHostList(text, "hosts.txt");
      if (!hosts.ok()) return 0;
      if (hosts->empty()) std::abort();
      for (const auto& h : *hosts) {
        if (h.name.empty() || h.name.find_first_of(" \t\n#") != std::string::npos) std::abort();
        if (h.line < 1) std::abort();
      }
      return 0;
    }
    case 1: {
      const auto info = vigil::cluster::ParseRegistration(text, "10.0.0.1");
      if (!info.ok()) return 0;
      if (info->node.empty() || info->data_port <= 0 || info->data_port > 65535) std::abort();
      for (const auto& p : info->rdma) {
        if (p.device.empty() || p.port < 1 || p.port > 255) std::abort();
      }
      return 0;
    }
    default: {
      const auto answer = vigil::cluster::ParseRankAnswer(text);
      if (answer.ok() && !answer->outcome.ok && answer->outcome.error.empty()) std::abort();
      return 0;
    }
  }
}
