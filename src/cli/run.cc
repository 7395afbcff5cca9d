#include "cli/run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "cli/validate.h"
#include "cli/version.h"
#include "vigil/bench/cpu/topology.h"
#include "vigil/bench/cuda/device_hold.h"
#include "vigil/bench/cuda/gpu_presence.h"
#include "vigil/bench/cuda/nvml.h"
#include "vigil/bench/inventory.h"
#include "vigil/bench/registry.h"
#include "vigil/bench/runner.h"
#include "vigil/core/clock.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/learned/health.h"
#include "vigil/learned/learn.h"
#include "vigil/results/summary.h"
#include "vigil/server/client.h"

namespace vigil::cli {
namespace {

std::string DefaultScratch() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// "cpu-stream.threads=1" into options.params["cpu-stream"]["threads"] = "1".
Status ParseSets(const std::vector<std::string>& sets, RunnerOptions& options) {
  for (const std::string& s : sets) {
    const size_t dot = s.find('.');
    const size_t eq = s.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq < dot + 2 ||
        eq + 1 == s.size()) {
      return Status::InvalidArgument(
          fmt::format("--set {}: expected <benchmark>.<parameter>=<value>", Quote(s)));
    }
    options.params[s.substr(0, dot)][s.substr(dot + 1, eq - dot - 1)] = s.substr(eq + 1);
  }
  return Status::Ok();
}

Status CheckScratch(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(fmt::format("--scratch {}: no such directory", dir));
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return Status::InvalidArgument(fmt::format("--scratch {}: not writable", dir));
  }
  return Status::Ok();
}

// The metrics as a table, then why benchmarks were skipped or failed, one line per reason
// ("skipped gpu-gemm, gpu-stress, nccl: no NVIDIA driver: ..."), so that a long reason does not
// widen the table.
std::string RenderTable(const NodeResults& doc) {
  struct Reason {
    BenchStatus status;
    std::string error;
    std::vector<std::string> benchmarks;
  };
  Table t({"BENCHMARK", "STATUS", "METRIC", "VALUE", "UNIT"});
  std::vector<Reason> reasons;  // in order of first appearance
  for (const BenchmarkRecord& r : doc.benchmarks) {
    if (r.status != BenchStatus::kOk) {
      t.Add({r.name, std::string(BenchStatusName(r.status)), "-", "", ""});
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& x) {
        return x.status == r.status && x.error == r.error;
      });
      if (it == reasons.end()) it = reasons.insert(reasons.end(), Reason{r.status, r.error, {}});
      it->benchmarks.push_back(r.name);
      continue;
    }
    for (const Metric& m : r.metrics) {
      std::string metric = m.key.metric;
      if (m.key.index) metric += ":" + m.key.index->ToString();
      t.Add({r.name, "ok", metric, FormatFigure(m.value), m.unit});
    }
  }
  std::string out = t.ToString();
  if (!reasons.empty()) out += "\n";
  for (const Reason& r : reasons) {
    out += fmt::format("{} {}: {}\n", BenchStatusName(r.status), fmt::join(r.benchmarks, ", "),
                       r.error);
  }
  return out;
}

// The GPUs a list from `source` (--gpus, CUDA_VISIBLE_DEVICES) names, once each is found on this
// node; errors name the source.
Result<std::vector<int>> NodeGpus(Result<std::vector<int>> listed, const char* source) {
  if (!listed.ok()) return listed.status().WithContext(source);
  const Status present = nvml::CheckGpusExist(*listed);
  if (!present.ok()) return present.WithContext(source);
  return listed;
}

// CUDA_VISIBLE_DEVICES would renumber the GPUs in the benchmarks' processes, so that gpu-gemm's
// GPU 0 and gpu-health's GPU 0 were different GPUs (nvml.h). Its GPUs become the run's, unless
// --gpus chose, and the benchmarks see every GPU by nvidia-smi's numbering. On a node without an
// NVIDIA driver it means nothing: the GPU benchmarks are skipped anyway.
Status TakeCudaVisibleDevices(bool gpus_chosen, RunnerOptions& runner) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return Status::Ok();
  const std::string value = visible;
  unsetenv("CUDA_VISIBLE_DEVICES");
  if (gpus_chosen) {
    spdlog::info("--gpus chooses the GPUs; CUDA_VISIBLE_DEVICES={} is not used", value);
    return Status::Ok();
  }
  if (!nvml::VisibleGpus().ok()) return Status::Ok();
  VIGIL_ASSIGN_OR_RETURN(runner.gpus,
                         NodeGpus(nvml::GpusOfCudaVisibleDevices(value), "CUDA_VISIBLE_DEVICES"));
  spdlog::info("CUDA_VISIBLE_DEVICES={}: measuring GPUs {} (nvidia-smi's numbering)", value,
               fmt::join(runner.gpus, ","));
  return Status::Ok();
}

}  // namespace

