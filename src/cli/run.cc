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
#include "vigil/bench/cuda/nvml.h"
#include "vigil/bench/node_run.h"
#include "vigil/bench/registry.h"
#include "vigil/bench/runner.h"
#include "vigil/core/clock.h"
#include "vigil/core/env.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/learned/health.h"
#include "vigil/learned/learn.h"
#include "vigil/learned/reason.h"
#include "vigil/results/summary.h"
#include "vigil/results/verdict.h"
#include "vigil/server/client.h"

namespace vigil::cli {
namespace {

// How long the fleet service may take to answer: a health check has seconds in all.
constexpr double kServiceTimeout = 30;
constexpr double kHealthServiceTimeout = 5;
// --max-drained-share: a share of the nodes, and more than none.
constexpr Bounds kDrainedShareBounds{.lo = 0, .hi = 1, .lo_open = true};

// The node's name: --node, else Slurm's name for it (slurmd sets SLURMD_NODENAME for its health
// check, prolog, epilog and jobs), else the host name.
std::string NodeName(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (std::optional<std::string> slurm = Env::Default().GetVariable("SLURMD_NODENAME");
      slurm && !slurm->empty()) {
    return *slurm;
  }
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// What --out means: the path given, else vigil-results.json, except for the health suite, which
// writes a document only where asked (it runs every few minutes on every node).
std::string OutPath(const std::string& flag, Suite suite) {
  if (!flag.empty() || suite == Suite::kHealth) return flag;
  return "vigil-results.json";
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

// What a run needs before its first benchmark, every flag checked.
struct Prepared {
  RunnerOptions runner;
  std::string out;                         // the results document's path; "": none
  std::string node;                        // the node's name
  std::vector<const Benchmark*> selected;  // from the registry RunRun holds
  std::optional<learned::LearnedCriteria> criteria;
  std::unique_ptr<server::ReportClient> reporter;    // null without --report
  std::unique_ptr<cluster::CommandRunner> commands;  // scontrol's, with --slurm
  std::optional<cluster::Slurm> slurm;               // with --slurm
};

Result<Prepared> Prepare(const RunOptions& options, const Registry& registry) {
  Prepared p;
  RunnerOptions& runner = p.runner;
  VIGIL_ASSIGN_OR_RETURN(runner.suite, ParseSuite(options.suite));
  runner.scratch_root = options.scratch.empty() ? Env::Default().TempDirectory() : options.scratch;
  VIGIL_RETURN_IF_ERROR(CheckScratch(runner.scratch_root));
  VIGIL_RETURN_IF_ERROR(ParseSets(options.set, runner));
  if (!options.gpus.empty()) {
    VIGIL_ASSIGN_OR_RETURN(runner.gpus, NodeGpus(ParseCpuList(options.gpus), "--gpus"));
  }
  VIGIL_RETURN_IF_ERROR(TakeCudaVisibleDevices(!options.gpus.empty(), runner));
  VIGIL_ASSIGN_OR_RETURN(p.selected, registry.Select(runner.suite, options.benchmarks));
  VIGIL_RETURN_IF_ERROR(ValidateParams(p.selected, runner));
  p.out = OutPath(options.out, runner.suite);
  p.node = NodeName(options.node);
  if (!p.out.empty()) {
    const Status out_ok = CheckWritable(p.out);
    if (!out_ok.ok()) return out_ok.WithContext("--out");
  }
  if (!options.summary.empty()) {
    const Status summary_ok = CheckWritable(options.summary);
    if (!summary_ok.ok()) return summary_ok.WithContext("--summary");
  }
  if (!options.criteria.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(options.criteria));
    VIGIL_ASSIGN_OR_RETURN(p.criteria, learned::CriteriaFromJson(text, options.criteria));
  }
  // A health check must not hang on the service: it has seconds in all.
  VIGIL_ASSIGN_OR_RETURN(
      p.reporter,
      server::ReporterOf(options.report, options.token_file, options.tls,
                         runner.suite == Suite::kHealth ? kHealthServiceTimeout : kServiceTimeout));
  if (options.slurm) {
    VIGIL_RETURN_IF_ERROR(
        CheckBounds("--max-drained-share", options.max_drained_share, kDrainedShareBounds));
    p.commands = cluster::MakeProcessRunner();
    cluster::SlurmOptions slurm;
    slurm.conf = options.slurm_conf;
    p.slurm.emplace(*p.commands, slurm);
  }
  return p;
}

// Each benchmark's start and end, logged.
RunEvents LoggedEvents() {
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
  return events;
}

// Uploads the document and logs the service's verdict, which it returns; kUnjudged when the
// server could not be reached: the document then waits in --spool.
Result<Verdict> Report(const RunOptions& options, server::ReportClient& reporter,
                       const NodeResults& doc, Clock& clock) {
  const std::string text = DumpJson(ToJson(doc), 2) + "\n";  // as --out holds it
  const std::string& node = doc.node;
  Result<Json> answer = reporter.Upload(text);
  if (answer.ok()) {
    Verdict verdict = Verdict::kUnjudged;
    for (const server::UploadVerdict& v : server::VerdictsOf(*answer)) {
      if (v.verdict == VerdictName(Verdict::kDefective)) verdict = Verdict::kDefective;
      if (v.verdict == VerdictName(Verdict::kHealthy) && verdict == Verdict::kUnjudged) {
        verdict = Verdict::kHealthy;
      }
      spdlog::info("{}: verdict {} (criteria version {})", options.report, v.verdict,
                   v.criteria_version);
    }
    return verdict;
  }
  if (answer.status().code() != StatusCode::kUnavailable) return answer.status();
  VIGIL_ASSIGN_OR_RETURN(std::string kept,
                         server::SpoolDocument(options.spool, node, clock.WallSeconds(), text));
  spdlog::warn("{}; results kept in {}: send them with `vigil report --spool {} --report {}`",
               answer.status().message(), kept, options.spool, options.report);
  return Verdict::kUnjudged;
}

// The fault line of a health check that found nothing itself, from the service's latest
// verdict of the node: a defective one names its first failing component. "OK" when the service
// found it healthy, has no verdict, or cannot be reached (the check then rests on what it read).
std::string ServiceLine(server::ReportClient& reporter, const std::string& url,
                        const std::string& node) {
  const Result<server::UploadVerdict> v = reporter.NodeVerdict(node);
  if (!v.ok()) {
    if (v.status().code() != StatusCode::kNotFound) {
      spdlog::warn("{}: the node's latest verdict is not known: {}", url, v.status().message());
    }
    return "OK";
  }
  if (v->verdict != VerdictName(Verdict::kDefective)) return "OK";
  return fmt::format("{} {} defective at the fleet service's latest validation",
                     cluster::kVigilReasonPrefix, v->failing.empty() ? "node" : v->failing.front());
}

void Print(const RunOptions& options, const std::string& out_path, const NodeResults& doc,
           const FleetTable& row, const learned::NodeJudgement& judged, bool with_criteria,
           const std::string& line) {
  // Without criteria the rules alone judge: what they do not find at fault is reported healthy.
  const Verdict verdict = judged.findings.defective ? Verdict::kDefective : Verdict::kHealthy;
  if (options.json) {
    Json out = ToJson(doc);
    Json findings = Json::array();
    for (const auto& f : judged.findings.findings) findings.push_back(learned::FindingToJson(f));
    out["validation"] = Json{{"criteria", with_criteria ? Json(options.criteria) : Json(nullptr)},
                             {"verdict", VerdictName(verdict)},
                             {"findings", std::move(findings)},
                             {"line", line}};
    fmt::print("{}\n", DumpJson(out, 2));
    return;
  }
  fmt::print("{}\nResults: {}\n", RenderTable(doc),
             out_path.empty() ? std::string("not written (no --out)") : out_path);
  if (!options.summary.empty()) fmt::print("Summary line appended to {}\n", options.summary);
  if (with_criteria || judged.findings.defective) {
    const std::string judged_by = with_criteria ? options.criteria : "the rules that need no fleet";
    fmt::print("\n{}Verdict by {}: {}\n", RenderFindings(row, {judged.findings}), judged_by,
               VerdictName(verdict));
  }
}

}  // namespace

CLI::App* SetupRun(CLI::App& parent, RunOptions& options) {
  CLI::App* cmd = parent.add_subcommand(
      "run", "Benchmark this node and write its results document (exit 1 if a benchmark failed)");
  cmd->add_option("--suite", options.suite,
                  "health (seconds, for a scheduler's health check: prints one line, OK or "
                  "\"vigil: <component> <finding>\"), quick (about a minute) or full")
      ->check(CLI::IsMember({"health", "quick", "full"}))
      ->capture_default_str();
  cmd->add_option("--bench", options.benchmarks, "Only these benchmarks, comma-separated")
      ->delimiter(',');
  cmd->add_option("--gpus", options.gpus,
                  "Only these GPUs, by NVML's (nvidia-smi's) index: 0,2-3 (default: those "
                  "CUDA_VISIBLE_DEVICES lists, or every one)");
  cmd->add_option("--out", options.out,
                  "Where to write the results document (JSON; default: vigil-results.json, "
                  "none with --suite health)");
  cmd->add_option("--summary", options.summary,
                  "Append this node's flat line to a fleet summary JSONL file");
  cmd->add_option("--node", options.node,
                  "The node's name in the results and in Slurm (default: $SLURMD_NODENAME, "
                  "else the host name)");
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
  cmd->add_flag("--slurm", options.slurm,
                "Act on this node in Slurm: drain it on a fault (the reason is the fault line), "
                "resume it after a validation passes (quick or full suite, judged healthy by "
                "--criteria or --report), only when Vigil drained it (docs/slurm.md)");
  cmd->add_option("--slurm-conf", options.slurm_conf,
                  "--slurm: the slurm.conf scontrol reads (default: its own, or $SLURM_CONF)");
  cmd->add_option("--max-drained-share", options.max_drained_share,
                  "--slurm: the circuit breaker: Vigil drains no node while it holds this share "
                  "of the nodes drained (at least one node)")
      ->check(InBounds(kDrainedShareBounds))
      ->capture_default_str();
  cmd->add_flag("--json", options.json, "Print the results document as JSON instead of a table");
  return cmd;
}

CommandResult RunRun(const RunOptions& options) {
  // Everything the user gave is checked before the first benchmark runs.
  const Registry registry = BuiltinRegistry();
  VIGIL_ASSIGN_OR_RETURN(Prepared p, Prepare(options, registry));
  const bool health = p.runner.suite == Suite::kHealth;

  const std::atomic<bool>& interrupted = InstallInterruptFlag();
  Clock& clock = SystemClock();
  const NodeRunOptions node{p.node, std::string(VigilVersion()), options.host_root};
  Result<NodeResults> ran = RunNode(p.selected, p.runner, node, LoggedEvents(), interrupted, clock);
  if (!ran.ok()) {
    if (ran.status().code() == StatusCode::kCancelled) {
      spdlog::error("interrupted: scratch files removed, no results written");
    }
    return ran.status();
  }
  const NodeResults& doc = *ran;
  if (!p.out.empty()) VIGIL_RETURN_IF_ERROR(WriteNodeResults(p.out, doc));
  if (!options.summary.empty()) {
    VIGIL_RETURN_IF_ERROR(AppendToFile(options.summary, FormatFleetRow(FleetRowOf(doc))));
  }

  bool failed = false;
  for (const BenchmarkRecord& r : doc.benchmarks) failed |= r.status == BenchStatus::kFailed;
  // Judge what ran, as the fleet's files hold it (the node's flat row): by the fleet's criteria
  // where given, and always by the readings whose meaning needs no fleet (validate/health.h).
  const FleetTable row = TableOfRows({FleetRowOf(doc)}, "this node");
  std::optional<learned::LearnedCriteria> ran_criteria;
  if (p.criteria) ran_criteria = learned::RestrictToBenchmarks(*p.criteria, BenchmarksRun(doc));
  const learned::NodeJudgement judged =
      learned::JudgeNode(row, ran_criteria ? &*ran_criteria : nullptr);
  failed |= judged.findings.defective;
  std::string line = learned::HealthLine(doc, judged.findings);
  // A validation's verdict: the criteria's, or the fleet service's for the upload.
  Verdict verdict = p.criteria ? judged.verdict : Verdict::kUnjudged;
  // A health check that passes asks the service for the node's latest verdict; one that found a
  // fault sends its document, so that the service (and its remediation) knows. A passing one
  // sends nothing: its few readings must not replace the node's last validation.
  if (p.reporter && health && line == "OK") {
    line = ServiceLine(*p.reporter, options.report, doc.node);
  } else if (p.reporter) {
    VIGIL_ASSIGN_OR_RETURN(const Verdict service, Report(options, *p.reporter, doc, clock));
    if (service == Verdict::kDefective) {
      failed = true;
      if (line == "OK") {
        line = fmt::format("{} node defective at the fleet service", cluster::kVigilReasonPrefix);
      }
    }
    if (service != Verdict::kUnjudged && verdict != Verdict::kDefective) verdict = service;
  }
  failed |= line != "OK";

  if (health && !options.json) {
    fmt::print("{}\n", line);
  } else {
    Print(options, p.out, doc, row, judged, p.criteria.has_value(), line);
  }
  if (p.slurm) {
    // A validation passed: every benchmark of its suite ran, none failed, and criteria judged it.
    const bool passed =
        !health && options.benchmarks.empty() && !failed && verdict == Verdict::kHealthy;
    VIGIL_ASSIGN_OR_RETURN(
        const cluster::NodeOutcome outcome,
        cluster::ApplyNodeCheck(*p.slurm, {doc.node, line, passed}, options.max_drained_share));
    if (!outcome.text.empty()) spdlog::warn("slurm: {}", outcome.text);
    if (!health && !failed && !passed) {
      spdlog::info("slurm: a drain by Vigil stays: {}",
                   options.benchmarks.empty()
                       ? "no criteria judged this run (give --criteria or --report)"
                       : "--bench ran part of the suite");
    }
  }
  return failed ? ExitCode::kDefect : ExitCode::kHealthy;
}

}  // namespace vigil::cli
