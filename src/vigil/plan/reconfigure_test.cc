#include "vigil/plan/reconfigure.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::plan {
namespace {

JobCurve Job(std::string name, int64_t current, double transition_s,
             std::vector<ThroughputPoint> points, double weight = 1, bool hit = false) {
  JobCurve j;
  j.name = std::move(name);
  j.weight = weight;
  j.current_gpus = current;
  j.hit = hit;
  j.transition_s = transition_s;
  j.points = std::move(points);
  return j;
}

// Every assignment of a size (or 0) to every job: the reference the DP must match.
double BruteForce(const std::vector<JobCurve>& jobs, size_t j, int64_t free, double horizon) {
  if (j == jobs.size()) return 0;
  double best = BruteForce(jobs, j + 1, free, horizon);
  for (const ThroughputPoint& p : jobs[j].points) {
    if (p.gpus > free) continue;
    best = std::max(best, PlanValue(jobs[j], p.gpus, horizon) +
                              BruteForce(jobs, j + 1, free - p.gpus, horizon));
  }
  return best;
}

TEST(ReconfigureTest, MatchesExhaustiveSearchOnRandomProblems) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<JobCurve> jobs;
    const int n = 1 + static_cast<int>(rng() % 5);
    for (int j = 0; j < n; ++j) {
      std::vector<ThroughputPoint> points;
      for (int64_t g = 8; g <= 64; g += 8) {
        if (rng() % 2) points.push_back({g, 100.0 + static_cast<double>(rng() % 100)});
      }
      if (points.empty()) points.push_back({16, 150});
      const int64_t current = rng() % 3 ? points[rng() % points.size()].gpus : 0;
      jobs.push_back(Job(fmt::format("j{}", j), current, static_cast<double>(rng() % 7200), points,
                         0.5 + static_cast<double>(rng() % 4), rng() % 4 == 0));
    }
    const int64_t gpus = static_cast<int64_t>(rng() % 160);
    const double horizon = 600.0 + static_cast<double>(rng() % 20000);
    Result<ReconfigurePlan> plan = PlanReconfiguration(jobs, gpus, horizon);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_NEAR(plan->value, BruteForce(jobs, 0, gpus, horizon), 1e-6 * (1 + plan->value));
    EXPECT_LE(plan->gpus_used, gpus);
    double sum = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
      sum += PlanValue(jobs[j], plan->jobs[j].gpus, horizon);
    }
    EXPECT_NEAR(sum, plan->value, 1e-6 * (1 + sum));
    EXPECT_GE(plan->value, RestartAtOldSize(jobs, gpus, horizon).value - 1e-6);
  }
}

TEST(ReconfigureTest, ShrinksAJobRatherThanPauseIt) {
  // 64 GPUs left of 72: the naive restart cannot fit the 64-GPU job beside the 8-GPU one, the
  // plan shrinks it to 56.
  const std::vector<JobCurve> jobs = {
      Job("small", 8, 600, {{8, 150}}),
      Job("big", 64, 600, {{48, 140}, {56, 140}, {64, 140}}, 1, true),
  };
  const ReconfigurePlan naive = RestartAtOldSize(jobs, 64, 3600);
  EXPECT_EQ(naive.jobs[0].gpus, 8);
  EXPECT_EQ(naive.jobs[1].gpus, 0);
  Result<ReconfigurePlan> plan = PlanReconfiguration(jobs, 64, 3600);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->jobs[0].gpus, 8);
  EXPECT_FALSE(plan->jobs[0].restarts);
  EXPECT_EQ(plan->jobs[1].gpus, 56);
  EXPECT_TRUE(plan->jobs[1].restarts);
  EXPECT_DOUBLE_EQ(plan->jobs[1].value, 56 * 140 * 3000.0);
}

TEST(ReconfigureTest, AShortHorizonKeepsJobsWhereTheyAre) {
  // Growing "b" would pay a 30-minute restart; with 20 minutes to the next failure it cannot pay
  // back, so the plan leaves the spare GPUs idle.
  const std::vector<JobCurve> jobs = {Job("b", 16, 1800, {{16, 100}, {32, 100}})};
  EXPECT_EQ(PlanReconfiguration(jobs, 32, 1200)->jobs[0].gpus, 16);
  EXPECT_EQ(PlanReconfiguration(jobs, 32, 86400)->jobs[0].gpus, 32);
}

