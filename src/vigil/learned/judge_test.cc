#include "vigil/learned/judge.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/learn.h"
#include "vigil/results/anatomy.h"
#include "vigil/testing/healthy_fleet.h"

namespace vigil::learned {
namespace {

using eval::FleetGenOptions;
using eval::GeneratedFleet;
using eval::GenerateFleet;
using vigil::testing::HealthyA100Fleet;
using vigil::testing::TableOf;

// A Judgement made once judges each node's own table (how the fleet service judges uploads) as
// Judge judges the whole fleet.
TEST(JudgeTest, OneJudgementJudgesEachNodeAsJudgeDoes) {
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
TEST(JudgeTest, ComponentsOfOneNodeAreComparedWithEachOther) {
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

// A node that reports too few of a balanced family's parts to balance them (a GPU or more
// missing) has each of its values judged against the fleet by the family's fleet limit: a value
// between the balance's limit and the fleet's is no finding of either test.
TEST(JudgeTest, AFamilyTooFewToBalanceIsJudgedByTheFleetLimitAlone) {
  const GeneratedFleet g = HealthyA100Fleet(200, /*noisy_rate=*/0);
  const LearnedCriteria c = *Learn(TableOf(g), LearnOptions{});
  const FamilyModel* family = nullptr;
  for (const FamilyModel& f : c.classes.at(0).families) {
    if (f.balanced && f.direction == Direction::kHigher && f.balance_limit < f.limit &&
        f.family.rfind("gemm-flops/", 0) == 0) {
      family = &f;
      break;
    }
  }
  ASSERT_NE(family, nullptr) << "no balanced GEMM family whose balance limit is the lower";
  // GPUs 0-3 of the family only: fewer than kMinBalanceParts.
  FleetRow few = g.rows[0];
  std::erase_if(few.values, [&](const auto& kv) {
    const std::string& key = kv.first;
    return key.rfind(family->family + ":", 0) == 0 && key.back() >= '4' && key.back() <= '7';
  });
  const std::string judged = family->family + ":0";
  const auto value = std::ranges::find(few.values, judged, &std::pair<std::string, double>::first);
  ASSERT_NE(value, few.values.end());
  const double healthy = value->second;
  size_t fleet_findings = 0;
  for (double share = 1.0; share > 0.8; share -= 0.0025) {
    value->second = healthy * share;
    const NodeFindings nf = Judge(*ParseFleetTable(FormatFleetRow(few), "few.jsonl"), c)[0];
    for (const Finding& f : nf.findings) {
      if (f.metric != judged) continue;
      EXPECT_NE(f.test, FindingTest::kBalance) << "at " << share << " of its value";
      fleet_findings += f.test == FindingTest::kFleet;
    }
  }
  EXPECT_GT(fleet_findings, 0u);  // the fleet's test still judges it
}

// A node far from every mode of most of its families belongs to no class learned: one finding
// says so, rather than one per value.
TEST(JudgeTest, ANodeOfNoLearnedClassIsOneFinding) {
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

// A node is judged by its own class's criteria, by the only class's when there is one, and not at
// all (a critical "class" finding) when several classes are learned and none is its own.
TEST(JudgeTest, NodesAreJudgedByTheirOwnClass) {
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
TEST(JudgeTest, GpuHealthFaultsAreNamedAndItsRecordsAreNot) {
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

TEST(JudgeTest, FailedAndMissingBenchmarksAreOneFindingEach) {
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

}  // namespace
}  // namespace vigil::learned
