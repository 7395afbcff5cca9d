#include "cli/run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cli/validate.h"
#include "cli/version.h"
#include "vigil/agent/run_table.h"
#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/learned/findings_text.h"
#include "vigil/learned/judge.h"
#include "vigil/results/verdict.h"

namespace vigil::cli {
namespace {

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

void Print(const RunOptions& options, const agent::NodeAgentResult& r) {
  const NodeResults& doc = r.doc;
  const learned::NodeJudgement& judged = r.judged;
  // Without criteria the rules alone judge: what they do not find at fault is reported healthy.
  const Verdict verdict = judged.findings.defective ? Verdict::kDefective : Verdict::kHealthy;
  if (options.json) {
    Json out = ToJson(doc);
    Json findings = Json::array();
    for (const auto& f : judged.findings.findings) findings.push_back(learned::FindingToJson(f));
    out["validation"] =
        Json{{"criteria", r.with_criteria ? Json(options.agent.criteria) : Json(nullptr)},
             {"verdict", VerdictName(verdict)},
             {"findings", std::move(findings)},
             {"line", r.line}};
    fmt::print("{}\n", DumpJson(out, 2));
    return;
  }
  fmt::print("{}\nResults: {}\n",
             agent::RenderRunTable(doc, judged.findings, r.criteria ? &*r.criteria : nullptr),
             r.out.empty() ? std::string("not written (no --out)") : r.out);
  if (!options.agent.summary.empty()) {
    fmt::print("Summary line appended to {}\n", options.agent.summary);
  }
  if (!r.textfile.empty()) fmt::print("Metrics for node-exporter written to {}\n", r.textfile);
  if (r.with_criteria || judged.findings.defective) {
    const std::string judged_by =
        r.with_criteria ? options.agent.criteria : "the rules that need no fleet";
    fmt::print("\n{}Verdict by {}: {}\n", learned::RenderFindings(r.row, {judged.findings}),
               judged_by, VerdictName(verdict));
  }
}

}  // namespace

CLI::App* SetupRun(CLI::App& parent, RunOptions& options) {
  CLI::App* cmd = parent.add_subcommand(
      "run", "Benchmark this node and write its results document (exit 1 if a benchmark failed)");
  cmd->add_option("--suite", options.agent.suite,
                  "health (seconds, for a scheduler's health check: prints one line, OK or "
                  "\"vigil: <component> <finding>\"), quick (about a minute) or full")
      ->check(CLI::IsMember({"health", "quick", "full"}))
      ->capture_default_str();
  cmd->add_option("--bench", options.agent.benchmarks, "Only these benchmarks, comma-separated")
      ->delimiter(',');
  cmd->add_option("--gpus", options.agent.gpus,
                  "Only these GPUs, by NVML's (nvidia-smi's) index: 0,2-3 (default: those "
                  "CUDA_VISIBLE_DEVICES lists, or every one)");
  cmd->add_option("--out", options.agent.out,
                  "Where to write the results document (JSON; default: vigil-results.json, "
                  "none with --suite health)");
  cmd->add_option("--summary", options.agent.summary,
                  "Append this node's flat line to a fleet summary JSONL file");
  cmd->add_option("--textfile", options.agent.textfile,
                  "Write the verdict and key figures to DIR/vigil.prom for node-exporter's "
                  "textfile collector (--collector.textfile.directory; docs/prometheus.md)")
      ->type_name("DIR");
  cmd->add_option("--node", options.agent.node,
                  "The node's name in the results and in Slurm (default: $SLURMD_NODENAME, "
                  "else the host name)");
  cmd->add_option("--scratch", options.agent.scratch,
                  "Directory for the disk benchmark's file (default: $TMPDIR or /tmp)");
  cmd->add_option("--set", options.agent.set,
                  "A benchmark parameter, <benchmark>.<name>=<value> (see `vigil bench list`)");
  cmd->add_option("--criteria", options.agent.criteria,
                  "Judge this node by criteria learned from the fleet (`vigil learn`); exit 1 "
                  "when a component is defective");
  cmd->add_option("--report", options.agent.report,
                  "Upload the results to this fleet service (`vigil serve`, http://host:port) and "
                  "print its verdict; exit 1 when it finds the node defective");
  cmd->add_option("--token-file", options.agent.token_file,
                  "--report: file holding the bearer token");
  AddTlsClientFlags(*cmd, "--report", options.agent.tls);
  cmd->add_option("--spool", options.agent.spool,
                  "--report: keep the results here when the server cannot be reached (send "
                  "them later with `vigil report --spool`)")
      ->capture_default_str();
  cmd->add_option("--host-root", options.agent.host_root,
                  "Read the host's /sys, /proc and /dev below this directory (a container that "
                  "mounts the host's there)");
  cmd->add_flag("--slurm", options.agent.slurm,
                "Act on this node in Slurm: drain it on a fault (the reason is the fault line), "
                "resume it after a validation passes (quick or full suite, judged healthy by "
                "--criteria or --report), only when Vigil drained it (docs/slurm.md)");
  cmd->add_option("--slurm-conf", options.agent.slurm_conf,
                  "--slurm: the slurm.conf scontrol reads (default: its own, or $SLURM_CONF)");
  cmd->add_option("--max-drained-share", options.agent.max_drained_share,
                  "--slurm: the circuit breaker: Vigil drains no node while it holds this share "
                  "of the nodes drained (at least one node)")
      ->check(InBounds(agent::kDrainedShareBounds))
      ->capture_default_str();
  cmd->add_option("--drain-jitter", options.drain_jitter,
                  "--slurm: a drain first waits a random time up to this (slurmd starts every "
                  "node's health check at once; spread out, racing drains do not all undo "
                  "themselves at the breaker)")
      ->capture_default_str();
  cmd->add_flag("--json", options.json, "Print the results document as JSON instead of a table");
  return cmd;
}

CommandResult RunRun(const RunOptions& options) {
  agent::NodeAgentOptions a = options.agent;
  a.vigil_version = std::string(VigilVersion());
  VIGIL_ASSIGN_OR_RETURN(a.drain_jitter_s, ParseDurationFlag("--drain-jitter", options.drain_jitter,
                                                             agent::kDrainJitterBounds));
  const std::atomic<bool>& interrupted = InstallInterruptFlag();
  Result<agent::NodeAgentResult> ran =
      agent::RunNodeAgent(a, LoggedEvents(), interrupted, SystemClock());
  if (!ran.ok()) {
    if (ran.status().code() == StatusCode::kCancelled) {
      spdlog::error("interrupted: scratch files removed, no results written");
    }
    return ran.status();
  }
  if (a.suite == SuiteName(Suite::kHealth) && !options.json) {
    fmt::print("{}\n", ran->line);
  } else {
    Print(options, *ran);
  }
  if (ran->slurm && !ran->slurm->text.empty()) spdlog::warn("slurm: {}", ran->slurm->text);
  if (!ran->slurm_status.ok()) return ran->slurm_status;
  return ran->failed ? ExitCode::kDefect : ExitCode::kHealthy;
}

}  // namespace vigil::cli
