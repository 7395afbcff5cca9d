#include "vigil/cluster/rdma.h"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil::cluster {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

bool IsNumber(std::string_view token, double& value) {
  const std::string s(token);
  char* end = nullptr;
  value = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

std::vector<std::string> PerftestArgs(const RdmaOptions& o, const RdmaNic& nic) {
  std::vector<std::string> args = {o.program,
                                   "-d",
                                   nic.device,
                                   "-i",
                                   std::to_string(nic.port),
                                   "-p",
                                   std::to_string(nic.tcp_port)};
  if (o.test == RdmaTest::kLatency) {
    args.insert(args.end(), {"-n", std::to_string(std::max(1, o.iterations)), "-F"});
  } else {
    args.insert(args.end(), {"-D", fmt::format("{:.0f}", std::max(1.0, o.seconds)), "-s",
                             std::to_string(o.message_bytes), "-F", "--report_gbits"});
  }
  return args;
}

// The first row of figures below the table header at lines[header]: the first line whose words
// are all numbers, at least `columns` of them (perftest may print a warning between the two, such
// as "Conflicting CPU frequency values detected"). Empty when there is none.
std::vector<double> FirstRow(const std::vector<std::string_view>& lines, size_t header,
                             size_t columns) {
  for (size_t j = header + 1; j < lines.size(); ++j) {
    std::vector<double> numbers;
    bool all = true;
    for (const std::string_view token : Words(lines[j])) {
      double v = 0;
      if (!IsNumber(token, v)) {
        all = false;
        break;
      }
      numbers.push_back(v);
    }
    if (all && numbers.size() >= columns) return numbers;
  }
  return {};
}

// Runs `each(i)` for every NIC at once and waits for all of them.
template <typename Each>
void ForEachNicAtOnce(size_t nics, const Each& each) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < nics; ++i) threads.emplace_back([&each, i] { each(i); });
  for (std::thread& t : threads) t.join();
}

}  // namespace

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

std::string RdmaPortName(std::string_view device, int port) {
  return port == 1 ? std::string(device) : fmt::format("{}_p{}", device, port);
}

std::string RdmaPort::Name() const { return RdmaPortName(device, port); }

std::vector<RdmaPort> RdmaPorts(const std::string& sysfs_root) {
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
      const std::string state = ReadTrimmed((p / "state").string());
      const size_t colon = state.find(':');
      RdmaPort r{device, port,
                 std::string(Trim(colon == std::string::npos ? state : state.substr(colon + 1))),
                 ReadTrimmed((p / "link_layer").string()), 0};
      if (r.state.empty()) r.state = "unknown";
      double rate = 0;
      const std::string text = ReadTrimmed((p / "rate").string());  // "200 Gb/sec (4X HDR)"
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
    // #bytes, #iterations, BW peak, BW average, ...
    const std::vector<double> row = FirstRow(lines, i, 4);
    if (row.empty()) {
      return Status::InvalidArgument("ib_write_bw: a table header without a row of figures");
    }
    if (!std::isfinite(row[3]) || row[3] < 0) {
      return Status::InvalidArgument("ib_write_bw: the average is not a number of 0 or more");
    }
    return row[3] * scale;
  }
  return Status::InvalidArgument("ib_write_bw: no \"BW average\" table in its output");
}

Result<double> ParseIbWriteLat(std::string_view output) {
  const std::vector<std::string_view> lines = Split(output, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    // " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec] ...": the
    // figures before the percentiles are one word each, so a column is its header word's place.
    const std::vector<std::string_view> header = Words(lines[i]);
    const auto column = [&](std::string_view name) {
      return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    size_t at = column("t_typical[usec]");
    if (at == header.size()) at = column("t_avg[usec]");
    if (at == header.size()) continue;
    const std::vector<double> row = FirstRow(lines, i, at + 1);
    if (row.empty()) {
      return Status::InvalidArgument("ib_write_lat: a table header without a row of figures");
    }
    if (!std::isfinite(row[at]) || row[at] <= 0) {
      return Status::InvalidArgument(
          fmt::format("ib_write_lat: the latency {} is not a positive number", header[at]));
    }
    return row[at];
  }
  return Status::InvalidArgument("ib_write_lat: no \"t_typical[usec]\" table in its output");
}

double RdmaMeasurementSeconds(const RdmaOptions& o) {
  return o.test == RdmaTest::kLatency ? std::max(1.0, o.iterations * kRdmaRoundTripBoundS)
                                      : std::max(1.0, o.seconds);
}

double RdmaLimitSeconds(const RdmaOptions& o) {
  return o.timeout_s + RdmaMeasurementSeconds(o) + 5;
}

Status ServeRdma(const std::vector<RdmaNic>& nics, const RdmaOptions& o, CommandRunner& runner) {
  std::vector<Status> done(nics.size());
  ForEachNicAtOnce(nics.size(), [&](size_t i) {
    CommandSpec spec{PerftestArgs(o, nics[i]), {}, RdmaLimitSeconds(o)};
    spec.cancel = o.cancel;
    Result<CommandOutput> ran = runner.Run(spec);
    if (!ran.ok()) {
      done[i] = Status(ran.status().code(),
                       fmt::format("{}: {}", nics[i].device, ran.status().message()));
    } else if (ran->exit_code != 0) {
      done[i] = Status::IoError(fmt::format("{}: {} exited with {}: {}", nics[i].device, o.program,
                                            ran->exit_code, LastOutput(*ran)));
    }
  });
  for (const Status& s : done) VIGIL_RETURN_IF_ERROR(s);
  return Status::Ok();
}

std::vector<RdmaFigure> SendRdma(const std::string& address, const std::vector<RdmaNic>& nics,
                                 const RdmaOptions& o, CommandRunner& runner) {
  std::vector<RdmaFigure> figures(nics.size());
  const auto until = SteadyClock::now() + std::chrono::duration<double>(o.timeout_s);
  ForEachNicAtOnce(nics.size(), [&](size_t i) {
    RdmaFigure& f = figures[i];
    f.index = nics[i].index;
    f.device = RdmaPortName(nics[i].device, nics[i].port);
    CommandSpec spec{PerftestArgs(o, nics[i]), {}, 0};
    spec.argv.push_back(address);
    spec.cancel = o.cancel;
    for (;;) {
      // Each try within what is left of the time to connect, plus the measurement.
      const double left = std::chrono::duration<double>(until - SteadyClock::now()).count();
      spec.timeout_s = std::max(left, 0.0) + RdmaMeasurementSeconds(o) + 5;
      Result<CommandOutput> ran = runner.Run(spec);
      if (!ran.ok()) {
        f.error = ran.status().message();
        return;
      }
      if (ran->exit_code == 0) {
        const bool latency = o.test == RdmaTest::kLatency;
        Result<double> figure = latency ? ParseIbWriteLat(ran->out) : ParseIbWriteBw(ran->out);
        if (!figure.ok()) {
          f.error = figure.status().message();
        } else {
          (latency ? f.us : f.gbps) = *figure;
        }
        return;
      }
      const bool early = (ran->err + ran->out).find("Couldn't connect") != std::string::npos;
      if (!early || SteadyClock::now() >= until) {
        f.error = fmt::format("{} exited with {}: {}", o.program, ran->exit_code, LastOutput(*ran));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  return figures;
}

}  // namespace vigil::cluster
