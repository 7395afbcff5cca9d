#include "vigil/agent/select_submit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "vigil/cluster/scripted_runner.h"
#include "vigil/core/file.h"
#include "vigil/select/fleet_sim.h"

namespace vigil::agent {
namespace {

// 150 nodes (node0000...) for 90 days under the weekly full suite, simulated once.
const select::History& Fleet() {
  static const select::History history = select::WeeklyHistory(150, 90, 3).value();
  return history;
}

// Fleet() with five of its benchmarks named as `vigil run`'s host benchmarks (`rename` maps the
// rest to another name, "" to drop them with their findings).
select::History Renamed(const std::map<std::string, std::string>& rename) {
  select::History h = Fleet();
  for (select::HistoryValidation& v : h.validations) {
    for (select::BenchmarkRun& b : v.benchmarks) {
      const auto to = rename.find(b.name);
      b.name = to == rename.end() ? "" : to->second;
    }
    std::erase_if(v.benchmarks, [](const select::BenchmarkRun& b) { return b.name.empty(); });
    for (select::ValidationFinding& f : v.findings) {
      const auto to = rename.find(f.benchmark);
      f.benchmark = to == rename.end() ? "" : to->second;
    }
    std::erase_if(v.findings,
                  [](const select::ValidationFinding& f) { return f.benchmark.empty(); });
  }
  return h;
}

const std::map<std::string, std::string> kHostNames = {{"gemm-flops", "cpu-flops"},
                                                       {"mem-bw", "cpu-stream"},
                                                       {"cpu-memory-bw", "cpu-latency"},
                                                       {"disk-benchmark", "disk"},
                                                       {"kernel-launch", "host-health"}};

select::SelectOptions Generous() {
  select::SelectOptions o;
  o.max_share = 0.1;  // 15 of the 150 at once
  o.cost_weight = 0.001;
  return o;
}

SubmitOptions Custom(bool dry_run = false) {
  SubmitOptions o;
  o.command = "sb-validate --host {node} --only {benchmarks} # it's quoted";
  o.dry_run = dry_run;
  return o;
}

// Slurm knows every node but node0003 as idle, but node0001 is drained and node0002 runs a job;
// node0004 has a validation queued.
void ScriptSlurm(cluster::ScriptedRunner& runner) {
  std::string nodes;
  for (size_t n = 0; n < Fleet().nodes.size(); ++n) {
    const std::string& name = Fleet().nodes[n].name;
    if (name == "node0003") continue;
    const char* state = name == "node0001"   ? "IDLE+DRAIN"
                        : name == "node0002" ? "ALLOCATED"
                                             : "IDLE";
    nodes += fmt::format("NodeName={} Arch=x86_64 State={} Weight=1\n", name, state);
  }
  runner.Add(nodes);
  runner.Add("88|train-llama|RUNNING\n90|vigil-validate:node0004|PENDING\n");
}

TEST(SelectSubmitTest, PlansWithSlurmsViewAndSubmitsOneJobPerNode) {
  cluster::ScriptedRunner runner;
  ScriptSlurm(runner);
  for (int i = 0; i < 20; ++i) runner.Add(fmt::format("{}\n", 100 + i));
  const Result<SubmitOutcome> out = SelectAndSubmit(Fleet(), Generous(), Custom(), runner);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->view.unknown, 1);
  EXPECT_EQ(out->view.unavailable, 1);
  EXPECT_EQ(out->view.busy, 1);
  EXPECT_EQ(out->view.validating, 1);
  EXPECT_EQ(out->view.idle, 146);
  // The queued validation takes one of the 15 places.
  ASSERT_EQ(out->submissions.size(), 14u);
  EXPECT_TRUE(out->Failed().ok());
  ASSERT_EQ(runner.calls.size(), 2 + out->submissions.size());
  EXPECT_EQ(runner.calls[0].argv[0], "scontrol");
  EXPECT_EQ(runner.calls[1].argv[0], "squeue");
  std::set<std::string> planned;
  for (size_t i = 0; i < out->submissions.size(); ++i) {
    const Submission& s = out->submissions[i];
    planned.insert(s.node);
    EXPECT_EQ(s.job_id, fmt::format("{}", 100 + i));
    EXPECT_EQ(runner.calls[2 + i].argv, s.sbatch);
    EXPECT_EQ(s.sbatch[0], "sbatch");
    EXPECT_NE(std::find(s.sbatch.begin(), s.sbatch.end(), "--job-name=vigil-validate:" + s.node),
              s.sbatch.end());
    std::string benchmarks;
    for (const std::string& b : s.benchmarks) benchmarks += (benchmarks.empty() ? "" : ",") + b;
    EXPECT_EQ(s.sbatch.back(),
              fmt::format("--wrap=sb-validate --host '{}' --only '{}' # it's quoted", s.node,
                          benchmarks));
    // Twice the benchmarks' expected time, and at least 10 minutes.
    const double seconds = out->selection.plan.validations[i].subset.seconds;
    const std::string time =
        fmt::format("--time={}", static_cast<int>(std::ceil(std::max(600.0, 2 * seconds) / 60)));
    EXPECT_NE(std::find(s.sbatch.begin(), s.sbatch.end(), time), s.sbatch.end()) << time;
  }
  for (const char* skipped : {"node0001", "node0002", "node0003", "node0004"}) {
    EXPECT_EQ(planned.count(skipped), 0u) << skipped;  // the busy one comes after 146 idle ones
  }

