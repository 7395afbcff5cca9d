#include "vigil/eval/evaluation.h"

#include <gtest/gtest.h>

#include <string>

#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"
#include "vigil/learned/learn.h"

namespace vigil::eval {
namespace {

// A fleet's table as `vigil learn` reads it: its rows written as summary lines and read back.
FleetTable TableOf(const GeneratedFleet& g) {
  std::string text;
  for (const FleetRow& r : g.rows) text += FormatFleetRow(r);
  return *ParseFleetTable(text, "fleet.jsonl");
}

// The bar, pooled over three generated fleets of 2,000 nodes with 5% defective: for
// defects of 10% or more precision and recall of (node, component) at least 0.99; for 5% defects
// recall at least 0.90 at precision at least 0.95; F1 above SuperBench's production rule style.
TEST(EvaluationTest, LearnedCriteriaFindPlantedDefectsBetterThanSuperBenchStyle) {
  int big_planted = 0, big_found = 0, five_planted = 0, five_found = 0, false_findings = 0;
  int sb_found = 0, sb_false = 0, all_planted = 0, all_found = 0;
  for (uint64_t seed : {1, 2, 3}) {
    FleetGenOptions o;
    o.nodes = 2000;
    o.seed = seed;
    const GeneratedFleet g = *GenerateFleet(o);
    const FleetTable t = TableOf(g);
    Result<learned::LearnedCriteria> c = learned::Learn(t, learned::LearnOptions{});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_EQ(c->classes.size(), 2u);
    const Score s = ScoreFindings(FoundByLearned(t, learned::Judge(t, *c)), g.truth);
    const Score sb = ScoreFindings(FoundBySuperBenchStyle(t), g.truth);
    big_planted += s.Row(">=10%")->planted;
    big_found += s.Row(">=10%")->found;
    five_planted += s.Row("5%")->planted;
    five_found += s.Row("5%")->found;
    false_findings += s.false_findings;
    all_planted += s.Row("all")->planted;
    all_found += s.Row("all")->found;
    sb_found += sb.Row("all")->found;
    sb_false += sb.false_findings;
  }
  const double big_recall = static_cast<double>(big_found) / big_planted;
  const double five_recall = static_cast<double>(five_found) / five_planted;
  EXPECT_GE(big_recall, 0.99);
  EXPECT_GE(five_recall, 0.90);
  // Within the budget of false findings: 0.005 per healthy node, 6,000 nodes.
  EXPECT_LE(false_findings, 30);
  const auto f1 = [](double found, double planted, double wrong) {
    const double r = found / planted, p = found / (found + wrong);
    return 2 * r * p / (r + p);
  };
  EXPECT_GT(f1(all_found, all_planted, false_findings), f1(sb_found, all_planted, sb_false));
}

}  // namespace
}  // namespace vigil::eval
