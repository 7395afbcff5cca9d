#include "vigil/agent/select_submit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "vigil/bench/registry.h"
#include "vigil/core/file.h"
#include "vigil/core/text.h"

namespace vigil::agent {
namespace {

constexpr std::string_view kNode = "{node}";
constexpr std::string_view kBenchmarks = "{benchmarks}";

// `command` with each {node} and {benchmarks} replaced by its shell-quoted word.
std::string Filled(std::string_view command, const std::string& node,
                   const std::string& benchmarks) {
  std::string out;
  while (!command.empty()) {
    if (command.rfind(kNode, 0) == 0) {
      out += cluster::ShellWord(node);
      command.remove_prefix(kNode.size());
    } else if (command.rfind(kBenchmarks, 0) == 0) {
      out += cluster::ShellWord(benchmarks);
      command.remove_prefix(kBenchmarks.size());
    } else {
      out += command.front();
      command.remove_prefix(1);
    }
  }
  return out;
}

// This program's `run` with the planned benchmarks, its document kept per job (jobs share the
// submitting directory), reporting to the fleet service when there is one.
std::string DefaultCommand(const SubmitOptions& o) {
  std::string command =
      fmt::format("{} run --bench {} --out vigil-validate-{}-\"$SLURM_JOB_ID\".json",
                  cluster::ShellWord(ThisProgramPath()), kBenchmarks, kNode);
  const auto flag = [&](std::string_view name, const std::string& value) {
    if (!value.empty()) command += fmt::format(" {} {}", name, cluster::ShellWord(value));
  };
  flag("--report", o.report_url);
  flag("--token-file", o.token_file);
  flag("--ca-file", o.tls.ca_file);
  flag("--client-cert", o.tls.cert_file);
  flag("--client-key", o.tls.key_file);
  return command;
}

// Every planned benchmark's name must be plain: names come from uploaded documents and reach a
// shell. With the default command each must also be one `vigil run` knows, or the jobs would all
// fail on the nodes.
Status CheckBenchmarkNames(const select::Selection& selection, bool default_command) {
  const Registry registry = BuiltinRegistry();
  for (const select::PlannedValidation& v : selection.plan.validations) {
    for (const std::string& name : select::PlannedBenchmarks(selection, v)) {
      if (!IsPlainWord(name, "._:/-")) {
        return Status::InvalidArgument(fmt::format(
            "--submit: the plan runs benchmark {}, whose name is not letters, digits and \"._:/-\"",
            Quote(name)));
      }
      if (!default_command || registry.Find(name) != nullptr) continue;
      std::vector<std::string> valid;
      for (const Benchmark* b : registry.All()) valid.emplace_back(b->name());
      return Status::InvalidArgument(fmt::format(
          "--submit: the plan runs benchmark {}, which `vigil run` does not know (it knows {}); "
          "give --submit-command for the program that runs the history's benchmarks",
          Quote(name), fmt::join(valid, ", ")));
    }
  }
  return Status::Ok();
}

// Each history node's state in Slurm, the counts, and the validations queued for them.
Result<std::vector<select::NodeState>> StatesInSlurm(const select::History& history,
                                                     cluster::Slurm& slurm, SubmitOutcome& out) {
  VIGIL_ASSIGN_OR_RETURN(const std::vector<cluster::SlurmNode> nodes, slurm.Nodes());
  VIGIL_ASSIGN_OR_RETURN(const std::vector<cluster::SlurmJob> jobs, slurm.Jobs());
  std::map<std::string, cluster::NodeUse, std::less<>> use;
  for (const cluster::SlurmNode& n : nodes) use[n.name] = n.Use();
  std::map<std::string, cluster::SlurmJob, std::less<>> validating;
  for (const cluster::SlurmJob& j : jobs) {
    const std::string_view node = cluster::ValidationJobNode(j.name);
    if (!node.empty()) validating.emplace(std::string(node), j);
  }
  SlurmView& view = out.view;
  std::vector<select::NodeState> states;
  for (const select::HistoryNode& h : history.nodes) {
    const auto u = use.find(h.name);
    const auto queued = validating.find(h.name);
    if (u == use.end()) {
      ++view.unknown;
      states.push_back(select::NodeState::kDown);
    } else if (queued != validating.end()) {
      ++view.validating;
      out.queued.push_back(queued->second);
      states.push_back(select::NodeState::kValidating);
    } else if (u->second == cluster::NodeUse::kIdle) {
      ++view.idle;
      states.push_back(select::NodeState::kIdle);
    } else if (u->second == cluster::NodeUse::kBusy) {
      ++view.busy;
      states.push_back(select::NodeState::kBusy);
    } else {
      ++view.unavailable;
      states.push_back(select::NodeState::kDown);
    }
  }
  return states;
}

}  // namespace

Status SubmitOutcome::Failed() const {
  const auto failed = [](const Submission& s) { return !s.status.ok(); };
  const auto first = std::find_if(submissions.begin(), submissions.end(), failed);
  if (first == submissions.end()) return Status::Ok();
  return Status::IoError(fmt::format("{} of {} submissions failed; the first, {}: {}",
                                     std::count_if(submissions.begin(), submissions.end(), failed),
                                     submissions.size(), first->node, first->status.message()));
}

Status Validate(const SubmitOptions& options) {
  if (!options.command.empty() && options.command.find(kBenchmarks) == std::string::npos) {
    return Status::InvalidArgument(
        fmt::format("--submit-command {}: must hold {}, where the planned benchmarks go",
                    Quote(options.command), kBenchmarks));
  }
  if (!std::isfinite(options.time_factor) || options.time_factor < 1) {
    return Status::InvalidArgument(
        fmt::format("--time-factor must be >= 1, got {}", options.time_factor));
  }
  return Status::Ok();
}

Result<SubmitOutcome> SelectAndSubmit(const select::History& history,
                                      const select::SelectOptions& select_options,
                                      const SubmitOptions& options,
                                      cluster::CommandRunner& runner) {
  VIGIL_RETURN_IF_ERROR(Validate(options));
  cluster::Slurm slurm(runner, options.slurm);
  SubmitOutcome out;
  VIGIL_ASSIGN_OR_RETURN(const std::vector<select::NodeState> states,
                         StatesInSlurm(history, slurm, out));
  VIGIL_ASSIGN_OR_RETURN(out.selection, select::SelectFromHistory(history, select_options, states));
  VIGIL_RETURN_IF_ERROR(CheckBenchmarkNames(out.selection, options.command.empty()));
  const std::string command = options.command.empty() ? DefaultCommand(options) : options.command;
  // Every job is made and checked before the first is submitted.
  std::vector<cluster::ValidationJob> jobs;
  for (const select::PlannedValidation& v : out.selection.plan.validations) {
    Submission s;
    s.node = history.nodes[static_cast<size_t>(v.node)].name;
    s.benchmarks = select::PlannedBenchmarks(out.selection, v);
    cluster::ValidationJob job;
    job.node = s.node;
    job.command = Filled(command, s.node, fmt::format("{}", fmt::join(s.benchmarks, ",")));
    job.time_limit_s = std::max(kMinJobTime, options.time_factor * v.subset.seconds);
    job.partition = options.partition;
    job.account = options.account;
    job.output = options.output;
    VIGIL_RETURN_IF_ERROR(cluster::CheckValidationJob(job));
    s.sbatch = cluster::SbatchArgs(job);
    s.sbatch.insert(s.sbatch.begin(), options.slurm.sbatch);
    out.submissions.push_back(std::move(s));
    jobs.push_back(std::move(job));
  }
  if (options.dry_run) return out;
  for (size_t i = 0; i < jobs.size(); ++i) {
    Result<std::string> id = slurm.Submit(jobs[i]);
    if (id.ok()) {
      out.submissions[i].job_id = std::move(*id);
    } else {
      out.submissions[i].status = id.status();
    }
  }
  return out;
}

Json SubmitOutcomeToJson(const SubmitOutcome& outcome, const select::History& history) {
  Json j = select::SelectionToJson(outcome.selection, history);
  j["slurm"] = {{"idle", outcome.view.idle},
                {"busy", outcome.view.busy},
                {"unavailable", outcome.view.unavailable},
                {"validating", outcome.view.validating},
                {"not_in_slurm", outcome.view.unknown}};
  Json queued = Json::array();
  for (const cluster::SlurmJob& q : outcome.queued) {
    queued.push_back({{"node", std::string(cluster::ValidationJobNode(q.name))},
                      {"job_id", q.id},
                      {"state", q.state}});
  }
  j["queued"] = std::move(queued);
  Json submissions = Json::array();
  for (const Submission& s : outcome.submissions) {
    Json one = {{"node", s.node}, {"benchmarks", s.benchmarks}, {"sbatch", s.sbatch}};
    if (!s.job_id.empty()) one["job_id"] = s.job_id;
    if (!s.status.ok()) one["error"] = s.status.message();
    submissions.push_back(std::move(one));
  }
  j["submissions"] = std::move(submissions);
  return j;
}

}  // namespace vigil::agent
