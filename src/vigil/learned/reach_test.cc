#include "vigil/learned/reach.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <random>
#include <stdexcept>

#include "vigil/learned/learn.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/component.h"
#include "vigil/results/summary.h"
#include "vigil/testing/gpu_fleet.h"

namespace vigil::learned {
namespace {

// A fleet of `nodes` 8-GPU nodes reporting, per GPU, the keys `keys(gpu)`, each at 1000 plus
// `noise()` times 0.5%, and `node_keys` once per node likewise.
FleetTable Fleet(int nodes, const std::function<std::vector<std::string>(int)>& keys,
                 const std::function<double()>& noise,
                 const std::vector<std::string>& node_keys = {}) {
  return testing::GpuFleet(
      nodes, keys, [&](int, const std::string&) { return 1000 * (1 + 0.005 * noise()); },
      node_keys);
}

std::vector<std::string> Gemm(int g) { return {fmt::format("gemm-flops/fp16_tc_flops:{}", g)}; }

// GPU g's GEMM keys of the data types `types`.
std::vector<std::string> GemmTypes(int g, std::initializer_list<const char*> types) {
  std::vector<std::string> keys;
  for (const char* type : types) keys.push_back(fmt::format("gemm-flops/{}:{}", type, g));
  return keys;
}

const Reach& Row(const std::vector<Reach>& reach, std::string_view benchmark,
                 std::string_view part) {
  for (const Reach& r : reach) {
    if (r.benchmark == benchmark && r.part == part) return r;
  }
  throw std::runtime_error(fmt::format("no reach of {} {}", benchmark, part));
}

// One metric per GPU under normal noise: the slowdown that a test flags is the nearer of the
// family's two limits, each in its own spread: the fleet's (limit times spread, relative to the
// centre) and the balance inside the node (balance limit times its spread, a ratio), found to
// within the search's resolution. Heavy-tailed noise of the same robust spread puts both limits
// far out, and the reach with them.
TEST(ReachTest, APartOfOneMetricIsFlaggedFromItsNearerLimit) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  const LearnedCriteria c = *Learn(Fleet(2000, Gemm, [&] { return normal(rng); }), LearnOptions{});
  const FamilyModel& f = c.classes.at(0).families.at(0);
  ASSERT_TRUE(f.balanced);
  const double fleet = f.limit * f.modes.at(0).spread / f.modes.at(0).centre;
  const double balance = f.balance_limit * f.balance_spread + f.balance_centre;
  const std::vector<Reach> reach = ReachOf(c);
  ASSERT_EQ(reach.size(), 1u);  // one benchmark, one part kind, no other benchmark of the GPU
  const Reach& r = reach[0];
  EXPECT_EQ(r.benchmark, "gemm-flops");
  EXPECT_EQ(r.part, "GPU 0");
  EXPECT_EQ(r.metrics, 1u);
  EXPECT_EQ(r.test, balance < fleet ? FindingTest::kBalance : FindingTest::kFleet);
  const double expected = std::min(fleet, balance);
  EXPECT_GE(r.slowdown, expected - 1e-9);
  EXPECT_LE(r.slowdown, expected + 0.01 / 32 + 1e-9);
  EXPECT_GT(r.slowdown, 0.01);
  EXPECT_LT(r.slowdown, 0.05);

