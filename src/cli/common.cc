#include "cli/common.h"

#include <fmt/format.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "vigil/core/duration.h"
#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil::cli {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int64_t> g_interrupted_ns{0};  // CLOCK_MONOTONIC of the first interrupt
static_assert(std::atomic<int64_t>::is_always_lock_free, "used in a signal handler");

// A repeat this soon after the first interrupt is the same request delivered twice, not a second
// one: pkill reaching `vigil` and a `timeout` that forwards the signal to it, a terminal's Ctrl-C
// reaching a wrapper and `vigil` both, a service manager signalling the whole group. Taken as a
// second, it killed `vigil run` before it removed its scratch files.
constexpr int64_t kRepeatNs = 1'000'000'000;

// Sets the flag; a second interrupt, later than kRepeatNs, ends the program at once (by the
// signal's default action). Runs with SIGINT and SIGTERM blocked (InstallInterruptFlag).
void OnInterrupt(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t ns = static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
  if (!g_interrupted.exchange(true)) {
    g_interrupted_ns.store(ns);
    return;
  }
  if (ns - g_interrupted_ns.load() < kRepeatNs) return;
  signal(sig, SIG_DFL);
  raise(sig);  // delivered once the handler returns and the signal is unblocked
}

std::atomic<bool> g_hangup{false};

void OnHangup(int) { g_hangup.store(true); }

}  // namespace

ExitCode ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return ExitCode::kHealthy;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return ExitCode::kBadInput;
    default:
      return ExitCode::kCannotRun;
  }
}

void AddTlsClientFlags(CLI::App& cmd, std::string_view url_flag, telemetry::TlsClientOptions& tls) {
  cmd.add_option("--ca-file", tls.ca_file,
                 fmt::format("{} https://: PEM CA bundle that signed the server's certificate "
                             "(default: the system's)",
                             url_flag))
      ->check(CLI::ExistingFile);
  cmd.add_option("--client-cert", tls.cert_file,
                 fmt::format("{} https://: PEM client certificate, for a server that asks for one",
                             url_flag))
      ->check(CLI::ExistingFile);
  cmd.add_option("--client-key", tls.key_file, "The private key of --client-cert")
      ->check(CLI::ExistingFile);
}

std::atomic<bool>& InstallHangupFlag() {
  struct sigaction sa {};
  sa.sa_handler = OnHangup;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGHUP, &sa, nullptr);
  return g_hangup;
}

const std::atomic<bool>& InstallInterruptFlag() {
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return g_interrupted;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CLI::Validator InBounds(const Bounds& bounds) {
  return CLI::Validator(
      [bounds](std::string& input) -> std::string {
        const std::string_view text = Trim(input);
        const std::string_view digits = text.starts_with('+') ? text.substr(1) : text;
        double v = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
        if (digits.empty() || end != digits.data() + digits.size() ||
            (ec != std::errc() && ec != std::errc::result_out_of_range)) {
          return fmt::format("{} is not a number", Quote(input));
        }
        if (ec == std::errc::result_out_of_range) v = text.front() == '-' ? -HUGE_VAL : HUGE_VAL;
        return bounds.Contains(v) ? std::string() : DescribeOutside(v, bounds, text);
      },
      bounds.ToString());
}

Result<double> ParseDurationFlag(std::string_view flag, std::string_view text,
                                 const Bounds& bounds) {
  Result<double> d = ParseDuration(text);
  if (!d.ok()) return d.status().WithContext(flag);
  VIGIL_RETURN_IF_ERROR(CheckBounds(flag, *d, bounds, Trim(text)));
  return d;
}

void AddJobSizeFlags(CLI::App& cmd, JobSizeFlags& flags) {
  cmd.add_option("--gpus", flags.gpus, "GPUs in the job")->check(InBounds(kGpusBounds));
  cmd.add_option("--nodes", flags.nodes, "Nodes in the job (instead of --gpus)")
      ->check(InBounds(kNodesBounds));
  cmd.add_option("--gpus-per-node", flags.gpus_per_node, "GPUs per node")
      ->check(InBounds(kGpusPerNodeBounds))
      ->capture_default_str();
}

void AddModelRateFlag(CLI::App& cmd, double& rate) {
  cmd.add_option("--rate", rate, "Failures per 1000 node-days (Meta's RSC-1: 6.5)")
      ->check(InBounds(kFailureRateBounds))
      ->capture_default_str();
}

Result<double> JobNodes(const JobSizeFlags& flags) {
  if ((flags.gpus != 0) == (flags.nodes != 0)) {
    return Status::InvalidArgument("give the job's size with one of --gpus or --nodes");
  }
  // The flags' own checks ran at parsing; these hold for options built in code too.
  VIGIL_RETURN_IF_ERROR(CheckBounds("--gpus-per-node", flags.gpus_per_node, kGpusPerNodeBounds));
  if (flags.nodes != 0) VIGIL_RETURN_IF_ERROR(CheckBounds("--nodes", flags.nodes, kNodesBounds));
  if (flags.gpus != 0) VIGIL_RETURN_IF_ERROR(CheckBounds("--gpus", flags.gpus, kGpusBounds));
  if (flags.nodes > 0) return static_cast<double>(flags.nodes);
  return static_cast<double>(flags.gpus) / flags.gpus_per_node;
}

Result<int64_t> WholeJobNodes(const JobSizeFlags& flags) {
  VIGIL_ASSIGN_OR_RETURN(const double nodes, JobNodes(flags));
  if (nodes != std::floor(nodes)) {
    return Status::InvalidArgument("--gpus must be a multiple of --gpus-per-node");
  }
  return static_cast<int64_t>(nodes);
}

void AddTimeZoneFlag(CLI::App& cmd, std::string& zone) {
  cmd.add_option("--time-zone", zone,
                 "Time zone of the log's times without a Z (sacct prints the local time of the "
                 "host it ran on): a tz database name such as Europe/Berlin, or local")
      ->capture_default_str();
}

Result<TimeZone> TimeZoneFlag(const std::string& zone) {
  Result<TimeZone> z = TimeZone::Find(zone);
  if (!z.ok()) return z.status().WithContext("--time-zone");
  return z;
}

Result<std::pair<std::string, int>> ParseHostPort(std::string_view flag, std::string_view text) {
  const size_t colon = text.rfind(':');
  int port = -1;
  if (colon != std::string_view::npos && colon + 1 < text.size()) {
    const std::string_view digits = text.substr(colon + 1);
    const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || p != digits.data() + digits.size()) port = -1;
  }
  if (colon == std::string_view::npos || colon == 0 || port < 0 || port > 65535) {
    return Status::InvalidArgument(fmt::format("{}: {} is not HOST:PORT", flag, Quote(text)));
  }
  return std::pair{std::string(text.substr(0, colon)), port};
}

void AddPlotFlag(CLI::App& cmd, std::string& path, std::string_view what) {
  cmd.add_option("--plot", path, fmt::format("Also draw {} into this SVG file", what))
      ->type_name("FILE.svg");
}

Status CheckPlotFlag(const std::string& path) {
  if (path.empty()) return Status::Ok();
  const Status writable = CheckWritable(path);
  return writable.ok() ? writable : Status::InvalidArgument("--plot: " + writable.message());
}

Status WritePlot(const std::string& path, std::string_view svg) {
  const Status written = WriteFileAtomic(path, svg);
  return written.ok() ? written : Status(written.code(), "--plot: " + written.message());
}

}  // namespace vigil::cli
