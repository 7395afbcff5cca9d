#include "vigil/learned/learn_files.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "vigil/core/mem_env.h"
#include "vigil/learned/criteria.h"
#include "vigil/results/summary.h"
#include "vigil/testing/healthy_fleet.h"

namespace vigil::learned {
namespace {

// `nodes` healthy nodes' summary lines, planted in `env` at `path`.
void PlantFleet(MemEnv& env, const std::string& path, int nodes) {
  std::string text;
  for (const FleetRow& r : vigil::testing::HealthyA100Fleet(nodes, /*noisy_rate=*/0).rows) {
    text += FormatFleetRow(r);
  }
  ASSERT_TRUE(env.WriteFileAtomic(path, text).ok());
}

LearnRequest Request(std::vector<std::string> data, std::string out) {
  LearnRequest r;
  r.data = std::move(data);
  r.out = std::move(out);
  return r;
}

// `vigil learn` on files in memory: two files are one training set, and the criteria written
// read back as the ones returned.
TEST(LearnFromFilesTest, LearnsFromTheFilesAndWritesTheCriteria) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDirectories("/fleet").ok());
  PlantFleet(env, "/fleet/a.jsonl", 20);
  PlantFleet(env, "/fleet/b.jsonl", 20);  // the same node names: the later file's lines count
  const Result<LearnedFromFiles> learned =
      LearnFromFiles(Request({"/fleet/a.jsonl", "/fleet/b.jsonl"}, "/fleet/criteria.json"), env);
  ASSERT_TRUE(learned.ok()) << learned.status().ToString();
  EXPECT_EQ(learned->nodes, 40u);
  EXPECT_GT(learned->metrics, 100u);
  ASSERT_EQ(learned->criteria.classes.size(), 1u);
  const Result<LearnedCriteria> back = ReadCriteria("/fleet/criteria.json", env);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(DumpJson(CriteriaToJson(*back)), DumpJson(CriteriaToJson(learned->criteria)));
  // And what they find, part by part: the same as asking the criteria themselves.
  ASSERT_FALSE(learned->reach.empty());
  EXPECT_EQ(DumpJson(ReachToJson(learned->reach)), DumpJson(ReachToJson(ReachOf(*back))));
}

// Nothing is read or written when the criteria cannot be written, and bad input is named.
TEST(LearnFromFilesTest, RefusesBeforeItsWorkAndNamesBadInput) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDirectories("/fleet").ok());
  const Result<LearnedFromFiles> nowhere =
      LearnFromFiles(Request({"/fleet/absent.jsonl"}, "/no/such/dir/c.json"), env);
  EXPECT_EQ(nowhere.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(nowhere.status().message().find("/no/such/dir/c.json"), std::string::npos);

  const Result<LearnedFromFiles> absent =
      LearnFromFiles(Request({"/fleet/absent.jsonl"}, "/fleet/c.json"), env);
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);

  PlantFleet(env, "/fleet/few.jsonl", 3);  // fewer nodes than a class needs
  const Result<LearnedFromFiles> few =
      LearnFromFiles(Request({"/fleet/few.jsonl"}, "/fleet/c.json"), env);
  EXPECT_EQ(few.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(env.Stat("/fleet/c.json").ok());
}

}  // namespace
}  // namespace vigil::learned