  std::student_t_distribution<double> t3(3);
  const LearnedCriteria heavy =
      *Learn(Fleet(2000, Gemm, [&] { return t3(rng) / 1.13; }), LearnOptions{});
  EXPECT_GT(ReachOf(heavy).at(0).slowdown, 2 * r.slowdown);
}

// The reach is the judge's own answer: a node whose GPU 0 is slowed just past it is named, one
// slowed just short of it is not.
TEST(ReachTest, TheJudgeNamesThePartJustPastItsReachAndNotShortOfIt) {
  std::mt19937_64 rng(6);
  std::normal_distribution<double> normal;
  const auto keys = [](int g) {
    return GemmTypes(g, {"fp16_tc_flops", "bf16_tc_flops", "tf32_tc_flops", "fp32_flops"});
  };
  // Other benchmarks too: a node whose values leave the healthy modes of more than half its
  // families is judged a stranger to its class, whatever its parts.
  std::vector<std::string> others;
  for (const char* model : {"bert-base", "bert-large", "gpt2-small", "gpt2-large", "lstm"}) {
    others.push_back(fmt::format("models/pytorch-{}/fp16_train_throughput", model));
  }
  const LearnedCriteria c = *Learn(Fleet(
                                       2000, keys, [&] { return normal(rng); }, others),
                                   LearnOptions{});
  const Reach r = ReachOf(c).at(0);
  ASSERT_EQ(r.part, "GPU 0");
  EXPECT_EQ(r.metrics, 4u);
  EXPECT_EQ(r.test, FindingTest::kComponent);  // four metrics together find less than one does
  const auto named = [&](double slowdown) {
    FleetRow row;
    row.node = "n";
    for (const FamilyModel& f : c.classes[0].families) {
      for (const std::string& key : f.members) {
        const bool slowed = Anatomize(key).component == "GPU 0";
        row.values.emplace_back(key, f.modes[0].centre * (slowed ? 1 - slowdown : 1));
      }
    }
    const std::vector<NodeFindings> judged = Judge(TableOfRows({row}, "n"), c);
    for (const Finding& found : judged[0].findings) {
      if (ComponentName(found.component) == "GPU 0") return true;
    }
    return false;
  };
  EXPECT_TRUE(named(r.slowdown * 1.01));
  EXPECT_FALSE(named(r.slowdown * 0.95));
}

// Parts a benchmark measures by the same families (a node's disks) are one row, not one each; a
// kind of part two benchmarks measure (a GPU's GEMM and its kernel launches) gets a row of its
// first part across both; a node-wide benchmark's part, which a node has one of, none.
TEST(ReachTest, OneRowPerBenchmarkAndKindAndOneAcrossBenchmarks) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  const auto keys = [](int g) {
    std::vector<std::string> k = {fmt::format("gemm-flops/fp16_tc_flops:{}", g),
                                  fmt::format("kernel-launch/wall_overhead:{}", g)};
    if (g < 4) {
      k.push_back(fmt::format("disk-benchmark/nvme{}n1_rand_read_write_read_iops", g));
      k.push_back(fmt::format("disk-benchmark/nvme{}n1_rand_read_write_write_iops", g));
    }
    return k;
  };
  const LearnedCriteria c = *Learn(Fleet(2000, keys, [&] { return normal(rng); },
                                         {"bert_models/pytorch-bert-base/fp16_train_throughput",
                                          "bert_models/pytorch-bert-large/fp16_train_throughput"}),
                                   LearnOptions{});
  const std::vector<Reach> reach = ReachOf(c);
  std::vector<std::string> rows;
  for (const Reach& r : reach)
    rows.push_back(fmt::format("{}|{}|{}", r.benchmark, r.part, r.metrics));
  EXPECT_EQ(rows,
            (std::vector<std::string>{"gemm-flops|GPU 0|1", "kernel-launch|GPU 0|1",
                                      "disk-benchmark|disk nvme0n1|2",
                                      "bert_models/pytorch-bert-base|bert_models|1",
                                      "bert_models/pytorch-bert-large|bert_models|1", "|GPU 0|2"}))
      << fmt::format("{}", fmt::join(rows, "\n"));
  for (const Reach& r : reach) {
    EXPECT_GT(r.slowdown, 0) << r.part;
    EXPECT_LT(r.slowdown, 0.1) << r.part;
  }
  // The GPU's two metrics together are found sooner than either alone.
  EXPECT_LT(Row(reach, "", "GPU 0").slowdown, Row(reach, "gemm-flops", "GPU 0").slowdown);
}

