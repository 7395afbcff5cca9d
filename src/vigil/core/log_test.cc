#include "vigil/core/log.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

TEST(LogTest, LogsToAFileThatCanBeReopenedAfterRotation) {
  InitLogging(0);
  testing::TempDir dir;
  const std::string path = dir.File("vigil.log");
  ASSERT_TRUE(LogToFile(path).ok());
  spdlog::warn("first");
  ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);
  spdlog::warn("second");  // into the moved file until reopened
  ASSERT_TRUE(LogToFile(path).ok());
  spdlog::error("third");
  const std::string rotated = *ReadFile(path + ".1");
  EXPECT_NE(rotated.find(" warning first\n"), std::string::npos) << rotated;
  EXPECT_NE(rotated.find(" warning second\n"), std::string::npos) << rotated;
  const std::string fresh = *ReadFile(path);
  EXPECT_NE(fresh.find(" error third\n"), std::string::npos) << fresh;
  EXPECT_EQ(fresh.find("second"), std::string::npos);
  EXPECT_EQ(fresh[4], '-');  // an ISO 8601 time first
  EXPECT_NE(fresh.find("Z error"), std::string::npos);
  InitLogging(0);
}

// The logger is replaced, not registered twice (spdlog throws on a name taken).
TEST(LogTest, InitialisingAgainReplacesTheLogger) {
  InitLogging(0);
  EXPECT_NO_THROW(InitLogging(1));
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::debug);
  EXPECT_NO_THROW(InitLogging(0));
}

TEST(LogTest, UnopenablePathIsAnErrorNamingItAndTheLogStays) {
  InitLogging(0);
  const Status s = LogToFile("/nonexistent-dir/vigil.log");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/vigil.log"), std::string::npos);
}

}  // namespace
}  // namespace vigil
