#include <gtest/gtest.h>

#include <filesystem>

#include "vigil/core/file.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/reconfigure.h"
#include "vigil/plan/search.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::plan {
namespace {

// A small dense model: 8 heads and 4 layers leave 3 GPUs no valid layout (TP, PP and CP are
// powers of two there, and DP 3 does not divide the batch of 8).
constexpr std::string_view kModel = R"(layers: 4
hidden: 1024
heads: 8
kv_heads: 8
ffn_hidden: 4096
vocab: 32000
seq_len: 2048
)";

constexpr std::string_view kModelJobs = R"(jobs:
  - name: a
    weight: 2
    gpus: 8
    transition: 10m
    model:
      file: models/small.yaml
      gpu: a100
      global_batch: 8
      sizes: [16, 3, 8]
  - name: b
    gpus: 0
    transition: 1m
    model:
      file: models/small.yaml
      gpu: a100
      global_batch: 8
      micro_batch: 1
      precision: bf16
      sizes: {to: 16, step: 4}
)";

// What `vigil plan search` finds best for the small model on `gpus` A100s.
double BestTflops(int64_t gpus, int64_t micro_batch) {
  SearchRequest r;
  r.model = *ParseModelSpec(kModel, "small.yaml");
  r.hw = *DatasheetProfile("a100");
  r.gpus = gpus;
  r.global_batch = 8;
  r.micro_batch = micro_batch;
  r.top = 1;
  return SearchLayouts(r)->best.front().prediction.tflops_per_gpu;
}

TEST(ReconfigureModelTest, ReadsTheModelOfAJob) {
  Result<std::vector<JobCurve>> jobs = ParseJobs(kModelJobs, "jobs.yaml");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const JobCurve& a = (*jobs)[0];
  ASSERT_TRUE(a.model.has_value());
  EXPECT_TRUE(a.points.empty());
  EXPECT_EQ(a.model->model_path, "models/small.yaml");
  EXPECT_EQ(a.model->gpu, "a100");
  EXPECT_EQ(a.model->micro_batch, 0);
  EXPECT_EQ(a.model->sizes, (std::vector<int64_t>{3, 8, 16}));
  EXPECT_EQ(a.model->where, "jobs.yaml:7: jobs[0].model");
  // {to, step}: the multiples of step.
  EXPECT_EQ((*jobs)[1].model->sizes, (std::vector<int64_t>{4, 8, 12, 16}));
  EXPECT_EQ((*jobs)[1].model->micro_batch, 1);
}