// Criteria that flag nothing but failures (the smallest budget) find no slowdown: not found,
// shown so and written as null.
TEST(ReachTest, APartNoSlowdownFlagsIsNotFound) {
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal;
  LearnOptions o;
  o.budget = 1e-100;
  const LearnedCriteria c = *Learn(Fleet(200, Gemm, [&] { return normal(rng); }), o);
  const std::vector<Reach> reach = ReachOf(c);
  ASSERT_EQ(reach.size(), 1u);
  EXPECT_TRUE(std::isnan(reach[0].slowdown));
  EXPECT_TRUE(std::isnan(reach[0].first));
  EXPECT_EQ(RenderReach(reach),
            "HARDWARE       BENCHMARK   PART   METRICS  FLAGGED FROM   TEST  FIRST FLAGGED\n"
            "(unspecified)  gemm-flops  GPU 0  1        not up to 95%  -     -\n");
  EXPECT_EQ(ReachToJson(reach).dump(),
            "[{\"hardware\":\"\",\"benchmark\":\"gemm-flops\",\"part\":\"GPU 0\",\"metrics\":1,"
            "\"slowdown\":null,\"first\":null,\"test\":null}]");
  EXPECT_EQ(RenderBlindReach(reach),
            "One kind of part is flagged by no slowdown up to 95% (gemm-flops GPU 0): a part that "
            "slow passes its tests. Either the healthy values spread that far "
            "(heavy tails, noisy nodes), or the results learned from hold defective parts that "
            "the tail was read from: learn again without nodes known to be bad, or from more "
            "runs. A benchmark that fails is still a finding.\n");
}

// The note names every kind of part that nothing flags, with its class, and none where each is
// flagged from some slowdown or only in a gap.
TEST(ReachTest, TheNoteNamesThePartsNothingFlags) {
  const double none = std::nan("");
  Reach found{"8x A100", "mem-bw", "PCIe 0", 2, 0.047, none, FindingTest::kComponent};
  Reach gap{"8x A100", "nccl-bw", "NVLink", 1, none, 0.022, FindingTest::kFleet};
  Reach hbm{"8x A100", "mem-bw", "HBM 0", 1, none, none, FindingTest::kFleet};
  Reach all{"", "", "HBM 0", 2, none, none, FindingTest::kFleet};
  EXPECT_EQ(RenderBlindReach({found, gap}), "");
  const std::string note = RenderBlindReach({found, hbm, gap, all});
  EXPECT_TRUE(
      note.starts_with("2 kinds of part are flagged by no slowdown up to 95% (8x A100: "
                       "mem-bw HBM 0, (all) HBM 0): a part that slow passes their tests"))
      << note;
}

// A family of two healthy modes (two firmware versions at 200 and 230) judges a value by the mode
// nearest it: a part of the upper mode slowed a little is named against it, slowed by a tenth it
// passes as a healthy part of the lower mode, slowed further it is named against that one. Both
// are reported: from where on it is always flagged, and the first slowdown flagged.
TEST(ReachTest, APartThatPassesForTheOtherModeInBetweenShowsTheGap) {
  const std::string key = "nccl-bw/allreduce_8589934592_busbw";
  ASSERT_EQ(Anatomize(key).direction, Direction::kHigher);
  FamilyModel f;
  f.family = key;
  f.direction = Direction::kHigher;
  f.modes = {Mode{200, 1, 200, 1, 40}, Mode{230, 1, 230, 1, 60}};
  f.limit = 5;
  f.samples = 100;
  f.members = {key};
  LearnedCriteria c;
  c.classes.push_back(ClassModel{"", 100, {f}, {}});
  const std::vector<Reach> reach = ReachOf(c);
  ASSERT_EQ(reach.size(), 1u);
  // Named against 230 from 5 spreads under it; against 200 from 5 under that.
  EXPECT_NEAR(reach[0].first, 5.0 / 230, 0.0006);
  EXPECT_NEAR(reach[0].slowdown, 1 - 195.0 / 230, 0.0006);
  EXPECT_EQ(reach[0].test, FindingTest::kFleet);
  EXPECT_EQ(RenderReach(reach).substr(RenderReach(reach).find('\n') + 1),
            "(unspecified)  nccl-bw    NVLink  1        15.2%         fleet  2.2%\n");
}

