#include "vigil/reliability/sacct.h"

#include <fmt/format.h>

#include <array>
#include <charconv>

#include "vigil/core/bounds.h"
#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"
#include "vigil/reliability/hostlist.h"

namespace vigil::reliability {
namespace {

constexpr std::array<std::string_view, kJobStateCount> kStateNames = {
    "COMPLETED",     "FAILED",    "CANCELLED", "TIMEOUT",  "NODE_FAIL",
    "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "RUNNING",
    "PENDING",       "REQUEUED",  "RESIZING",  "REVOKED",  "SUSPENDED"};

enum Field { kJobId, kState, kNNodes, kAllocTres, kStart, kEnd, kNodeList, kExitCode, kFieldCount };
constexpr std::array<std::string_view, kFieldCount> kFieldNames = {
    "JobID", "State", "NNodes", "AllocTRES", "Start", "End", "NodeList", "ExitCode"};
constexpr std::array<bool, kFieldCount> kRequired = {true, true, false, false,
                                                     true, true, true,  false};
constexpr int kAbsent = -1;

// Splits `line` at '|' into `out`; returns the number of fields.
size_t SplitFields(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  size_t pos = 0;
  while (true) {
    const size_t bar = line.find('|', pos);
    if (bar == std::string_view::npos) {
      out.push_back(line.substr(pos));
      return out.size();
    }
    out.push_back(line.substr(pos, bar - pos));
    pos = bar + 1;
  }
}

template <typename Int>
bool ParseInt(std::string_view s, Int& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

// Ranges of a log's numbers (docs/formats.md, "Ranges").
constexpr Bounds kJobNodesBounds{.lo = 0, .hi = 1048576};
constexpr Bounds kJobGpusBounds{.lo = 0, .hi = 1048576};
constexpr Bounds kExitBounds{.lo = 0, .hi = 255};  // Slurm's exit codes and signals
// Node references of all jobs together (NodeList expanded): 4 GiB of them at most, and the
// uint32_t offsets of SacctJob cannot wrap.
constexpr size_t kMaxNodeRefs = size_t{1} << 30;

// The GPU count of an AllocTRES such as "billing=8,cpu=96,gres/gpu=8,mem=1T,node=1". An untyped
// gres/gpu wins; otherwise typed ones (gres/gpu:a100=8) are summed.
std::optional<int32_t> GpusOf(std::string_view tres) {
  int64_t untyped = -1;
  int64_t typed = 0;
  size_t pos = 0;
  while (pos < tres.size()) {
    size_t comma = tres.find(',', pos);
    if (comma == std::string_view::npos) comma = tres.size();
    const std::string_view item = tres.substr(pos, comma - pos);
    pos = comma + 1;
    if (!item.starts_with("gres/gpu")) continue;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = item.substr(0, eq);
    int64_t n = 0;
    if (!ParseInt(item.substr(eq + 1), n) || !kJobGpusBounds.Contains(static_cast<double>(n))) {
      return std::nullopt;
    }
    if (key == "gres/gpu") {
      untyped = n;
    } else if (key.starts_with("gres/gpu:")) {
      typed += n;
      if (!kJobGpusBounds.Contains(static_cast<double>(typed))) return std::nullopt;
    }
  }
  return static_cast<int32_t>(untyped >= 0 ? untyped : typed);
}

// A Start or End time in `zone`; "Unknown", "None" and empty are kNoTime. False if unreadable.
bool ParseTime(std::string_view s, const TimeZone& zone, int64_t& out) {
  if (s == "Unknown" || s == "None" || s.empty()) {
    out = kNoTime;
    return true;
  }
  const std::optional<int64_t> t = ParseZonedIsoSeconds(s, zone);
  if (!t || !kUnixTimeBounds.Contains(static_cast<double>(*t))) return false;
  out = *t;
  return true;
}

class Parser {
 public:
  Parser(std::string_view source, const SacctOptions& options)
      : source_(source), options_(options) {}

  Result<SacctLog> Parse(std::string_view text) {
    LineReader lines(text);
    std::string_view line;
    bool have_header = false;
    while (lines.Next(line)) {
      const int64_t line_no = lines.line_no();
      if (Trim(line).empty()) continue;
      if (!have_header) {
        VIGIL_RETURN_IF_ERROR(ParseHeader(line, line_no));
        have_header = true;
        continue;
      }
      Status s = ParseLine(line, line_no);
      if (!s.ok()) {
        if (!options_.lenient) return s;
        if (log_.skipped_lines++ == 0) log_.first_skip = s.message();
      }
    }
    if (!have_header) {
      return Status::InvalidArgument(
          fmt::format("{}: empty: expected a header line from sacct --parsable2", source_));
    }
    return std::move(log_);
  }

 private:
  Status Error(int64_t line, int field, std::string_view what) const {
    return Status::InvalidArgument(
        fmt::format("{}:{}: field {}: {}", source_, line, kFieldNames[field], what));
  }

  Status ParseHeader(std::string_view line, int64_t line_no) {
    column_of_.fill(kAbsent);
    header_size_ = SplitFields(line, fields_);
    if (header_size_ > 1 && fields_.back().empty()) --header_size_;  // --parsable
    for (size_t c = 0; c < header_size_; ++c) {
      for (int f = 0; f < kFieldCount; ++f) {
        if (Trim(fields_[c]) == kFieldNames[f]) column_of_[f] = static_cast<int>(c);
      }
    }
    for (int f = 0; f < kFieldCount; ++f) {
      if (kRequired[f] && column_of_[f] == kAbsent) {
        return Status::InvalidArgument(
            fmt::format("{}:{}: the header has no field {} (run sacct --parsable2 with "
                        "--format=JobID,State,NNodes,AllocTRES,Start,End,NodeList,ExitCode)",
                        source_, line_no, kFieldNames[f]));
      }
    }
    return Status::Ok();
  }

  std::string_view Get(int field) const {
    return column_of_[field] == kAbsent ? std::string_view() : fields_[column_of_[field]];
  }

  Status ParseLine(std::string_view line, int64_t line_no) {
    size_t n = SplitFields(line, fields_);
    if (n == header_size_ + 1 && fields_.back().empty()) --n;
    if (n != header_size_) {
      return Status::InvalidArgument(fmt::format("{}:{}: {} fields where the header has {}",
                                                 source_, line_no, n, header_size_));
    }
    const std::string_view id = Get(kJobId);
    if (id.empty()) return Error(line_no, kJobId, "empty");
    if (id.find('.') != std::string_view::npos) {  // a step: 123.batch, 123.extern, 123.0
      ++log_.step_lines;
      return Status::Ok();
    }
    SacctJob job;
    job.id = std::string(id);
    const std::optional<JobState> state = ParseJobState(Get(kState));
    if (!state) {
      return Error(line_no, kState, fmt::format("unknown job state {}", Quote(Get(kState))));
    }
    job.state = *state;
    if (!ParseTime(Get(kStart), options_.time_zone, job.start)) {
      return Error(line_no, kStart,
                   fmt::format("bad time {} (ISO 8601, years 1970 to 2200)", Quote(Get(kStart))));
    }
    if (!ParseTime(Get(kEnd), options_.time_zone, job.end)) {
      return Error(line_no, kEnd,
                   fmt::format("bad time {} (ISO 8601, years 1970 to 2200)", Quote(Get(kEnd))));
    }
    if (job.start != kNoTime && job.end != kNoTime && job.end < job.start) {
      return Error(line_no, kEnd, "ends before it starts");
    }
    if (column_of_[kAllocTres] != kAbsent) {
      const std::optional<int32_t> gpus = GpusOf(Get(kAllocTres));
      if (!gpus) {
        return Error(line_no, kAllocTres,
                     fmt::format("bad gres/gpu in {} (counts within {})", Quote(Get(kAllocTres)),
                                 kJobGpusBounds.ToString()));
      }
      job.gpus = *gpus;
    }
    if (column_of_[kExitCode] != kAbsent && !Get(kExitCode).empty()) {
      const std::string_view e = Get(kExitCode);
      const size_t colon = e.find(':');
      if (colon == std::string_view::npos || !ParseInt(e.substr(0, colon), job.exit_code) ||
          !ParseInt(e.substr(colon + 1), job.exit_signal)) {
        return Error(line_no, kExitCode, fmt::format("expected code:signal, got {}", Quote(e)));
      }
      if (!kExitBounds.Contains(job.exit_code) || !kExitBounds.Contains(job.exit_signal)) {
        return Error(
            line_no, kExitCode,
            fmt::format("{}: code and signal must be within {}", Quote(e), kExitBounds.ToString()));
      }
    }
    VIGIL_RETURN_IF_ERROR(ParseNodes(job, line_no));
    log_.jobs.push_back(std::move(job));
    return Status::Ok();
  }

  Status ParseNodes(SacctJob& job, int64_t line_no) {
    const size_t refs_before = log_.node_refs.size();
    const std::string_view list = Get(kNodeList);
    if (!list.empty() && list != "None assigned" && list != "(null)") {
      Status s = ExpandHostlist(list, [&](std::string_view name) {
        auto it = log_.node_ids.find(name);
        if (it == log_.node_ids.end()) {
          it = log_.node_ids.emplace(name, static_cast<uint32_t>(log_.node_names.size())).first;
          log_.node_names.emplace_back(name);
        }
        if (log_.node_refs.size() < kMaxNodeRefs) log_.node_refs.push_back(it->second);
      });
      if (s.ok() && log_.node_refs.size() >= kMaxNodeRefs) {
        s = Status::InvalidArgument(
            fmt::format("the log's NodeLists name more than {} nodes in all", kMaxNodeRefs));
      }
      if (!s.ok()) {
        log_.node_refs.resize(refs_before);
        return Error(line_no, kNodeList, s.message());
      }
    }
    const size_t count = log_.node_refs.size() - refs_before;
    job.nodes_begin = static_cast<uint32_t>(refs_before);
    job.nodes_end = static_cast<uint32_t>(log_.node_refs.size());
    if (column_of_[kNNodes] == kAbsent) {
      job.nnodes = static_cast<int32_t>(count);
      return Status::Ok();
    }
    if (!ParseInt(Get(kNNodes), job.nnodes) || !kJobNodesBounds.Contains(job.nnodes)) {
      log_.node_refs.resize(refs_before);
      return Error(line_no, kNNodes,
                   fmt::format("bad node count {} (within {})", Quote(Get(kNNodes)),
                               kJobNodesBounds.ToString()));
    }
    if (count > 0 && static_cast<size_t>(job.nnodes) != count) {
      log_.node_refs.resize(refs_before);
      return Error(line_no, kNNodes,
                   fmt::format("{} nodes but NodeList names {}", job.nnodes, count));
    }
    return Status::Ok();
  }

  std::string_view source_;
  SacctOptions options_;
  SacctLog log_;
  std::array<int, kFieldCount> column_of_{};
  size_t header_size_ = 0;
  std::vector<std::string_view> fields_;
};

}  // namespace

std::string_view JobStateName(JobState state) { return kStateNames[static_cast<int>(state)]; }

std::optional<JobState> ParseJobState(std::string_view text) {
  const std::string_view word = text.substr(0, text.find(' '));  // "CANCELLED by 1234"
  for (int i = 0; i < kJobStateCount; ++i) {
    if (kStateNames[i] == word) return static_cast<JobState>(i);
  }
  return std::nullopt;
}

Result<SacctLog> ParseSacct(std::string_view text, std::string_view source,
                            const SacctOptions& options) {
  return Parser(source, options).Parse(text);
}

Result<SacctLog> ReadSacct(const std::string& path, const SacctOptions& options) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return ParseSacct(text, path, options);
}

}  // namespace vigil::reliability