TEST(ReconfigureTest, RefusesWhatItCannotPlan) {
  const std::vector<JobCurve> jobs = {Job("a", 8, 0, {{8, 1}})};
  EXPECT_FALSE(PlanReconfiguration({}, 8, 1).ok());
  EXPECT_FALSE(PlanReconfiguration(jobs, -1, 1).ok());
  EXPECT_FALSE(PlanReconfiguration(jobs, 8, 0).ok());
  // 100 jobs over a million one-GPU units: 1e8 table cells.
  std::vector<JobCurve> many;
  for (int j = 0; j < 100; ++j) many.push_back(Job(fmt::format("j{}", j), 1, 0, {{1, 1}}));
  EXPECT_NE(PlanReconfiguration(many, 1000000, 1).status().message().find("too large"),
            std::string::npos);
}

constexpr std::string_view kCurveJobs = R"(jobs:
  - name: pretrain
    weight: 2
    gpus: 64
    hit: true
    transition: 10m
    throughput:
      - {gpus: 64, tflops_per_gpu: 400}
      - {gpus: 32, tflops_per_gpu: 420}
  - name: finetune
    gpus: 0
    transition: 90s
    throughput: [{gpus: 8, tflops_per_gpu: 300}]
)";

TEST(ReconfigureTest, ReadsTheJobsFile) {
  Result<std::vector<JobCurve>> jobs = ParseJobs(kCurveJobs, "jobs.yaml");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  const JobCurve& p = (*jobs)[0];
  EXPECT_EQ(p.name, "pretrain");
  EXPECT_DOUBLE_EQ(p.weight, 2);
  EXPECT_TRUE(p.hit);
  EXPECT_DOUBLE_EQ(p.transition_s, 600);
  ASSERT_EQ(p.points.size(), 2u);
  EXPECT_EQ(p.points[0].gpus, 32);  // sorted
  EXPECT_DOUBLE_EQ(p.TflopsAt(64), 64 * 400.0);
  EXPECT_DOUBLE_EQ((*jobs)[1].weight, 1);
  EXPECT_FALSE((*jobs)[1].hit);
}

TEST(ReconfigureTest, RefusesSparedJobsOnMoreGpusThanAreHealthy) {
  testing::TempDir dir;
  std::string text(kCurveJobs);
  text.replace(text.find("gpus: 0"), 7, "gpus: 8");  // finetune, not hit, runs on 8
  ASSERT_TRUE(WriteFileAtomic(dir.File("jobs.yaml"), text).ok());
  ReconfigureQuestion q;
  q.jobs_path = dir.File("jobs.yaml");
  q.healthy_gpus = 4;
  q.mttf_s = 3600;
  EXPECT_EQ(
      AnswerReconfigure(q).status().message(),
      q.jobs_path + ": the jobs not hit run on 8 GPUs, more than the 4 healthy ones of --gpus");
  q.healthy_gpus = 8;
  EXPECT_TRUE(AnswerReconfigure(q).ok());
}

TEST(ReconfigureTest, NamesFileLineAndFieldOfEachProblem) {
  auto error = [](std::string text, std::string_view from, std::string_view to) {
    text.replace(text.find(from), from.size(), to);
    return ParseJobs(text, "jobs.yaml").status().message();
  };
  const std::string jobs(kCurveJobs);
  EXPECT_EQ(error(jobs, "tflops_per_gpu: 420", "tflops_per_gpu: fast"),
            "jobs.yaml:9: jobs[0].throughput[1].tflops_per_gpu: expected a number, got \"fast\"");
  EXPECT_EQ(error(jobs, "gpus: 64\n", "gpus: 96\n"),
            "jobs.yaml:4: jobs[0].gpus: 96 is not one of the job's throughput sizes");
  EXPECT_EQ(error(jobs, "{gpus: 32", "{gpus: 64"),
            "jobs.yaml:9: jobs[0].throughput[1].gpus: 64 GPUs listed twice");
  EXPECT_EQ(error(jobs, "name: finetune", "name: pretrain"),
            "jobs.yaml:10: jobs[1].name: 'pretrain' is the name of an earlier job");
  EXPECT_EQ(error(jobs, "    transition: 90s\n", ""), "jobs.yaml:10: jobs[1].transition: missing");
  EXPECT_EQ(error(jobs, "hit: true", "hit: yes"),
            "jobs.yaml:5: jobs[0].hit: \"yes\" is not one of true, false");
  EXPECT_EQ(ParseJobs("jobs: []\n", "j.yaml").status().message(),
            "j.yaml:1: jobs: expected a list of 1 to 10000 jobs");
  EXPECT_EQ(ParseJobs("jobs: [", "j.yaml").status().message().rfind("j.yaml:", 0), 0u);
}

}  // namespace
}  // namespace vigil::plan
