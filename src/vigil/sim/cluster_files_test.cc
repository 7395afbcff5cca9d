#include "vigil/sim/cluster_files.h"

#include <gtest/gtest.h>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::sim {
namespace {

ClusterSimOptions SmallCluster() {
  ClusterSimOptions o;
  o.nodes = 32;
  o.days = 3;
  o.lemons = 2;
  return o;
}

TEST(ClusterFilesTest, WritesWhatWasGenerated) {
  vigil::testing::TempDir dir;
  const ClusterFiles files{.sacct = dir.File("s.sacct"),
                           .events = dir.File("events.csv"),
                           .truth = dir.File("truth.csv")};
  const Result<ClusterSimOutput> out = WriteSimulatedCluster(SmallCluster(), files);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const ClusterSimOutput same = *SimulateCluster(SmallCluster());
  EXPECT_EQ(*ReadFile(files.sacct), same.sacct);
  EXPECT_EQ(*ReadFile(files.events), same.events);
  EXPECT_EQ(*ReadFile(files.truth), same.truth);
  EXPECT_EQ(out->lemons, same.lemons);
}

TEST(ClusterFilesTest, OptionalFilesAreLeftOut) {
  vigil::testing::TempDir dir;
  ASSERT_TRUE(WriteSimulatedCluster(SmallCluster(),
                                    {.sacct = dir.File("s.sacct"), .events = "", .truth = ""})
                  .ok());
  EXPECT_TRUE(ReadFile(dir.File("s.sacct")).ok());
  EXPECT_FALSE(ReadFile(dir.File("events.csv")).ok());
}

TEST(ClusterFilesTest, NothingIsWrittenWhenAPathIsNotWritableOrTheOptionsAreBad) {
  vigil::testing::TempDir dir;
  EXPECT_FALSE(WriteSimulatedCluster(SmallCluster(), {.sacct = dir.File("s.sacct"),
                                                      .events = "",
                                                      .truth = dir.File("no/such/dir/truth.csv")})
                   .ok());
  ClusterSimOptions bad = SmallCluster();
  bad.lemons = 99;
  EXPECT_EQ(WriteSimulatedCluster(bad, {.sacct = dir.File("s.sacct"), .events = "", .truth = ""})
                .status()
                .message(),
            "--lemons must be from 0 to --nodes");
  EXPECT_FALSE(ReadFile(dir.File("s.sacct")).ok());
}

}  // namespace
}  // namespace vigil::sim