TEST(ReconfigureModelTest, CurvesAreTheBestLayoutAtEachSize) {
  testing::TempDir dir;
  dir.Write("models/small.yaml", std::string(kModel));
  std::string text(kModelJobs);
  text.replace(text.find("models/"), 7, "../models/");
  dir.Write("plan/jobs.yaml", text);
  Result<std::vector<JobCurve>> jobs = ReadJobs(dir.File("plan/jobs.yaml"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  // Relative to the jobs file, not to where vigil runs.
  EXPECT_EQ((*jobs)[0].model->model_path,
            std::filesystem::path(dir.File("models/small.yaml")).lexically_normal().string());
  // b's file, relative to plan/, is not there.
  EXPECT_EQ(CurvesFromModels(*jobs).message().rfind(
                dir.File("plan/jobs.yaml") + ":15: jobs[1].model.file: ", 0),
            0u);
  (*jobs)[1].model->model_path = (*jobs)[0].model->model_path;
  (*jobs)[0].points.clear();
  (*jobs)[0].left_out.clear();
  ASSERT_TRUE(CurvesFromModels(*jobs).ok());
  const JobCurve& a = (*jobs)[0];
  ASSERT_EQ(a.points.size(), 2u);
  EXPECT_EQ(a.left_out, (std::vector<int64_t>{3}));
  EXPECT_EQ(a.points[0].gpus, 8);
  EXPECT_DOUBLE_EQ(a.points[0].tflops_per_gpu, BestTflops(8, 0));
  EXPECT_DOUBLE_EQ(a.points[1].tflops_per_gpu, BestTflops(16, 0));
  // b's micro-batch of 1 is one of the layouts a's search tried: it is no faster than a's best.
  const JobCurve& b = (*jobs)[1];
  ASSERT_EQ(b.points.size(), 3u);  // 12: DP 3, 6 or 12 does not divide the batch of 8
  EXPECT_EQ(b.left_out, (std::vector<int64_t>{12}));
  EXPECT_DOUBLE_EQ(b.points[1].tflops_per_gpu, BestTflops(8, 1));
  EXPECT_LE(b.points[1].tflops_per_gpu, a.points[0].tflops_per_gpu);
}

TEST(ReconfigureModelTest, NamesTheJobOfEachProblem) {
  const auto error = [](std::string_view from, std::string_view to) {
    std::string text(kModelJobs);
    text.replace(text.find(from), from.size(), to);
    return ParseJobs(text, "jobs.yaml").status().message();
  };
  EXPECT_EQ(
      error("    model:\n      file: models/small.yaml\n      gpu: a100\n      global_batch: 8\n"
            "      sizes: [16, 3, 8]\n",
            "    throughput: [{gpus: 8, tflops_per_gpu: 100}]\n    model: {file: m.yaml}\n"),
      "jobs.yaml:2: jobs[0]: job 'a' has both throughput and model; give one");
  EXPECT_EQ(error("sizes: [16, 3, 8]", "sizes: [16, 3]"),
            "jobs.yaml:4: jobs[0].gpus: 8 is not one of the job's model.sizes");
  EXPECT_EQ(error("sizes: [16, 3, 8]", "sizes: [16, 8, 16]"),
            "jobs.yaml:10: jobs[0].model.sizes[2]: 16 GPUs listed twice");
  EXPECT_EQ(error("sizes: {to: 16, step: 4}", "sizes: {to: 16}"),
            "jobs.yaml:20: jobs[1].model.sizes.step: missing");
  EXPECT_EQ(error("sizes: {to: 16, step: 4}", "sizes: {from: 20, to: 16, step: 4}"),
            "jobs.yaml:20: jobs[1].model.sizes.from: 20 is out of range (1 to 16)");
  EXPECT_EQ(error("      gpu: a100\n      global_batch: 8\n      sizes: [16, 3, 8]",
                  "      gpu: a100\n      sizes: [16, 3, 8]"),
            "jobs.yaml:7: jobs[0].model.global_batch: missing");
  EXPECT_EQ(error("gpu: a100", "gpu: v100"),
            "jobs.yaml:8: jobs[0].model.gpu: \"v100\" is not one of a100, h100, h200, b200");
}

TEST(ReconfigureModelTest, RefusesAModelThatFitsNowhereItMustRun) {
  testing::TempDir dir;
  dir.Write("small.yaml", std::string(kModel));
  std::string text(kModelJobs);
  text.replace(text.find("models/"), 7, "");
  text.replace(text.find("models/"), 7, "");
  // a runs on 8 GPUs now; with only 3 allowed besides, nothing fits where it runs.
  text.replace(text.find("sizes: [16, 3, 8]"), 17, "sizes: [3]");
  text.replace(text.find("gpus: 8"), 7, "gpus: 0");
  dir.Write("jobs.yaml", text);
  Result<std::vector<JobCurve>> jobs = ReadJobs(dir.File("jobs.yaml"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const std::string message = CurvesFromModels(*jobs).message();
  EXPECT_EQ(message.rfind(dir.File("jobs.yaml") + ":7: jobs[0].model.sizes: job 'a' fits at none "
                                                  "of its 1 sizes (no valid layout",
                          0),
            0u)
      << message;
  dir.Write("jobs.yaml", std::string(kModelJobs));
  jobs = ReadJobs(dir.File("jobs.yaml"));
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(CurvesFromModels(*jobs).message().rfind(
                dir.File("jobs.yaml") + ":7: jobs[0].model.file: ", 0),
            0u);
}

}  // namespace
}  // namespace vigil::plan