CLI::App* SetupRun(CLI::App& parent, RunOptions& options) {
  CLI::App* cmd = parent.add_subcommand(
      "run", "Benchmark this node and write its results document (exit 1 if a benchmark failed)");
  cmd->add_option("--suite", options.suite, "quick (about a minute) or full")
      ->check(CLI::IsMember({"quick", "full"}))
      ->capture_default_str();
  cmd->add_option("--bench", options.benchmarks, "Only these benchmarks, comma-separated")
      ->delimiter(',');
  cmd->add_option("--gpus", options.gpus,
                  "Only these GPUs, by NVML's (nvidia-smi's) index: 0,2-3 (default: those "
                  "CUDA_VISIBLE_DEVICES lists, or every one)");
  cmd->add_option("--out", options.out, "Where to write the results document (JSON)")
      ->capture_default_str();
  cmd->add_option("--summary", options.summary,
                  "Append this node's flat line to a fleet summary JSONL file");
  cmd->add_option("--node", options.node, "The node's name in the results (default: host name)");
  cmd->add_option("--scratch", options.scratch,
                  "Directory for the disk benchmark's file (default: $TMPDIR or /tmp)");
  cmd->add_option("--set", options.set,
                  "A benchmark parameter, <benchmark>.<name>=<value> (see `vigil bench list`)");
  cmd->add_option("--criteria", options.criteria,
                  "Judge this node by criteria learned from the fleet (`vigil learn`); exit 1 "
                  "when a component is defective");
  cmd->add_option("--report", options.report,
                  "Upload the results to this fleet service (`vigil serve`, http://host:port) and "
                  "print its verdict; exit 1 when it finds the node defective");
  cmd->add_option("--token-file", options.token_file, "--report: file holding the bearer token");
  AddTlsClientFlags(*cmd, "--report", options.tls);
  cmd->add_option("--spool", options.spool,
                  "--report: keep the results here when the server cannot be reached (send "
                  "them later with `vigil report --spool`)")
      ->capture_default_str();
  cmd->add_option("--host-root", options.host_root,
                  "Read the host's /sys, /proc and /dev below this directory (a container that "
                  "mounts the host's there)");
  cmd->add_flag("--json", options.json, "Print the results document as JSON instead of a table");
  return cmd;
}