  ASSERT_EQ(out->queued.size(), 1u);
  EXPECT_EQ(out->queued[0].id, "90");
  const Json j = SubmitOutcomeToJson(*out, Fleet());
  EXPECT_EQ(j["queued"],
            Json::parse(R"([{"node": "node0004", "job_id": "90", "state": "PENDING"}])"));
  EXPECT_EQ(j["slurm"]["not_in_slurm"], 1);
  EXPECT_EQ(j["submissions"].size(), 14u);
  EXPECT_EQ(j["submissions"][0]["job_id"], "100");
  EXPECT_EQ(j["validations"].size(), 14u);
}

TEST(SelectSubmitTest, ADryRunSubmitsNothing) {
  cluster::ScriptedRunner runner;
  ScriptSlurm(runner);
  const Result<SubmitOutcome> out = SelectAndSubmit(Fleet(), Generous(), Custom(true), runner);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(runner.calls.size(), 2u);
  ASSERT_FALSE(out->submissions.empty());
  EXPECT_TRUE(out->submissions[0].job_id.empty());
  EXPECT_FALSE(SubmitOutcomeToJson(*out, Fleet())["submissions"][0].contains("job_id"));
}

TEST(SelectSubmitTest, AFailedSubmissionIsReportedAndTheRestGoOn) {
  cluster::ScriptedRunner runner;
  ScriptSlurm(runner);
  runner.Add("", 1, "sbatch: error: Batch job submission failed: Node count specification invalid");
  for (int i = 0; i < 20; ++i) runner.Add("7\n");
  const Result<SubmitOutcome> out = SelectAndSubmit(Fleet(), Generous(), Custom(), runner);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_GE(out->submissions.size(), 2u);
  EXPECT_EQ(out->submissions[0].status.code(), StatusCode::kIoError);
  EXPECT_EQ(out->submissions[1].job_id, "7");
  EXPECT_EQ(out->Failed().code(), StatusCode::kIoError);
  EXPECT_NE(out->Failed().message().find("Node count"), std::string::npos);
  EXPECT_NE(SubmitOutcomeToJson(*out, Fleet())["submissions"][0]["error"].get<std::string>().find(
                "Node count"),
            std::string::npos);
}

TEST(SelectSubmitTest, NothingIsSubmittedWhenThePlanCannotBeTrusted) {
  // The simulator's benchmarks (SuperBench's names) are not `vigil run`'s: the default command
  // refuses before the first sbatch.
  cluster::ScriptedRunner runner;
  ScriptSlurm(runner);
  const Result<SubmitOutcome> unknown =
      SelectAndSubmit(Fleet(), Generous(), SubmitOptions(), runner);
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("--submit-command"), std::string::npos)
      << unknown.status().message();
  EXPECT_EQ(runner.calls.size(), 2u);

  // Slurm's queue cannot be read: no plan, no job.
  cluster::ScriptedRunner down;
  down.Add("NodeName=node0000 State=IDLE\n");
  down.Add("", 1, "squeue: error: Unable to contact slurm controller");
  EXPECT_EQ(SelectAndSubmit(Fleet(), Generous(), Custom(), down).status().code(),
            StatusCode::kIoError);
  EXPECT_EQ(down.calls.size(), 2u);

  SubmitOptions no_slot = Custom();
  no_slot.command = "sb-validate --host {node}";
  EXPECT_EQ(Validate(no_slot).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(Validate(no_slot).message().find("{benchmarks}"), std::string::npos);
  SubmitOptions factor = Custom();
  factor.time_factor = 0.5;
  EXPECT_EQ(Validate(factor).message(), "--time-factor must be >= 1, got 0.5");
  cluster::ScriptedRunner untouched;
  EXPECT_FALSE(SelectAndSubmit(Fleet(), Generous(), no_slot, untouched).ok());
  EXPECT_TRUE(untouched.calls.empty());
}

TEST(SelectSubmitTest, TheDefaultCommandRunsThisVigilAndReportsToTheFleetService) {
  cluster::ScriptedRunner runner;
  ScriptSlurm(runner);
  SubmitOptions o;
  o.dry_run = true;
  o.report_url = "https://fleet:8443";
  o.token_file = "/etc/vigil/token";
  const Result<SubmitOutcome> out = SelectAndSubmit(Renamed(kHostNames), Generous(), o, runner);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_FALSE(out->submissions.empty());
  const Submission& s = out->submissions[0];
  std::string benchmarks;
  for (const std::string& b : s.benchmarks) benchmarks += (benchmarks.empty() ? "" : ",") + b;
  EXPECT_EQ(
      s.sbatch.back(),
      fmt::format("--wrap={} run --bench '{}' --out vigil-validate-'{}'-\"$SLURM_JOB_ID\".json "
                  "--report 'https://fleet:8443' --token-file '/etc/vigil/token'",
                  cluster::ShellWord(ThisProgramPath()), benchmarks, s.node));
}

TEST(SelectSubmitTest, ABenchmarkNameThatIsNotPlainIsNeverSubmitted) {
  // Names come from uploaded documents; this one would run a command on every node it reached.
  std::map<std::string, std::string> rename = kHostNames;
  for (const char* name :
       {"gpu-burn", "gpu-copy-bw", "nccl-bw", "ib-loopback", "model-benchmarks"}) {
    rename[name] = "x$(touch /tmp/owned)";
  }
  cluster::ScriptedRunner runner;
  ScriptSlurm(runner);
  const Result<SubmitOutcome> out = SelectAndSubmit(Renamed(rename), Generous(), Custom(), runner);
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("not letters, digits"), std::string::npos)
      << out.status().message();
  EXPECT_EQ(runner.calls.size(), 2u);
}

}  // namespace
}  // namespace vigil::agent
