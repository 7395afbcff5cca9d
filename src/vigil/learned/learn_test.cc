#include "vigil/learned/learn.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>

#include "vigil/eval/fleet_gen.h"
#include "vigil/results/anatomy.h"

namespace vigil::learned {
namespace {

using eval::FleetGenOptions;
using eval::GeneratedFleet;
using eval::GenerateFleet;

// One hardware class, no planted defect and no benchmark missing.
GeneratedFleet HealthyA100Fleet(int64_t nodes, double noisy_rate) {
  FleetGenOptions o;
  o.nodes = nodes;
  o.defect_rate = 0;
  o.missing_rate = 0;
  o.noisy_rate = noisy_rate;
  o.second_class = 0;
  return *GenerateFleet(o);
}

FleetTable TableOf(const GeneratedFleet& g) {
  std::string text;
  for (const FleetRow& r : g.rows) text += FormatFleetRow(r);
  return *ParseFleetTable(text, "fleet.jsonl");
}

// A Judgement made once judges each node's own table (how the fleet service judges uploads) as
// Judge judges the whole fleet.
TEST(LearnTest, OneJudgementJudgesEachNodeAsJudgeDoes) {
  FleetGenOptions o;
  o.nodes = 300;
  o.second_class = 0;
  o.missing_rate = 0;
  o.seed = 4;
  const GeneratedFleet g = *GenerateFleet(o);
  const FleetTable t = TableOf(g);
  const LearnedCriteria c = *Learn(t, LearnOptions{});
  const std::vector<NodeFindings> whole = Judge(t, c);
  const Judgement judgement(t.metrics(), c);
  size_t judged = 0, defective = 0;
  for (size_t i = 0; i < t.node_count(); ++i) {
    const FleetTable row = TableOfRows({t.Row(i)}, "row");
    if (row.metrics() != t.metrics()) continue;  // a failed benchmark left its columns out
    const NodeFindings one = judgement.Judge(row, 1).at(0);
    ASSERT_EQ(one.defective, whole[i].defective) << t.node(i);
    ASSERT_EQ(one.findings.size(), whole[i].findings.size()) << t.node(i);
    for (size_t k = 0; k < one.findings.size(); ++k) {
      EXPECT_EQ(one.findings[k].metric, whole[i].findings[k].metric);
      EXPECT_EQ(one.findings[k].component, whole[i].findings[k].component);
    }
    ++judged;
    defective += one.defective;
  }
  EXPECT_GE(judged, 280u);
  EXPECT_GT(defective, 0u);  // the generator plants defects on 5% of nodes
}

// Balance inside one node finds a slow GPU with no fleet history at all: train on healthy nodes
// and judge a node whose GPU 3 is 5% slow on every GEMM type.
TEST(LearnTest, ComponentsOfOneNodeAreComparedWithEachOther) {
  const GeneratedFleet g = HealthyA100Fleet(200, /*noisy_rate=*/0);
  const FleetTable train = TableOf(g);
  const LearnedCriteria c = *Learn(train, LearnOptions{});
  FleetRow bad = g.rows[0];
  for (auto& [key, value] : bad.values) {
    if (key.rfind("gemm-flops/", 0) == 0 && key.ends_with(":3")) value *= 0.95;
  }
  const FleetTable one = *ParseFleetTable(FormatFleetRow(bad), "one.jsonl");
  const std::vector<NodeFindings> v = Judge(one, c);
  ASSERT_TRUE(v[0].defective);
  for (const Finding& f : v[0].findings) EXPECT_EQ(ComponentName(f.component), "GPU 3") << f.metric;
  const FleetTable healthy = *ParseFleetTable(FormatFleetRow(g.rows[1]), "ok.jsonl");
  EXPECT_FALSE(Judge(healthy, c)[0].defective);
}

// A fleet of `nodes` 8-GPU nodes with one GEMM family: each GPU's value is `value(node, gpu)`.
FleetTable GemmFleet(int nodes, const std::function<double(int, int)>& value) {
  std::vector<FleetRow> rows;
  for (int n = 0; n < nodes; ++n) {
    FleetRow& r = rows.emplace_back();
    r.node = fmt::format("n{:04}", n);
    for (int g = 0; g < 8; ++g) {
      r.values.emplace_back(fmt::format("gemm-flops/fp16_tc_flops:{}", g), value(n, g));
    }
  }
  return TableOfRows(rows, "fleet.jsonl");
}

const FamilyModel& Family(const LearnedCriteria& c, std::string_view family) {
  for (const FamilyModel& f : c.classes.at(0).families) {
    if (f.family == family) return f;
  }
  throw std::runtime_error("no such family");
}

// The limits come from the tail of the fleet's own values: heavy-tailed noise (a Student t of 3
// degrees of freedom) gets a far wider limit than normal noise of the same robust spread, and
// neither fleet of healthy nodes is flagged beyond its budget.
TEST(LearnTest, LimitsComeFromTheTailOfTheFleetsOwnValues) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0, 1);
  std::student_t_distribution<double> heavy(3);
  const auto fleet = [&](bool heavy_tailed) {
    return GemmFleet(2000, [&](int, int) {
      return 1000 * (1 + 0.005 * (heavy_tailed ? heavy(rng) : normal(rng)));
    });
  };
  const FleetTable light_fleet = fleet(false), heavy_fleet = fleet(true);
  const LearnedCriteria light = *Learn(light_fleet, LearnOptions{});
  const LearnedCriteria tailed = *Learn(heavy_fleet, LearnOptions{});
  const FamilyModel& l = Family(light, "gemm-flops/fp16_tc_flops");
  const FamilyModel& h = Family(tailed, "gemm-flops/fp16_tc_flops");
  EXPECT_GT(l.limit, 3);  // the normal's for 0.005 over 16 tests a node is 3.4
  EXPECT_LT(l.limit, 5);
  EXPECT_GT(h.limit, 2 * l.limit);
  for (const auto& [t, c] : {std::pair{&light_fleet, &light}, std::pair{&heavy_fleet, &tailed}}) {
    size_t flagged = 0;
    for (const NodeFindings& nf : Judge(*t, *c)) flagged += nf.defective;
    EXPECT_LE(flagged, 20u);  // 2,000 nodes at 0.005 expect 10
  }
  // A GPU 10% slow is still found against the normal fleet.
  FleetTable one = GemmFleet(1, [](int, int g) { return g == 3 ? 900.0 : 1000.0; });
  const NodeFindings slow = Judge(one, light)[0];
  ASSERT_TRUE(slow.defective);
  EXPECT_EQ(ComponentName(slow.findings[0].component), "GPU 3");
}

