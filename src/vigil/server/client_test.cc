#include "vigil/server/client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

TEST(ClientTest, ReporterOfTheFlags) {
  testing::TempDir dir;
  Result<std::unique_ptr<ReportClient>> none = ReporterOf("", "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  ASSERT_TRUE(WriteFileAtomic(dir.File("token"), "  s3cret\n").ok());
  Result<std::unique_ptr<ReportClient>> with = ReporterOf("http://127.0.0.1:1", dir.File("token"));
  ASSERT_TRUE(with.ok()) << with.status().message();
  EXPECT_NE(*with, nullptr);
  ASSERT_TRUE(WriteFileAtomic(dir.File("empty"), " \n").ok());
  Result<std::unique_ptr<ReportClient>> empty = ReporterOf("http://127.0.0.1:1", dir.File("empty"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("the token file is empty"), std::string::npos);
  EXPECT_FALSE(ReporterOf("ftp://x", "").ok());
}

// Uploads and alerts go to their endpoints with the token; a refusal is InvalidArgument with the
// server's message, a server error Unavailable (worth trying again).
TEST(ClientTest, PostsToTheEndpointWithTheTokenAndClassifiesFailures) {
  httplib::Server server;
  std::mutex mu;
  std::vector<std::string> seen;
  int status = 201;
  server.Post(
      R"(/api/v1/(results|alerts))", [&](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard lock(mu);
        seen.push_back(req.path + " " + req.get_header_value("Authorization") + " " + req.body);
        res.status = status;
        res.set_content(status == 201 ? R"({"ids": [1]})" : R"({"error": "wrong token"})",
                        "application/json");
      });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });

  Result<std::unique_ptr<ReportClient>> c =
      ReportClient::Create("http://127.0.0.1:" + std::to_string(port), "tok");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Result<Json> a = (*c)->PostAlerts("{\"machine\": \"m\"}\n");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ((*a)["ids"], Json::array({1}));
  ASSERT_TRUE((*c)->Upload("{}").ok());
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0], "/api/v1/alerts Bearer tok {\"machine\": \"m\"}\n");
    EXPECT_EQ(seen[1], "/api/v1/results Bearer tok {}");
    status = 401;
  }
  Result<Json> refused = (*c)->PostAlerts("x");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("alerts refused (401): wrong token"), std::string::npos)
      << refused.status().message();
  {
    std::lock_guard lock(mu);
    status = 503;
  }
  Result<Json> failed = (*c)->Upload("x");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace vigil::server
