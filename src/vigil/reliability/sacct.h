// Slurm accounting records, as printed by `sacct --parsable2` (fields separated by '|', a header
// line naming them). The fields Vigil reads are documented in docs/formats.md.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/core/text.h"
#include "vigil/core/time_zone.h"

namespace vigil::reliability {

// Slurm's job states (`man sacct`, JOB STATE CODES).
enum class JobState : uint8_t {
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kOutOfMemory,
  kPreempted,
  kBootFail,
  kDeadline,
  kRunning,
  kPending,
  kRequeued,
  kResizing,
  kRevoked,
  kSuspended,
};
inline constexpr int kJobStateCount = 15;

// "COMPLETED", "NODE_FAIL", ...
std::string_view JobStateName(JobState state);

// Reads a state as sacct prints it; "CANCELLED by 1234" is kCancelled. Nullopt if unknown.
std::optional<JobState> ParseJobState(std::string_view text);

// A time that sacct printed as "Unknown" or "None" (a job that has not started or ended).
inline constexpr int64_t kNoTime = std::numeric_limits<int64_t>::min();

// One job allocation (job steps such as "123.batch" are folded into their job and not kept).
struct SacctJob {
  std::string id;  // JobID, e.g. "4242" or "4242_7" (array task)
  JobState state = JobState::kCompleted;
  int32_t nnodes = 0;       // NNodes, or the node count of NodeList without that field
  int32_t gpus = 0;         // gres/gpu in AllocTRES; 0 when absent
  int64_t start = kNoTime;  // Unix seconds (the log read in SacctOptions::time_zone)
  int64_t end = kNoTime;
  uint32_t nodes_begin = 0;  // the job's nodes: SacctLog::node_refs[begin, end)
  uint32_t nodes_end = 0;
  int32_t exit_code = 0;  // ExitCode "code:signal"
  int32_t exit_signal = 0;

  // Started and ended, with end >= start: the job counts towards exposure and outcomes.
  bool Finished() const { return start != kNoTime && end != kNoTime && end >= start; }
  double ElapsedSeconds() const { return Finished() ? static_cast<double>(end - start) : 0; }
};

using NodeIds = std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>>;

struct SacctLog {
  std::vector<std::string> node_names;  // node index -> name
  NodeIds node_ids;                     // name -> node index
  std::vector<uint32_t> node_refs;      // every job's node indices, back to back
  std::vector<SacctJob> jobs;           // in file order
  int64_t step_lines = 0;     // lines of job steps, skipped: their allocation is its own line
  int64_t skipped_lines = 0;  // broken lines skipped under SacctOptions::lenient
  std::string first_skip;     // why the first of those was skipped, for the warning

  std::span<const uint32_t> NodesOf(const SacctJob& job) const {
    return std::span<const uint32_t>(node_refs).subspan(job.nodes_begin,
                                                        job.nodes_end - job.nodes_begin);
  }
};

struct SacctOptions {
  bool lenient = false;  // skip and count broken lines instead of failing on the first
  // The zone sacct printed its times in: the zone of the host it ran on (its TZ), which the log
  // does not say. A time with a trailing Z is UTC whatever this says.
  TimeZone time_zone{};
};

// Parses the text of `sacct --parsable2` (or --parsable, with its trailing '|'). Required fields:
// JobID, State, Start, End, NodeList; optional: NNodes, AllocTRES, ExitCode; other fields are
// ignored. `source` names the input in errors, which are InvalidArgument
// "<source>:<line>: field <name>: <what is wrong>".
Result<SacctLog> ParseSacct(std::string_view text, std::string_view source,
                            const SacctOptions& options);

// ReadFile + ParseSacct.
Result<SacctLog> ReadSacct(const std::string& path, const SacctOptions& options);

}  // namespace vigil::reliability