// A fleet of `nodes` 8-GPU nodes with heavy-tailed noise (Student t, 3 degrees of freedom, 0.4%)
// on the keys `keys(gpu)` of each GPU; `slow(node, key)` is the share a key is worse by.
FleetTable HeavyTailedFleet(int nodes, const std::function<std::vector<std::string>(int)>& keys,
                            const std::function<double(int, const std::string&)>& slow,
                            uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::student_t_distribution<double> t3(3);
  std::vector<FleetRow> rows;
  for (int n = 0; n < nodes; ++n) {
    FleetRow& r = rows.emplace_back();
    r.node = fmt::format("n{:04}", n);
    for (int g = 0; g < 8; ++g) {
      for (const std::string& key : keys(g)) {
        const double worse = slow(n, key);
        const double v = 1000 * (1 + 0.004 * t3(rng));
        r.values.emplace_back(
            key, key.find("_time") != std::string::npos ? v * (1 + worse) : v * (1 - worse));
      }
    }
  }
  return TableOfRows(rows, "fleet.jsonl");
}

std::vector<const ComponentModel*> Pools(const LearnedCriteria& c, std::string_view benchmark) {
  std::vector<const ComponentModel*> out;
  for (const ComponentModel& m : c.classes.at(0).components) {
    if (m.benchmark == benchmark) out.push_back(&m);
  }
  return out;
}

// HBM is measured by mem-bw (device to device) and gpu-copy-bw (a GPU's copy within its own
// memory), one metric each: its two metrics are pooled across the benchmarks. Under heavy-tailed
// noise a part 5% slow on both is found by the pool, which needs both to agree, and by neither
// metric alone, whose limit lies far out.
TEST(LearnTest, APartThatTwoBenchmarksMeasureIsPooledAcrossThem) {
  const auto keys = [](int g) {
    return std::vector<std::string>{fmt::format("mem-bw/d2d_bw:{}", g),
                                    fmt::format("gpu-copy-bw/gpu{0}_to_gpu{0}_by_sm_bw", g)};
  };
  const FleetTable fleet = HeavyTailedFleet(
      2000, keys, [](int, const std::string&) { return 0.0; }, 3);
  const LearnedCriteria c = *Learn(fleet, LearnOptions{});
  const std::vector<const ComponentModel*> hbm = Pools(c, "gpu-copy-bw+mem-bw");
  ASSERT_EQ(hbm.size(), 2u);  // the mean and the one without the worst metric
  EXPECT_EQ(hbm[0]->part, "HBM");
  size_t flagged = 0;
  for (const NodeFindings& nf : Judge(fleet, c)) flagged += nf.defective;
  EXPECT_LE(flagged, 20u);  // 2,000 nodes at 0.005 expect 10

  const FleetTable slow = HeavyTailedFleet(
      20, keys, [](int, const std::string& key) { return key.find('3') != key.npos ? 0.05 : 0.0; },
      4);
  size_t found = 0, others = 0;  // of 20 slow HBMs; of 140 healthy ones
  for (const NodeFindings& nf : Judge(slow, c)) {
    for (const Finding& f : nf.findings) {
      found += ComponentName(f.component) == "HBM 3" && FindingTestName(f.test) == "component" &&
               f.metric == "gpu-copy-bw+mem-bw/*";
      others += ComponentName(f.component) != "HBM 3";
    }
  }
  EXPECT_GE(found, 18u);
  EXPECT_LE(others, 1u);
}