CommandResult RunRun(const RunOptions& options) {
  // Everything the user gave is checked before the first benchmark runs.
  RunnerOptions runner;
  VIGIL_ASSIGN_OR_RETURN(runner.suite, ParseSuite(options.suite));
  runner.scratch_root = options.scratch.empty() ? DefaultScratch() : options.scratch;
  VIGIL_RETURN_IF_ERROR(CheckScratch(runner.scratch_root));
  VIGIL_RETURN_IF_ERROR(ParseSets(options.set, runner));
  if (!options.gpus.empty()) {
    VIGIL_ASSIGN_OR_RETURN(runner.gpus, NodeGpus(ParseCpuList(options.gpus), "--gpus"));
  }
  VIGIL_RETURN_IF_ERROR(TakeCudaVisibleDevices(!options.gpus.empty(), runner));
  const Registry registry = BuiltinRegistry();
  VIGIL_ASSIGN_OR_RETURN(std::vector<const Benchmark*> selected,
                         registry.Select(runner.suite, options.benchmarks));
  VIGIL_RETURN_IF_ERROR(ValidateParams(selected, runner));
  {
    const Status out_ok = CheckWritable(options.out);
    if (!out_ok.ok()) return out_ok.WithContext("--out");
  }
  if (!options.summary.empty()) {
    const Status summary_ok = CheckWritable(options.summary);
    if (!summary_ok.ok()) return summary_ok.WithContext("--summary");
  }
  std::optional<learned::LearnedCriteria> criteria;
  if (!options.criteria.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(options.criteria));
    VIGIL_ASSIGN_OR_RETURN(criteria, learned::CriteriaFromJson(text, options.criteria));
  }

  VIGIL_ASSIGN_OR_RETURN(const std::unique_ptr<server::ReportClient> reporter,
                         server::ReporterOf(options.report, options.token_file, options.tls));

  const std::atomic<bool>& interrupted = InstallInterruptFlag();
  Clock& clock = SystemClock();
  NodeResults doc;
  doc.node = options.node.empty() ? HostName() : options.node;
  doc.vigil_version = std::string(VigilVersion());
  doc.suite = std::string(SuiteName(runner.suite));
  doc.start_time = FormatUtc(clock.WallSeconds());
  doc.inventory = ReadInventory(options.host_root);

  // The GPUs stay initialised between the benchmarks' processes (device_hold.h), and which of
  // them the driver reaches is looked at before and after the benchmarks (gpu_presence.h): for
  // the whole node, so not when --gpus or CUDA_VISIBLE_DEVICES chose some of its GPUs.
  const bool gpus_measured = std::any_of(
      selected.begin(), selected.end(), [](const Benchmark* b) { return b->component() == "gpu"; });
  const std::unique_ptr<GpuDeviceHold> hold =
      gpus_measured ? GpuDeviceHold::Start(options.host_root + "/dev") : nullptr;
  const bool whole_node = gpus_measured && runner.gpus.empty();
  const std::string sysfs = options.host_root + "/sys";
  const double presence_start = clock.MonotonicSeconds();
  const GpuPresenceReading before = whole_node ? ReadGpuPresence(sysfs) : GpuPresenceReading{};

  RunEvents events;
  events.on_start = [](size_t i, size_t n, const Benchmark& b) {
    spdlog::info("[{}/{}] {} ...", i + 1, n, b.name());
  };
  events.on_finish = [](size_t i, size_t n, const BenchmarkRecord& r) {
    if (r.status == BenchStatus::kOk) {
      spdlog::info("[{}/{}] {} ok ({:.1f} s)", i + 1, n, r.name, r.duration_s);
    } else {
      spdlog::warn("[{}/{}] {} {}: {}", i + 1, n, r.name, BenchStatusName(r.status), r.error);
    }
  };
  Result<std::vector<BenchmarkRecord>> records =
      RunBenchmarks(selected, runner, events, interrupted, clock);
  if (!records.ok()) {
    if (records.status().code() == StatusCode::kCancelled) {
      spdlog::error("interrupted: scratch files removed, no results written");
    }
    return records.status();
  }
  doc.benchmarks = std::move(records).value();
  if (whole_node) {
    const GpuPresenceReading after = ReadGpuPresence(sysfs);
    if (std::optional<BenchmarkRecord> presence =
            GpuPresenceRecord(before, after, clock.MonotonicSeconds() - presence_start)) {
      if (presence->status != BenchStatus::kOk) {
        spdlog::error("gpu-presence failed: {}", presence->error);
      }
      doc.benchmarks.push_back(*std::move(presence));
    }
  }
  doc.end_time = FormatUtc(clock.WallSeconds());

  VIGIL_RETURN_IF_ERROR(WriteNodeResults(options.out, doc));
  if (!options.summary.empty()) {
    VIGIL_RETURN_IF_ERROR(AppendToFile(options.summary, FormatFleetRow(FleetRowOf(doc))));
  }

  bool failed = false;
  for (const BenchmarkRecord& r : doc.benchmarks) failed |= r.status == BenchStatus::kFailed;
  // Judge what ran, as the fleet's files hold it (the node's flat row): by the fleet's criteria
  // where given, and always by the readings whose meaning needs no fleet (validate/health.h).
  const FleetTable row = TableOfRows({FleetRowOf(doc)}, "this node");
  std::vector<learned::NodeFindings> verdicts;
  if (criteria) {
    std::vector<std::string> ran;
    for (const BenchmarkRecord& r : doc.benchmarks) {
      if (r.status != BenchStatus::kSkipped) ran.push_back(r.name);
    }
    verdicts = learned::Judge(row, learned::RestrictToBenchmarks(*criteria, ran));
  } else {
    verdicts = {learned::JudgeHealth(row)};
  }
  failed |= verdicts[0].defective;
  const std::string judged_by = criteria ? options.criteria : "the rules that need no fleet";
  if (reporter) {
    VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(options.out));
    Result<Json> answer = reporter->Upload(text);
    if (answer.ok()) {
      for (const server::UploadVerdict& v : server::VerdictsOf(*answer)) {
        failed |= v.verdict == "defective";
        spdlog::info("{}: verdict {} (criteria version {})", options.report, v.verdict,
                     v.criteria_version);
      }
    } else if (answer.status().code() == StatusCode::kUnavailable) {
      VIGIL_ASSIGN_OR_RETURN(std::string kept, server::SpoolDocument(options.spool, doc.node,
                                                                     clock.WallSeconds(), text));
      spdlog::warn("{}; results kept in {}: send them with `vigil report --spool {} --report {}`",
                   answer.status().message(), kept, options.spool, options.report);
    } else {
      return answer.status();
    }
  }
  if (options.json) {
    Json out = ToJson(doc);
    Json findings = Json::array();
    for (const auto& f : verdicts[0].findings) findings.push_back(learned::FindingToJson(f));
    out["validation"] = Json{{"criteria", criteria ? Json(options.criteria) : Json(nullptr)},
                             {"verdict", verdicts[0].defective ? "defective" : "healthy"},
                             {"findings", std::move(findings)}};
    fmt::print("{}\n", DumpJson(out, 2));
  } else {
    fmt::print("{}\nResults: {}\n", RenderTable(doc), options.out);
    if (!options.summary.empty()) fmt::print("Summary line appended to {}\n", options.summary);
    if (criteria || verdicts[0].defective) {
      fmt::print("\n{}Verdict by {}: {}\n", RenderFindings(row, verdicts), judged_by,
                 verdicts[0].defective ? "defective" : "healthy");
    }
  }
  return failed ? ExitCode::kDefect : ExitCode::kHealthy;
}

}  // namespace vigil::cli
