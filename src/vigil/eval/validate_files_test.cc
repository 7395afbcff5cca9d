#include "vigil/eval/validate_files.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "vigil/core/mem_env.h"
#include "vigil/eval/fleet_gen.h"
#include "vigil/learned/learn_files.h"
#include "vigil/results/summary.h"

namespace vigil::eval {
namespace {

ValidateRequest Request(std::string criteria, std::string truth) {
  ValidateRequest r;
  r.data = {"/v/fleet.jsonl"};
  r.criteria = std::move(criteria);
  r.truth = std::move(truth);
  return r;
}

// `vigil learn` then `vigil validate --truth` on files in memory: every node judged, the planted
// defects scored for the learned criteria and for SuperBench's rule style.
TEST(ValidateFilesTest, JudgesTheFleetAndScoresItAgainstTheTruth) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDirectories("/v").ok());
  FleetGenOptions o;
  o.nodes = 200;
  o.second_class = 0;
  const GeneratedFleet fleet = *GenerateFleet(o);
  std::string lines;
  for (const FleetRow& r : fleet.rows) lines += FormatFleetRow(r);
  ASSERT_TRUE(env.WriteFileAtomic("/v/fleet.jsonl", lines).ok());
  ASSERT_TRUE(env.WriteFileAtomic("/v/truth.csv", FormatTruth(fleet.truth)).ok());
  learned::LearnRequest learn;
  learn.data = {"/v/fleet.jsonl"};
  learn.out = "/v/criteria.json";
  ASSERT_TRUE(learned::LearnFromFiles(learn, env).ok());

  const Result<Validation> v = ValidateFiles(Request("/v/criteria.json", "/v/truth.csv"), env);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->verdicts.size(), 200u);
  EXPECT_GT(v->defective, 0u);
  ASSERT_TRUE(v->learned.has_value());
  ASSERT_TRUE(v->superbench.has_value());
  EXPECT_FALSE(v->learned->rows.empty());

  const Result<Validation> without = ValidateFiles(Request("/v/criteria.json", ""), env);
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->learned.has_value());
  EXPECT_EQ(without->defective, v->defective);

  const Result<Validation> absent = ValidateFiles(Request("/v/absent.json", ""), env);
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil::eval