// A component of two metrics (a kernel launch's event and wall time) is also judged without its
// worse one: one metric's wild value then cannot make it look slow, so that test's limit stays
// near, while the mean's lies far out under heavy tails.
TEST(LearnTest, AComponentOfFewMetricsIsAlsoJudgedWithoutItsWorst) {
  const auto keys = [](int g) {
    return std::vector<std::string>{fmt::format("kernel-launch/event_time:{}", g),
                                    fmt::format("kernel-launch/wall_time:{}", g)};
  };
  const FleetTable fleet = HeavyTailedFleet(
      2000, keys, [](int, const std::string&) { return 0.0; }, 5);
  const LearnedCriteria c = *Learn(fleet, LearnOptions{});
  const std::vector<const ComponentModel*> launch = Pools(c, "kernel-launch");
  ASSERT_EQ(launch.size(), 2u);
  EXPECT_FALSE(launch[0]->but_worst);
  EXPECT_TRUE(launch[1]->but_worst);
  EXPECT_LT(launch[1]->limit * launch[1]->spread, launch[0]->limit * launch[0]->spread / 2);
  const LearnedCriteria back = *CriteriaFromJson(DumpJson(CriteriaToJson(c)), "c.json");
  EXPECT_TRUE(Pools(back, "kernel-launch")[1]->but_worst);
  const FleetTable slow = HeavyTailedFleet(
      20, keys, [](int, const std::string& key) { return key.ends_with(":6") ? 0.05 : 0.0; }, 6);
  size_t found = 0;
  for (const NodeFindings& nf : Judge(slow, c)) {
    for (const Finding& f : nf.findings)
      found += ComponentName(f.component) == "GPU 6" && FindingTestName(f.test) == "component";
  }
  EXPECT_GE(found, 18u);
}

// A part's pool spans benchmarks: judging a node that ran only some of them keeps it only when
// it ran all.
TEST(LearnTest, APartsPoolIsKeptOnlyWithEveryBenchmarkItPools) {
  ComponentModel hbm;
  hbm.benchmark = "gpu-copy-bw+mem-bw";
  hbm.part = "HBM";
  ComponentModel launch;
  launch.benchmark = "kernel-launch";
  LearnedCriteria c;
  c.classes.push_back(ClassModel{"", 10, {}, {hbm, launch}});
  EXPECT_EQ(RestrictToBenchmarks(c, {"mem-bw", "gpu-copy-bw"}).classes[0].components.size(), 1u);
  EXPECT_EQ(RestrictToBenchmarks(c, {"mem-bw", "kernel-launch"}).classes[0].components.size(), 1u);
  EXPECT_EQ(RestrictToBenchmarks(c, {"gpu-copy-bw", "mem-bw", "kernel-launch"})
                .classes[0]
                .components.size(),
            2u);
}

