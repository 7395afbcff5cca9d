#include "vigil/agent/node_agent.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "vigil/agent/textfile.h"
#include "vigil/bench/cpu/topology.h"
#include "vigil/bench/cuda/nvml.h"
#include "vigil/bench/node_run.h"
#include "vigil/bench/registry.h"
#include "vigil/cluster/host_list.h"
#include "vigil/core/env.h"
#include "vigil/core/fault_line.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/random.h"
#include "vigil/core/text.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/reason.h"
#include "vigil/results/verdict.h"
#include "vigil/server/client.h"

namespace vigil::agent {
namespace {

// How long the fleet service may take to answer: a health check has seconds in all.
constexpr double kServiceTimeout = 30;
constexpr double kHealthServiceTimeout = 5;

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

Result<Prepared> Prepare(const NodeAgentOptions& options, const Registry& registry) {
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
  p.node = cluster::NodeName(
      options.node, [](const char* name) { return Env::Default().GetVariable(name).value_or(""); });
  if (!p.out.empty()) {
    const Status out_ok = CheckWritable(p.out);
    if (!out_ok.ok()) return out_ok.WithContext("--out");
  }
  if (!options.summary.empty()) {
    const Status summary_ok = CheckWritable(options.summary);
    if (!summary_ok.ok()) return summary_ok.WithContext("--summary");
  }
  if (!options.textfile.empty()) VIGIL_RETURN_IF_ERROR(CheckTextfileDir(options.textfile));
  if (!options.criteria.empty()) {
    VIGIL_ASSIGN_OR_RETURN(p.criteria, learned::ReadCriteria(options.criteria));
  }
  // A health check must not hang on the service: it has seconds in all.
  VIGIL_ASSIGN_OR_RETURN(
      p.reporter,
      server::ReporterOf(options.report, options.token_file, options.tls,
                         runner.suite == Suite::kHealth ? kHealthServiceTimeout : kServiceTimeout));
  if (options.slurm) {
    VIGIL_RETURN_IF_ERROR(
        CheckBounds("--max-drained-share", options.max_drained_share, kDrainedShareBounds));
    VIGIL_RETURN_IF_ERROR(
        CheckBounds("--drain-jitter", options.drain_jitter_s, kDrainJitterBounds));
    p.commands = cluster::MakeProcessRunner();
    cluster::SlurmOptions slurm;
    slurm.conf = options.slurm_conf;
    p.slurm.emplace(*p.commands, slurm);
  }
  return p;
}

// Uploads the document and logs the service's verdict, which it returns; kUnjudged when the
// server could not be reached: the document then waits in --spool.
Result<Verdict> Report(const NodeAgentOptions& options, server::ReportClient& reporter,
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
  return fmt::format("{} {} defective at the fleet service's latest validation", kFaultLinePrefix,
                     v->failing.empty() ? "node" : v->failing.front());
}

}  // namespace

Result<NodeAgentResult> RunNodeAgent(const NodeAgentOptions& options, const RunEvents& events,
                                     const std::atomic<bool>& interrupted, Clock& clock) {
  // Everything the user gave is checked before the first benchmark runs.
  const Registry registry = BuiltinRegistry();
  VIGIL_ASSIGN_OR_RETURN(Prepared p, Prepare(options, registry));
  const bool health = p.runner.suite == Suite::kHealth;
  const NodeRunOptions node{p.node, options.vigil_version, options.host_root};
  VIGIL_ASSIGN_OR_RETURN(NodeResults doc,
                         RunNode(p.selected, p.runner, node, events, interrupted, clock));
  NodeAgentResult r;
  r.out = p.out;
  if (!r.out.empty()) VIGIL_RETURN_IF_ERROR(WriteNodeResults(r.out, doc));
  if (!options.summary.empty()) {
    VIGIL_RETURN_IF_ERROR(AppendToFile(options.summary, FormatFleetRow(FleetRowOf(doc))));
  }

  for (const BenchmarkRecord& b : doc.benchmarks) r.failed |= b.status == BenchStatus::kFailed;
  // Judge what ran, as the fleet's files hold it (the node's flat row): by the fleet's criteria
  // where given, and always by the readings whose meaning needs no fleet (learned/health.h).
  r.row = TableOfRows({FleetRowOf(doc)}, "this node");
  if (p.criteria) r.criteria = learned::RestrictToBenchmarks(*p.criteria, BenchmarksRun(doc));
  r.judged = learned::JudgeNode(r.row, r.criteria ? &*r.criteria : nullptr);
  r.with_criteria = p.criteria.has_value();
  r.failed |= r.judged.findings.defective;
  r.line = learned::HealthLine(doc, r.judged.findings);
  // A validation's verdict: the criteria's, or the fleet service's for the upload.
  Verdict verdict = p.criteria ? r.judged.verdict : Verdict::kUnjudged;
  // A health check that passes asks the service for the node's latest verdict; one that found a
  // fault sends its document, so that the service (and its remediation) knows. A passing one
  // sends nothing: its few readings must not replace the node's last validation.
  if (p.reporter && health && r.line == "OK") {
    r.line = ServiceLine(*p.reporter, options.report, doc.node);
  } else if (p.reporter) {
    VIGIL_ASSIGN_OR_RETURN(const Verdict service, Report(options, *p.reporter, doc, clock));
    if (service == Verdict::kDefective) {
      r.failed = true;
      if (r.line == "OK") {
        r.line = fmt::format("{} node defective at the fleet service", kFaultLinePrefix);
      }
    }
    if (service != Verdict::kUnjudged && verdict != Verdict::kDefective) verdict = service;
  }
  r.failed |= r.line != "OK";

  if (p.slurm) {
    // A validation passed: every benchmark of its suite ran, none failed, and criteria judged it.
    const bool passed =
        !health && options.benchmarks.empty() && !r.failed && verdict == Verdict::kHealthy;
    // Each node draws its own delay: the health checks of all nodes start at the same moment.
    Rng rng(std::hash<std::string>{}(doc.node) ^ static_cast<uint64_t>(clock.WallSeconds() * 1e6),
            getpid());
    const cluster::NodeCheck check{doc.node, r.line, passed,
                                   rng.Uniform() * options.drain_jitter_s};
    Result<cluster::NodeOutcome> outcome =
        cluster::ApplyNodeCheck(*p.slurm, check, options.max_drained_share, clock);
    if (outcome.ok()) {
      r.slurm = *std::move(outcome);
    } else {
      r.slurm_status = outcome.status();
    }
    if (!health && !r.failed && !passed) {
      spdlog::info("slurm: a drain by Vigil stays: {}",
                   options.benchmarks.empty()
                       ? "no criteria judged this run (give --criteria or --report)"
                       : "--bench ran part of the suite");
    }
  }
  r.doc = std::move(doc);
  if (!options.textfile.empty()) {
    VIGIL_RETURN_IF_ERROR(WriteTextfile(options.textfile, FormatTextfile(r)));
    r.textfile = TextfilePath(options.textfile);
  }
  return r;
}

}  // namespace vigil::agent
