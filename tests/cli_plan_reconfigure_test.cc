// End-to-end tests of `vigil plan reconfigure` with curves from the training step model: a jobs
// file that names model files (relative to itself), the curves and left-out sizes it prints, and
// exit 2 naming the job for a job with both kinds of curve.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil::testing {
namespace {

// A small dense model: 4 layers and 8 heads leave 12 GPUs no layout for a batch of 16 (DP 3, 6
// or 12 does not divide it).
constexpr std::string_view kModel = R"(layers: 4
hidden: 2048
heads: 8
kv_heads: 8
ffn_hidden: 8192
vocab: 32000
seq_len: 2048
)";

constexpr std::string_view kReconfigureJobs = R"(jobs:
  - name: big
    weight: 2
    gpus: 32
    hit: true
    transition: 10m
    model:
      file: models/small.yaml
      gpu: h100
      global_batch: 16
      sizes: {to: 32, step: 4}
  - name: fixed
    gpus: 8
    transition: 1m
    throughput: [{gpus: 8, tflops_per_gpu: 300}]
)";

TEST(PlanReconfigureModelCliTest, CurvesComeFromTheModel) {
  TempDir dir;
  dir.Write("models/small.yaml", std::string(kModel));
  dir.Write("jobs.yaml", std::string(kReconfigureJobs));
  const ProcessResult r = RunVigil({"plan", "reconfigure", "--jobs", dir.File("jobs.yaml"),
                                    "--gpus", "36", "--mttf", "6h", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = JsonOf(r);
  ASSERT_EQ(j["curves"].size(), 1u);  // the hand-written job has none to print
  const Json& c = j["curves"][0];
  EXPECT_EQ(c["name"], "big");
  EXPECT_EQ(c["left_out"], Json({12, 20, 24, 28}));
  ASSERT_EQ(c["throughput"].size(), 4u);  // 4, 8, 16 and 32
  for (const Json& p : c["throughput"]) EXPECT_GT(p["tflops_per_gpu"].get<double>(), 0) << p;
  EXPECT_GE(j["curves_s"].get<double>(), 0);
  // 36 GPUs with 8 held by the spared job: the naive restart cannot bring the hit job back at
  // 32. The plan pauses the weight-1 job instead: 32 GPUs of the weight-2 job at its model
  // throughput are worth more than 16 of them and the 8 of the other.
  EXPECT_EQ(j["naive"]["jobs"][0]["gpus"], 0);
  EXPECT_EQ(j["naive"]["jobs"][1]["gpus"], 8);
  EXPECT_EQ(j["plan"]["jobs"][0]["gpus"], 32);
  EXPECT_EQ(j["plan"]["jobs"][1]["gpus"], 0);
  EXPECT_GT(j["gain"].get<double>(), 1);

  const ProcessResult text =
      RunVigil({"plan", "reconfigure", "--jobs", dir.File("jobs.yaml"), "--gpus", "36"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("big: curve from " + dir.File("models/small.yaml")), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("left out, no layout fits: 12, 20, 24, 28 GPUs"), std::string::npos)
      << text.out;
}

TEST(PlanReconfigureModelCliTest, BadInputExitsTwoNamingTheJob) {
  TempDir dir;
  std::string both(kReconfigureJobs);
  both.replace(both.find("    model:"), 0, "    throughput: [{gpus: 32, tflops_per_gpu: 1}]\n");
  dir.Write("jobs.yaml", both);
  ProcessResult r =
      RunVigil({"plan", "reconfigure", "--jobs", dir.File("jobs.yaml"), "--gpus", "36"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "vigil: " + dir.File("jobs.yaml") +
                       ":2: jobs[0]: job 'big' has both throughput and model; give one\n");
  // The model file is looked for beside the jobs file: not there.
  dir.Write("jobs.yaml", std::string(kReconfigureJobs));
  r = RunVigil({"plan", "reconfigure", "--jobs", dir.File("jobs.yaml"), "--gpus", "36"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("vigil: " + dir.File("jobs.yaml") + ":8: jobs[0].model.file: ", 0), 0u)
      << r.err;
}

}  // namespace
}  // namespace vigil::testing