// The parts of one family may differ by design: on a node whose GPUs are joined two by two by
// NVLink bridges, a bridged pair copies at 100 GB/s and the others at 20 over PCIe. Each member
// then gets a factor, and its values are judged divided by it: the healthy fleet is not flagged,
// and a bridged pair 10% slow is found, against its own kind.
TEST(LearnTest, PartsThatDifferByDesignAreJudgedAgainstTheirOwnLevel) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0, 0.005);
  const auto bridged = [](int a, int b) { return a / 2 == b / 2; };
  const auto fleet = [&](int nodes, double slow_pair) {
    std::vector<FleetRow> rows;
    for (int n = 0; n < nodes; ++n) {
      FleetRow& r = rows.emplace_back();
      r.node = fmt::format("n{:04}", n);
      for (int a = 0; a < 8; ++a) {
        for (int b = 0; b < 8; ++b) {
          if (a == b) continue;
          const double worse = a + b == 1 ? slow_pair : 0;  // the pair 0-1, bridged
          r.values.emplace_back(fmt::format("gpu-copy-bw/gpu{}_to_gpu{}_write_by_sm_bw", a, b),
                                (bridged(a, b) ? 100 : 20) * (1 + noise(rng)) * (1 - worse));
        }
      }
    }
    return TableOfRows(rows, "fleet.jsonl");
  };
  const FleetTable healthy = fleet(500, 0);
  const LearnedCriteria c = *Learn(healthy, LearnOptions{});
  const FamilyModel& f = Family(c, "gpu-copy-bw/gpu{i}_to_gpu{j}_write_by_sm_bw");
  ASSERT_EQ(f.members.size(), 56u);
  ASSERT_EQ(f.factors.size(), 56u);
  EXPECT_NEAR(MemberFactor(f, "gpu-copy-bw/gpu1_to_gpu0_write_by_sm_bw") /
                  MemberFactor(f, "gpu-copy-bw/gpu1_to_gpu2_write_by_sm_bw"),
              5, 0.05);
  size_t flagged = 0;
  for (const NodeFindings& nf : Judge(healthy, c)) flagged += nf.defective;
  EXPECT_LE(flagged, 5u);
  const LearnedCriteria back = *CriteriaFromJson(DumpJson(CriteriaToJson(c)), "c.json");
  EXPECT_EQ(Family(back, f.family).factors, f.factors);
  for (const NodeFindings& nf : Judge(fleet(10, 0.1), back)) {
    ASSERT_TRUE(nf.defective);
    for (const Finding& x : nf.findings)
      EXPECT_EQ(ComponentName(x.component), "NVLink 0-1") << x.metric;
  }
}

// Values printed rounded (SuperBench prints bandwidths to two decimals) have a spread floor of
// one printed step: a fleet whose values are all 0.05 or 0.06 does not flag a node for 0.04.
TEST(LearnTest, RoundedValuesAreJudgedInTheirPrintedSteps) {
  std::vector<FleetRow> rows;
  for (int n = 0; n < 500; ++n) {
    rows.push_back(FleetRow{
        fmt::format("n{}", n), {{"nccl-bw/allreduce_1024_busbw", n % 10 == 0 ? 0.06 : 0.05}}, ""});
  }
  const LearnedCriteria c = *Learn(TableOfRows(rows, "fleet.jsonl"), LearnOptions{});
  const FamilyModel& f = Family(c, "nccl-bw/allreduce_1024_busbw");
  EXPECT_DOUBLE_EQ(f.quantum, 0.01);
  const auto judge = [&](double v) {
    return Judge(TableOfRows({FleetRow{"x", {{"nccl-bw/allreduce_1024_busbw", v}}, ""}}, "x"),
                 c)[0];
  };
  EXPECT_FALSE(judge(0.04).defective);
  EXPECT_TRUE(judge(0.01).defective);
  // The same when nearly every node prints one figure: a rounded measurement keeps its step.
  for (size_t n = 0; n < rows.size(); ++n) rows[n].values[0].second = n == 7 ? 0.09 : 0.10;
  EXPECT_DOUBLE_EQ(Family(*Learn(TableOfRows(rows, "fleet.jsonl"), LearnOptions{}),
                          "nccl-bw/allreduce_1024_busbw")
                       .quantum,
                   0.01);
  // Whole numbers that nearly every node shares are a state: one step from it is a finding (the
  // PCIe generation test of GpuHealthFaultsAreNamedAndItsRecordsAreNot).
  for (FleetRow& r : rows) r.values[0] = {"gpu-stress/pcie_gen:0", 5};
  rows[3].values[0].second = 4;
  EXPECT_EQ(Family(*Learn(TableOfRows(rows, "fleet.jsonl"), LearnOptions{}), "gpu-stress/pcie_gen")
                .quantum,
            0);
}

