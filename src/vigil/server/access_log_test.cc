#include "vigil/server/access_log.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

AccessEntry Entry() {
  AccessEntry e;
  e.time = 1.7e9;
  e.client = "127.0.0.1:5000";
  e.method = "POST";
  e.path = "/api/v1/results";
  e.status = 201;
  e.bytes_in = 1234;
  e.bytes_out = 56;
  e.seconds = 0.0032;
  return e;
}

TEST(AccessLogTest, OneJsonObjectPerLine) {
  const std::string line = FormatAccessEntry(Entry());
  ASSERT_EQ(line.back(), '\n');
  Result<Json> j = ParseJson(line, "line");
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ((*j)["client"], "127.0.0.1:5000");
  EXPECT_EQ((*j)["method"], "POST");
  EXPECT_EQ((*j)["path"], "/api/v1/results");
  EXPECT_EQ((*j)["status"], 201);
  EXPECT_EQ((*j)["bytes_in"], 1234);
  EXPECT_EQ((*j)["bytes_out"], 56);
  EXPECT_NEAR((*j)["seconds"].get<double>(), 0.0032, 1e-6);
  EXPECT_EQ((*j)["time"], "2023-11-14T22:13:20.000Z");
}

TEST(AccessLogTest, EscapesWhatAClientSent) {
  AccessEntry e = Entry();
  e.path = "/a\"b\n{}";
  Result<Json> j = ParseJson(FormatAccessEntry(e), "line");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["path"], "/a\"b\n{}");
}

TEST(AccessLogTest, AppendsAndReopensAfterRotation) {
  testing::TempDir dir;
  const std::string path = dir.File("access.log");
  ASSERT_TRUE(WriteFileAtomic(path, "old\n").ok());
  Result<std::unique_ptr<AccessLog>> log = AccessLog::Open(path);
  ASSERT_TRUE(log.ok()) << log.status().message();
  (*log)->Write(Entry());
  ASSERT_EQ(std::rename(path.c_str(), (path + ".1").c_str()), 0);  // logrotate's move
  (*log)->Write(Entry());                                          // still into the moved file
  ASSERT_TRUE((*log)->Reopen().ok());
  (*log)->Write(Entry());
  const std::string rotated = *ReadFile(path + ".1");
  EXPECT_EQ(rotated.rfind("old\n", 0), 0u);
  EXPECT_EQ(std::count(rotated.begin(), rotated.end(), '\n'), 3);
  const std::string fresh = *ReadFile(path);
  EXPECT_EQ(std::count(fresh.begin(), fresh.end(), '\n'), 1);
}

TEST(AccessLogTest, UnwritablePathIsAnErrorNamingIt) {
  Result<std::unique_ptr<AccessLog>> log = AccessLog::Open("/nonexistent-dir/access.log");
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("/nonexistent-dir/access.log"), std::string::npos);
}

}  // namespace
}  // namespace vigil::server
