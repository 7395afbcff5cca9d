// What the subcommands share: exit codes, error reporting, tables, and Ctrl-C.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/core/bounds.h"
#include "vigil/core/figure.h"  // FormatFigure, which every table uses
#include "vigil/core/status.h"
#include "vigil/core/text_table.h"  // Table, which the subcommands print
#include "vigil/core/time_zone.h"
#include "vigil/telemetry/http_client.h"

namespace vigil::cli {

// The exit codes of ARCHITECTURE.md, which schedulers (Slurm health checks, Kubernetes probes)
// rely on.
enum class ExitCode {
  kHealthy = 0,    // ran and everything is healthy
  kDefect = 1,     // ran and found a defect (a failed benchmark, an alert)
  kBadInput = 2,   // bad usage or bad input; the message is on stderr
  kCannotRun = 3,  // internal or environment error, or interrupted
};

// Bad input (InvalidArgument, NotFound) is 2; anything else that stopped the command is 3.
ExitCode ExitCodeFor(const Status& status);

// A subcommand's outcome: an exit code when it ran, or the Status that stopped it.
using CommandResult = Result<ExitCode>;

// Installs SIGINT and SIGTERM handlers that set the returned flag (the first signal asks for a
// clean stop; a second one kills the process at once, the usual Ctrl-C Ctrl-C).
const std::atomic<bool>& InstallInterruptFlag();

// Installs a SIGHUP handler that sets the returned flag (log files are to be opened again, after
// rotation); the caller clears it.
std::atomic<bool>& InstallHangupFlag();

// Ranges of the flags that several subcommands share (docs/formats.md, "Ranges"). A real cluster
// needs far less; the limits keep absurd values (a typo, 1e12) from running for hours, overflowing
// or allocating without limit.
inline constexpr Bounds kGpusBounds{.lo = 1, .hi = 1048576};         // GPUs in a job
inline constexpr Bounds kNodesBounds{.lo = 1, .hi = 1048576};        // nodes in a job or fleet
inline constexpr Bounds kGpusPerNodeBounds{.lo = 1, .hi = 256};      // GPUs in one node
inline constexpr Bounds kFailureRateBounds{.lo = 0.001, .hi = 1e5};  // per 1000 node-days
inline constexpr Bounds kShareBounds{.lo = 0, .hi = 1};              // a share of the nodes
// Time to notice, restart or wait for a node after a failure.
inline constexpr Bounds kOutageBounds{.lo = 0, .hi = 30 * 86400.0, .seconds = true};
// Compute time between checkpoints, and the time one checkpoint write takes.
inline constexpr Bounds kIntervalBounds{.lo = 1, .hi = 365 * 86400.0, .seconds = true};
inline constexpr Bounds kWriteBounds{.lo = 0, .hi = 7 * 86400.0, .seconds = true};

// A CLI11 check that each value of an option is a number within `bounds`; CLI11 turns a value
// outside into "--gpus: 1e12 is outside [1, 1048576]" and exit 2, before anything runs. The
// number is read as a double, so that 1e12 given to an integer flag is named as out of range
// rather than as not a number.
CLI::Validator InBounds(const Bounds& bounds);

// ParseDuration with the flag's name in the error ("--restart: bad duration ..."), and the
// duration within `bounds` ("--days: 1e9d is outside [1s, 3650d]").
Result<double> ParseDurationFlag(std::string_view flag, std::string_view text,
                                 const Bounds& bounds);

// The size of one job, from --gpus or --nodes (one of them) and --gpus-per-node.
struct JobSizeFlags {
  int64_t gpus = 0;       // GPUs in the job (kGpusBounds)
  int64_t nodes = 0;      // or nodes in the job (kNodesBounds)
  int gpus_per_node = 8;  // to convert between the two (kGpusPerNodeBounds)
};

// Adds --gpus, --nodes and --gpus-per-node to `cmd`, with their ranges.
void AddJobSizeFlags(CLI::App& cmd, JobSizeFlags& flags);

// Adds `vigil model`'s --rate (failures per 1000 node-days, kFailureRateBounds) to `cmd`.
void AddModelRateFlag(CLI::App& cmd, double& rate);

// The job's node count (GPUs / GPUs per node when --gpus was given); InvalidArgument when
// neither or both were given, or a count is outside its range.
Result<double> JobNodes(const JobSizeFlags& flags);

// JobNodes as a whole number: InvalidArgument "--gpus must be a multiple of --gpus-per-node" when
// the GPUs do not fill whole nodes.
Result<int64_t> WholeJobNodes(const JobSizeFlags& flags);

// Seconds since `start` on the steady clock, for "... in 1.23 s" lines.
double SecondsSince(std::chrono::steady_clock::time_point start);

// "HOST:PORT" (port 0 to 65535) from a flag such as --listen; InvalidArgument naming the flag.
// --ca-file, --client-cert and --client-key: how a command trusts an https:// server it sends to
// (`url_flag` names that server's flag in the help).
void AddTlsClientFlags(CLI::App& cmd, std::string_view url_flag, telemetry::TlsClientOptions& tls);

// --time-zone: the zone a Slurm log's local times are in (sacct prints the time of the host it
// ran on); "local" (the default) is this machine's.
void AddTimeZoneFlag(CLI::App& cmd, std::string& zone);
// The zone --time-zone names; InvalidArgument naming the flag.
Result<TimeZone> TimeZoneFlag(const std::string& zone);

Result<std::pair<std::string, int>> ParseHostPort(std::string_view flag, std::string_view text);

// --plot FILE.svg (model mttf, simulate job, fleet stats): adds the flag, described by `what`.
void AddPlotFlag(CLI::App& cmd, std::string& path, std::string_view what);
// Checks, before the work, that the plot's file can be written, so that a long run does not end
// in that error: InvalidArgument "--plot: ..." if not; Ok for "" (no plot asked).
Status CheckPlotFlag(const std::string& path);
// Writes the plot whole or not at all (WriteFileAtomic); the error names --plot.
Status WritePlot(const std::string& path, std::string_view svg);

}  // namespace vigil::cli