// A family whose healthy nodes sit in two places (30% on another firmware, 3% faster) is learned
// as two modes: a node of either is healthy, and a GPU 3% slow within the faster mode is found.
TEST(LearnTest, TwoHealthyModesAreLearnedAsTwo) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.002);
  const FleetTable t = GemmFleet(
      1000, [&](int n, int) { return 1000 * (n % 10 < 3 ? 1.03 : 1.0) * (1 + noise(rng)); });
  const LearnedCriteria c = *Learn(t, LearnOptions{});
  const FamilyModel& f = Family(c, "gemm-flops/fp16_tc_flops");
  ASSERT_EQ(f.modes.size(), 2u);
  EXPECT_NEAR(f.modes[0].centre, 1000, 1);
  EXPECT_NEAR(f.modes[1].centre, 1030, 1);
  EXPECT_EQ(f.modes[0].nodes, 700u);
  size_t flagged = 0;
  for (const NodeFindings& nf : Judge(t, c)) flagged += nf.defective;
  EXPECT_LE(flagged, 5u);
  const FleetTable slow = GemmFleet(1, [](int, int g) { return g == 5 ? 1000.0 : 1030.0; });
  const NodeFindings nf = Judge(slow, c)[0];
  ASSERT_TRUE(nf.defective);
  EXPECT_EQ(ComponentName(nf.findings[0].component), "GPU 5");
  // One mode of any shape stays one.
  EXPECT_EQ(Family(*Learn(GemmFleet(1000, [&](int, int) { return 1000 * (1 + noise(rng)); }),
                          LearnOptions{}),
                   "gemm-flops/fp16_tc_flops")
                .modes.size(),
            1u);
}

// A node far from every mode of most of its families belongs to no class learned: one finding
// says so, rather than one per value.
TEST(LearnTest, ANodeOfNoLearnedClassIsOneFinding) {
  const GeneratedFleet g = HealthyA100Fleet(200, /*noisy_rate=*/0);
  const LearnedCriteria c = *Learn(TableOf(g), LearnOptions{});
  FleetRow stranger = g.rows[0];
  for (auto& [key, value] : stranger.values) {
    if (!key.ends_with("return_code")) value *= 3;
  }
  const NodeFindings nf = Judge(*ParseFleetTable(FormatFleetRow(stranger), "one.jsonl"), c)[0];
  ASSERT_TRUE(nf.defective);
  ASSERT_EQ(nf.findings.size(), 1u);
  EXPECT_EQ(FindingTestName(nf.findings[0].test), "class");
  EXPECT_EQ(ComponentName(nf.findings[0].component), "node");
}

// One node's verdict: unjudged by the rules alone when they find nothing, healthy by criteria that
// find nothing, defective when either finds something; the prepared and the plain criteria agree.
TEST(JudgeNodeTest, TheVerdictSaysWhatJudgedTheNode) {
  const auto one = [](double missing) {
    return TableOfRows({FleetRow{"n1", {{"gpu-presence/missing:2", missing}}, "8x A"}}, "t");
  };
  const NodeJudgement alone = JudgeNode(one(0), static_cast<const LearnedCriteria*>(nullptr));
  EXPECT_EQ(alone.verdict, Verdict::kUnjudged);
  EXPECT_TRUE(alone.findings.findings.empty());
  const NodeJudgement fault = JudgeNode(one(1), static_cast<const Judgement*>(nullptr));
  EXPECT_EQ(fault.verdict, Verdict::kDefective);
  ASSERT_EQ(fault.findings.findings.size(), 1u);
  EXPECT_EQ(fault.findings.findings[0].component, (ComponentId{"GPU", ComponentIndex{2, {}}}));
  EXPECT_EQ(fault.findings.findings[0].test, FindingTest::kHealth);

  LearnedCriteria c;
  c.classes.emplace_back().hardware = "8x A";
  EXPECT_EQ(JudgeNode(one(0), &c).verdict, Verdict::kHealthy);
  const FleetTable faulty = one(1);
  const Judgement prepared(faulty.metrics(), c);
  const NodeJudgement by_prepared = JudgeNode(faulty, &prepared);
  EXPECT_EQ(by_prepared.verdict, Verdict::kDefective);
  EXPECT_EQ(by_prepared.findings.findings.size(), JudgeNode(faulty, &c).findings.findings.size());
}

TEST(FindingTestNameTest, NamesParseBack) {
  for (const FindingTest t : {FindingTest::kFleet, FindingTest::kBalance, FindingTest::kComponent,
                              FindingTest::kReturnCode, FindingTest::kMissing, FindingTest::kClass,
                              FindingTest::kHealth}) {
    EXPECT_EQ(*ParseFindingTest(FindingTestName(t)), t) << FindingTestName(t);
  }
  EXPECT_EQ(FindingTestName(FindingTest::kReturnCode), "return_code");
  EXPECT_EQ(ParseFindingTest("Fleet").status().message(),
            "expected fleet, balance, component, return_code, missing, class or health, got "
            "\"Fleet\"");
}

