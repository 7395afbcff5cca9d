#include "vigil/cluster/rdma.h"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil::cluster {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// "mlx5_10" after "mlx5_2": the name without its trailing digits, then the digits as a number.
bool NaturalLess(const std::string& a, const std::string& b) {
  const auto split = [](const std::string& s) {
    size_t i = s.size();
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
    const std::string digits = s.substr(i);
    return std::pair{s.substr(0, i), digits.empty() || digits.size() > 9 ? -1 : std::stoi(digits)};
  };
  const auto x = split(a), y = split(b);
  return x != y ? x < y : a < b;
}

std::string ReadTrimmed(const fs::path& path) {
  Result<std::string> text = ReadFile(path.string());
  return text.ok() ? std::string(Trim(*text)) : "";
}

bool IsNumber(std::string_view token, double& value) {
  const std::string s(token);
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

std::vector<std::string> PerftestArgs(const RdmaOptions& o, const RdmaPort& p, int tcp_port) {
  return {o.program,
          "-d",
          p.device,
          "-i",
          std::to_string(p.port),
          "-p",
          std::to_string(tcp_port),
          "-D",
          fmt::format("{:.0f}", std::max(1.0, o.seconds)),
          "-s",
          std::to_string(o.message_bytes),
          "-F",
          "--report_gbits"};
}

// Runs `each(i)` for every port at once and waits for all of them.
template <typename Each>
void ForEachPortAtOnce(size_t ports, const Each& each) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ports; ++i) threads.emplace_back([&each, i] { each(i); });
  for (std::thread& t : threads) t.join();
}

Status NoPorts(const RdmaOptions& o) {
  return Status::Unavailable(
      fmt::format("no active RDMA port under {}/class/infiniband", o.sysfs_root));
}

}  // namespace

std::vector<RdmaPort> ActiveRdmaPorts(const std::string& sysfs_root) {
  std::vector<RdmaPort> out;
  std::error_code ec;
  std::vector<std::string> devices;
  for (const auto& entry : fs::directory_iterator(sysfs_root + "/class/infiniband", ec)) {
    devices.push_back(entry.path().filename().string());
  }
  std::sort(devices.begin(), devices.end(), NaturalLess);
  for (const std::string& device : devices) {
    std::vector<int> ports;
    const fs::path dir = fs::path(sysfs_root) / "class/infiniband" / device / "ports";
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      double n = 0;
      if (IsNumber(entry.path().filename().string(), n) && n >= 1 && n < 256) {
        ports.push_back(static_cast<int>(n));
      }
    }
    std::sort(ports.begin(), ports.end());
    for (const int port : ports) {
      const fs::path p = dir / std::to_string(port);
      // "4: ACTIVE"
      if (ReadTrimmed(p / "state").find("ACTIVE") == std::string::npos) continue;
      RdmaPort r{device, port, ReadTrimmed(p / "link_layer"), 0};
      double rate = 0;
      const std::string text = ReadTrimmed(p / "rate");  // "200 Gb/sec (4X HDR)"
      if (IsNumber(text.substr(0, text.find(' ')), rate) && rate > 0) r.rate_gbps = rate;
      out.push_back(std::move(r));
    }
  }
  return out;
}

Result<double> ParseIbWriteBw(std::string_view output) {
  const std::vector<std::string_view> lines = Split(output, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t at = lines[i].find("BW average[");
    if (at == std::string_view::npos) continue;
    const std::string_view rest = lines[i].substr(at + 11);
    const std::string_view unit = rest.substr(0, rest.find(']'));
    double scale = 0;
    if (unit == "Gb/sec") scale = 1;
    if (unit == "MB/sec" || unit == "MiB/sec") scale = 1048576.0 * 8 / 1e9;
    if (scale == 0) {
      return Status::InvalidArgument(fmt::format("ib_write_bw: unknown unit \"{}\"", unit));
    }
    // The first line below the header with a row of numbers: #bytes, #iterations, BW peak,
    // BW average, ...
    for (size_t j = i + 1; j < lines.size(); ++j) {
      std::vector<double> numbers;
      for (const std::string_view token : Split(Trim(lines[j]), ' ')) {
        double v = 0;
        if (token.empty()) continue;
        if (!IsNumber(token, v)) break;
        numbers.push_back(v);
      }
      if (numbers.size() >= 4) {
        if (!(numbers[3] >= 0)) break;
        return numbers[3] * scale;
      }
    }
    return Status::InvalidArgument("ib_write_bw: a table header without a row of figures");
  }
  return Status::InvalidArgument("ib_write_bw: no \"BW average\" table in its output");
}

Status ServeRdma(const RdmaOptions& o, CommandRunner& runner) {
  const std::vector<RdmaPort> ports = ActiveRdmaPorts(o.sysfs_root);
  if (ports.empty()) return NoPorts(o);
  std::vector<Status> done(ports.size());
  ForEachPortAtOnce(ports.size(), [&](size_t i) {
    CommandSpec spec{PerftestArgs(o, ports[i], o.tcp_port_base + static_cast<int>(i)),
                     {},
                     o.timeout_s + o.seconds + 5};
    Result<CommandOutput> ran = runner.Run(spec);
    if (!ran.ok()) {
      done[i] = Status(ran.status().code(),
                       fmt::format("{}: {}", ports[i].device, ran.status().message()));
    } else if (ran->exit_code != 0) {
      done[i] = Status::IoError(fmt::format("{}: {} exited with {}: {}", ports[i].device, o.program,
                                            ran->exit_code, LastOutput(*ran)));
    }
  });
  for (const Status& s : done) VIGIL_RETURN_IF_ERROR(s);
  return Status::Ok();
}

Result<std::vector<RdmaFigure>> SendRdma(const std::string& address, const RdmaOptions& o,
                                         CommandRunner& runner) {
  const std::vector<RdmaPort> ports = ActiveRdmaPorts(o.sysfs_root);
  if (ports.empty()) return NoPorts(o);
  std::vector<Result<double>> done(ports.size(), Status::Internal("not run"));
  ForEachPortAtOnce(ports.size(), [&](size_t i) {
    CommandSpec spec{PerftestArgs(o, ports[i], o.tcp_port_base + static_cast<int>(i)),
                     {},
                     o.timeout_s + o.seconds + 5};
    spec.argv.push_back(address);
    const auto until = SteadyClock::now() + std::chrono::duration<double>(o.timeout_s);
    for (;;) {
      Result<CommandOutput> ran = runner.Run(spec);
      if (!ran.ok()) {
        done[i] = ran.status();
        return;
      }
      if (ran->exit_code == 0) {
        done[i] = ParseIbWriteBw(ran->out);
        return;
      }
      const bool early = (ran->err + ran->out).find("Couldn't connect") != std::string::npos;
      if (!early || SteadyClock::now() >= until) {
        done[i] = Status::IoError(
            fmt::format("{} exited with {}: {}", o.program, ran->exit_code, LastOutput(*ran)));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::vector<RdmaFigure> figures;
  for (size_t i = 0; i < ports.size(); ++i) {
    RdmaFigure& f = figures.emplace_back();
    f.device = ports[i].device;
    if (done[i].ok()) {
      f.gbps = *done[i];
    } else {
      f.error = done[i].status().message();
    }
  }
  return figures;
}

}  // namespace vigil::cluster
