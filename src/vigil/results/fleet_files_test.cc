#include "vigil/results/fleet_files.h"

#include <gtest/gtest.h>

#include <string>

#include "vigil/core/mem_env.h"
#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

TEST(FleetFilesTest, ReadFleetFilesAppendsAndRefusesAnEmptyFleet) {
  testing::TempDir dir;
  dir.Write("a.jsonl", "{\"node\": \"a\", \"m/x\": 1}\n");
  dir.Write("b.jsonl", "{\"node\": \"b\", \"m/y\": 2}\n");
  dir.Write("empty.jsonl", "\n");
  Result<FleetTable> t = ReadFleetFiles({dir.File("a.jsonl"), dir.File("b.jsonl")});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->node_count(), 2u);
  EXPECT_EQ(t->metric_count(), 2u);
  Result<FleetTable> empty = ReadFleetFiles({dir.File("empty.jsonl")});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), dir.File("empty.jsonl") + ": no nodes in the file");
}

// The same through an Env in memory; a node listed twice in one file keeps its last line, as
// ReadFleetTable keeps it; a file that is not there is NotFound.
TEST(FleetFilesTest, ReadsThroughTheEnv) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDirectories("/f").ok());
  ASSERT_TRUE(env.WriteFileAtomic("/f/a.jsonl",
                                  "{\"node\": \"a\", \"m/x\": 1}\n{\"node\": \"a\", \"m/x\": 3}\n")
                  .ok());
  ASSERT_TRUE(env.WriteFileAtomic("/f/b.jsonl", "{\"node\": \"b\", \"m/y\": 2}\n").ok());
  ASSERT_TRUE(env.WriteFileAtomic("/f/empty.jsonl", "\n").ok());
  Result<FleetTable> t = ReadFleetFiles({"/f/a.jsonl", "/f/b.jsonl"}, env);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->node_count(), 2u);
  EXPECT_EQ(t->at(0, 0), 3);
  EXPECT_EQ(ReadFleetFiles({"/f/empty.jsonl", "/f/empty.jsonl"}, env).status().message(),
            "/f/empty.jsonl, /f/empty.jsonl: no nodes in the files");
  EXPECT_EQ(ReadFleetFiles({"/f/absent.jsonl"}, env).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace vigil