TEST(LearnTest, CriteriaRoundTripAndVersionCheck) {
  FleetGenOptions o;
  o.nodes = 100;
  const GeneratedFleet g = *GenerateFleet(o);
  const FleetTable t = TableOf(g);
  const LearnedCriteria c = *Learn(t, LearnOptions{});
  const std::string text = DumpJson(CriteriaToJson(c));
  Result<LearnedCriteria> back = CriteriaFromJson(text, "c.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DumpJson(CriteriaToJson(*back)), text);
  // Same verdicts from the file as from memory, for any thread count.
  const auto a = Judge(t, c, 1);
  const auto b = Judge(t, *back, 3);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].findings.size(), b[i].findings.size());

  // Whatever the budget, what Learn writes reads back (a tiny one: limits of 1e100 sigmas).
  LearnOptions tiny;
  tiny.budget = 1e-100;
  const std::string generous = DumpJson(CriteriaToJson(*Learn(t, tiny)));
  ASSERT_TRUE(CriteriaFromJson(generous, "c.json").ok())
      << CriteriaFromJson(generous, "c.json").status().ToString();

  Result<LearnedCriteria> other = CriteriaFromJson("{\"schema\": \"vigil.criteria/9\"}", "c.json");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message().rfind("c.json: criteria of schema \"vigil.criteria/9\"", 0),
            0u);
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/1\"}", "c.json").ok());
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/2\"}", "c.json").ok());
  EXPECT_FALSE(CriteriaFromJson("[]", "c.json").ok());
  EXPECT_FALSE(CriteriaFromJson("{\"schema\": \"vigil.criteria/3\", \"budget\": \"x\","
                                " \"resolution\": 0, \"classes\": []}",
                                "c.json")
                   .ok());
}

// A node is judged by its own class's criteria, by the only class's when there is one, and not at
// all (a critical "class" finding) when several classes are learned and none is its own.
TEST(LearnTest, NodesAreJudgedByTheirOwnClass) {
  FleetGenOptions o;
  o.nodes = 100;
  o.defect_rate = 0;
  const GeneratedFleet g = *GenerateFleet(o);
  const LearnedCriteria two = *Learn(TableOf(g), LearnOptions{});
  ASSERT_EQ(two.classes.size(), 2u);
  for (const ClassModel& cm : two.classes) EXPECT_EQ(ClassFor(two, cm.hardware), &cm);
  EXPECT_EQ(ClassFor(two, "4xMI300X"), nullptr);
  LearnedCriteria one = two;
  one.classes.resize(1);
  EXPECT_EQ(ClassFor(one, "4xMI300X"), &one.classes[0]);
  EXPECT_EQ(ClassFor(LearnedCriteria{}, "4xMI300X"), nullptr);

  FleetRow stranger = g.rows[0];
  stranger.hardware = "4xMI300X";
  const std::vector<NodeFindings> v =
      Judge(*ParseFleetTable(FormatFleetRow(stranger), "one.jsonl"), two);
  ASSERT_TRUE(v[0].defective);
  ASSERT_EQ(v[0].findings.size(), 1u);
  EXPECT_EQ(FindingTestName(v[0].findings[0].test), "class");
  EXPECT_EQ(v[0].findings[0].metric, "4xMI300X");
}