// A part whose metrics are all the class's families takes its node out of every mode once it is
// far enough off: the node is judged not of its class, which flags it too.
TEST(ReachTest, ANodeTakenForAnotherClassIsFlagged) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  const auto keys = [](int g) {
    return GemmTypes(g, {"fp16_tc_flops", "bf16_tc_flops", "tf32_tc_flops"});
  };
  const LearnedCriteria c = *Learn(Fleet(2000, keys, [&] { return normal(rng); }), LearnOptions{});
  FleetRow slow;
  slow.node = "n";
  for (const FamilyModel& f : c.classes[0].families) {
    for (const std::string& k : f.members) {
      slow.values.emplace_back(k, f.modes[0].centre * (k.ends_with(":0") ? 0.5 : 1));
    }
  }
  const std::vector<NodeFindings> judged = Judge(TableOfRows({slow}, "n"), c);
  ASSERT_EQ(judged[0].findings.size(), 1u);
  EXPECT_EQ(judged[0].findings[0].test, FindingTest::kClass);
  const Reach r = ReachOf(c).at(0);
  EXPECT_LT(r.slowdown, 0.05);
  EXPECT_TRUE(std::isnan(r.first) || r.first == r.slowdown);
}

// The row across benchmarks is that of the first part of the kind two benchmarks measure (here
// GPU 1: kernel launches are not measured on GPU 0).
TEST(ReachTest, TheRowAcrossBenchmarksIsOfAPartTheyAllMeasure) {
  std::mt19937_64 rng(10);
  std::normal_distribution<double> normal;
  const auto keys = [](int g) {
    std::vector<std::string> k = {fmt::format("gemm-flops/fp16_tc_flops:{}", g)};
    if (g > 0) k.push_back(fmt::format("kernel-launch/wall_overhead:{}", g));
    return k;
  };
  const LearnedCriteria c = *Learn(Fleet(2000, keys, [&] { return normal(rng); }), LearnOptions{});
  std::vector<std::string> rows;
  for (const Reach& r : ReachOf(c))
    rows.push_back(fmt::format("{}|{}|{}", r.benchmark, r.part, r.metrics));
  EXPECT_EQ(rows,
            (std::vector<std::string>{"gemm-flops|GPU 0|1", "kernel-launch|GPU 1|1", "|GPU 1|2"}));
}

// Criteria written by hand may list a key in two families, or a class twice: each key is judged
// once, and the class twice listed is judged by its first model, as the judge does.
TEST(ReachTest, AKeyOrAClassListedTwiceIsTakenOnce) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  LearnedCriteria c = *Learn(Fleet(2000, Gemm, [&] { return normal(rng); }), LearnOptions{});
  const double once = ReachOf(c).at(0).slowdown;
  FamilyModel twice = c.classes[0].families.at(0);
  twice.family = "gemm-flops/other_flops";
  c.classes[0].families.push_back(twice);
  ASSERT_EQ(ReachOf(c).size(), 1u);
  ClassModel again = c.classes[0];
  again.families[0].limit *= 10;
  c.classes.push_back(again);
  const std::vector<Reach> reach = ReachOf(c);
  ASSERT_EQ(reach.size(), 1u);
  EXPECT_DOUBLE_EQ(reach[0].slowdown, once);
}

TEST(ReachTest, RenderedAsAPercentWithItsTest) {
  const double none = std::nan("");
  const std::vector<Reach> reach = {
      {"8x A100", "", "HBM 0", 2, 0.0837, 0.0837, FindingTest::kComponent},
      {"8x A100", "mem-bw", "HBM 0", 1, 0.412, 0.412, FindingTest::kBalance},
      {"8x A100", "nccl-bw", "NVLink", 1, none, 0.022, FindingTest::kFleet}};
  EXPECT_EQ(RenderReach(reach),
            "HARDWARE  BENCHMARK  PART    METRICS  FLAGGED FROM   TEST       FIRST FLAGGED\n"
            "8x A100   (all)      HBM 0   2        8.4%           component  -\n"
            "8x A100   mem-bw     HBM 0   1        41.2%          balance    -\n"
            "8x A100   nccl-bw    NVLink  1        not up to 95%  fleet      2.2%\n");
  const Json j = ReachToJson(reach);
  EXPECT_EQ(j[1]["slowdown"].get<double>(), 0.412);
  EXPECT_EQ(j[0]["test"].get<std::string>(), "component");
  EXPECT_TRUE(j[2]["slowdown"].is_null());
  EXPECT_EQ(j[2]["first"].get<double>(), 0.022);
}

TEST(ReachTest, NoClassesNoReach) { EXPECT_TRUE(ReachOf(LearnedCriteria{}).empty()); }

}  // namespace
}  // namespace vigil::learned