// gpu-health's readings of a fleet: a GPU with an uncorrectable error since the driver loaded,
// or a row remap pending, is named with a critical "health" finding even though nothing in the
// fleet's distribution could learn it (every other GPU reads 0); a link at half width, or one a
// generation slower than its peers' under load, is named by the fleet; lifetime counts of corrected
// errors, power and an idle link's generation, however they vary, are never findings.
TEST(LearnTest, GpuHealthFaultsAreNamedAndItsRecordsAreNot) {
  std::vector<FleetRow> rows;
  for (int n = 0; n < 40; ++n) {
    FleetRow& r = rows.emplace_back();
    r.node = "n" + std::to_string(n);
    r.hardware = "8xH100";
    for (int g = 0; g < 8; ++g) {
      const auto put = [&](const char* metric, double v) {
        r.values.emplace_back("gpu-health/" + std::string(metric) + ":" + std::to_string(g), v);
      };
      const int k = n * 8 + g;
      put("ecc_uncorrected_volatile", 0);
      put("row_remap_pending", 0);
      put("throttle_hw_slowdown", 0);
      put("ecc_corrected_aggregate", k % 7 == 0 ? 40 + k % 13 : 0);  // a few GPUs have many
      put("pcie_gen", k % 5 == 0 ? 5 : 1);  // idle links trained down, some not
      put("pcie_width", 16);
      put("power_w", 70 + k % 9 + (k == 77 ? 200 : 0));
      put("temperature_c", 35 + k % 6);
      // Under gpu-stress's load every link runs at the generation it trained to.
      r.values.emplace_back("gpu-stress/pcie_gen:" + std::to_string(g), 5);
    }
  }
  std::string text;
  for (const FleetRow& r : rows) text += FormatFleetRow(r);
  const LearnedCriteria c = *Learn(*ParseFleetTable(text, "fleet.jsonl"), LearnOptions{});
  for (const FamilyModel& f : c.classes[0].families) {
    EXPECT_NE(f.direction, Direction::kInfo) << f.family;  // nothing learned for records
  }
  const auto judge = [&](FleetRow row, const std::string& key, double v) {
    for (auto& [k, value] : row.values) {
      if (k == key) value = v;
    }
    return Judge(*ParseFleetTable(FormatFleetRow(row), "one.jsonl"), c)[0];
  };
  for (const char* key : {"gpu-health/ecc_uncorrected_volatile:2", "gpu-health/row_remap_pending:2",
                          "gpu-health/throttle_hw_slowdown:2"}) {
    const NodeFindings nf = judge(rows[3], key, 1);
    ASSERT_TRUE(nf.defective) << key;
    ASSERT_EQ(nf.findings.size(), 1u) << key;
    EXPECT_EQ(ComponentName(nf.findings[0].component), "GPU 2");
    EXPECT_EQ(FindingTestName(nf.findings[0].test), "health");
    EXPECT_EQ(nf.findings[0].severity, Severity::kCritical);
  }
  const NodeFindings narrow = judge(rows[3], "gpu-health/pcie_width:5", 8);
  ASSERT_TRUE(narrow.defective);
  EXPECT_EQ(ComponentName(narrow.findings[0].component), "GPU 5");
  EXPECT_EQ(narrow.findings[0].severity, Severity::kCritical);
  const NodeFindings slow_link = judge(rows[3], "gpu-stress/pcie_gen:6", 4);  // trained to Gen4
  ASSERT_TRUE(slow_link.defective);
  EXPECT_EQ(ComponentName(slow_link.findings[0].component), "GPU 6");
  EXPECT_EQ(slow_link.findings[0].severity, Severity::kMajor);  // 20% below its peers' 5
  // Every node of the fleet itself is healthy, the ones with many corrected errors, the GPU
  // drawing 200 W more and the links at generation 5 among those at 1 included.
  const std::vector<NodeFindings> all = Judge(*ParseFleetTable(text, "fleet.jsonl"), c);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_FALSE(all[i].defective) << rows[i].node << ": " << all[i].findings[0].metric;
  }
  EXPECT_FALSE(judge(rows[3], "gpu-health/ecc_corrected_aggregate:1", 5000).defective);
  EXPECT_TRUE(judge(rows[3], "gpu-health/temperature_c:1", 90).defective);  // runs hot
  // A record is not expected either: criteria written by hand with one do not miss it.
  LearnedCriteria by_hand = c;
  FamilyModel& power = by_hand.classes[0].families.emplace_back();
  power.family = "gpu-health/power_w";
  power.direction = Direction::kInfo;
  power.members = {"gpu-health/power_w:0", "gpu-health/power_w:9"};
  EXPECT_FALSE(Judge(*ParseFleetTable(FormatFleetRow(rows[3]), "one.jsonl"), by_hand)[0].defective);
}

TEST(LearnTest, TooFewNodesInAClassIsAnError) {
  FleetGenOptions o;
  o.nodes = 3;
  const FleetTable t = TableOf(*GenerateFleet(o));
  Result<LearnedCriteria> c = Learn(t, LearnOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("fewer than the 5 needed"), std::string::npos);
}

// With somewhere to report them, classes too small to learn from are left out and the others
// learned; only a fleet with nothing to learn from fails.
TEST(LearnTest, ClassesTooSmallAreLeftOutWhenTheCallerTakesThem) {
  const GeneratedFleet g = HealthyA100Fleet(20, FleetGenOptions{}.noisy_rate);
  std::vector<FleetRow> rows = g.rows;
  FleetRow lost = rows[4];
  lost.node = "lost-a-gpu";
  lost.hardware = "7x " + lost.hardware;
  rows.push_back(lost);
  const FleetTable t = TableOfRows(rows, "fleet");
  ASSERT_FALSE(Learn(t, LearnOptions{}).ok());
  std::vector<LeftOutClass> left_out;
  Result<LearnedCriteria> c = Learn(t, LearnOptions{}, &left_out);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->classes.size(), 1u);
  EXPECT_EQ(c->classes[0].nodes, 20u);
  ASSERT_EQ(left_out.size(), 1u);
  EXPECT_EQ(left_out[0].hardware, lost.hardware);
  EXPECT_EQ(left_out[0].nodes, std::vector<std::string>{"lost-a-gpu"});
  EXPECT_EQ(left_out[0].reason, "1 node, fewer than the 5 needed to learn from");

  left_out.clear();
  Result<LearnedCriteria> none = Learn(TableOfRows({lost}, "one"), LearnOptions{}, &left_out);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("no hardware class has the 5 nodes needed to learn "
                                         "from: \"7x "),
            std::string::npos)
      << none.status().message();
}

TEST(LearnTest, FailedAndMissingBenchmarksAreOneFindingEach) {
  const GeneratedFleet g = HealthyA100Fleet(100, FleetGenOptions{}.noisy_rate);
  const LearnedCriteria c = *Learn(TableOf(g), LearnOptions{});
  FleetRow failed = g.rows[0];
  std::erase_if(failed.values, [](const auto& kv) { return kv.first.rfind("mem-bw/", 0) == 0; });
  FleetRow failed_rc = failed;
  failed_rc.values.emplace_back("mem-bw/return_code", 1);
  for (const FleetRow* r : {&failed, &failed_rc}) {
    const FleetTable one = *ParseFleetTable(FormatFleetRow(*r), "one.jsonl");
    const std::vector<NodeFindings> v = Judge(one, c);
    ASSERT_EQ(v[0].findings.size(), 1u);
    EXPECT_EQ(ComponentName(v[0].findings[0].component), "mem-bw");
    EXPECT_EQ(FindingTestName(v[0].findings[0].test), r == &failed ? "missing" : "return_code");
    EXPECT_EQ(v[0].findings[0].severity, Severity::kCritical);
  }
  // A benchmark that failed on one component only (it measured the others) names that one too.
  FleetRow partial = g.rows[0];
  std::erase_if(partial.values, [](const auto& kv) {
    return kv.first.rfind("mem-bw/", 0) == 0 && kv.first.ends_with(":2");
  });
  for (auto& [key, value] : partial.values) {
    if (key == "mem-bw/return_code") value = 1;
  }
  const NodeFindings nf = Judge(*ParseFleetTable(FormatFleetRow(partial), "one.jsonl"), c)[0];
  ASSERT_TRUE(nf.defective);
  std::set<std::string> named;
  for (const Finding& f : nf.findings)
    named.insert(ComponentName(f.component) + " " + std::string(FindingTestName(f.test)));
  EXPECT_TRUE(named.contains("mem-bw return_code"));
  EXPECT_TRUE(named.contains("PCIe 2 missing"));
  for (const std::string& n : named)
    EXPECT_TRUE(n.find(" 2 ") != std::string::npos || n.starts_with("mem-bw")) << n;
}

// A criteria file's numbers keep to what `vigil learn` writes: nodes and samples are whole counts
// (a negative one wrapped to 2^64 as a size_t), spreads positive, everything finite.
TEST(LearnTest, CriteriaNumbersOutsideTheirRangesAreNamed) {
  FleetGenOptions o;
  o.nodes = 60;
  const Json good = CriteriaToJson(*Learn(TableOf(*GenerateFleet(o)), LearnOptions{}));
  const std::string family = good["classes"][0]["families"][0]["family"];
  const std::string hardware = good["classes"][0]["hardware"];
  struct Case {
    std::string pointer;
    Json value;
    std::string message;
  };
  const Case cases[] = {
      {"/budget", 0, "c.json: budget: 0 is outside (0, 1]"},
      {"/resolution", 2, "c.json: resolution: 2 is outside [0, 1]"},
      {"/classes/0/nodes", -1,
       "c.json: class \"" + hardware + "\": nodes: -1 is outside [0, 1099511627776]"},
      {"/classes/0/nodes", 2.5,
       "c.json: class \"" + hardware + "\": nodes: expected a whole number"},
      {"/classes/0/families/0/modes/0/spread", 0,
       "c.json: family " + family + ": spread: 0 is outside (0, 1e+100]"},
      {"/classes/0/families/0/modes/0/centre", -1e300,
       "c.json: family " + family + ": centre: -1e+300 is outside [-1e+100, 1e+100]"},
      {"/classes/0/families/0/modes", Json::array(), "c.json: family " + family + ": modes: none"},
      {"/classes/0/families/0/limit", -1,
       "c.json: family " + family + ": limit: -1 is outside [0, 1e+100]"},
      {"/classes/0/families/0/samples", "7",
       "c.json: family " + family + ": samples: expected a number"},
  };
  for (const Case& c : cases) {
    Json j = good;
    j[Json::json_pointer(c.pointer)] = c.value;
    Result<LearnedCriteria> r = CriteriaFromJson(DumpJson(j), "c.json");
    ASSERT_FALSE(r.ok()) << c.pointer;
    EXPECT_EQ(r.status().message(), c.message);
  }
}

}  // namespace
}  // namespace vigil::learned
