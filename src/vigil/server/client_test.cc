#include "vigil/server/client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <mutex>
#include <set>
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

// Two nodes whose names sanitise alike ("a/b", "a:b": "a_b"), spooled in the same second, and the
// same node twice: every document keeps a file of its own.
TEST(ClientTest, SpooledDocumentsNeverReplaceEachOther) {
  testing::TempDir dir;
  const std::string spool = dir.File("spool");
  std::set<std::string> paths;
  const std::vector<std::string> nodes = {"a/b", "a:b", "a:b"};
  for (size_t i = 0; i < nodes.size(); ++i) {
    Result<std::string> p = SpoolDocument(spool, nodes[i], 1.8e9, "doc " + std::to_string(i));
    ASSERT_TRUE(p.ok()) << p.status().message();
    paths.insert(*p);
  }
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_TRUE(paths.count(spool + "/20270115T080000Z-a_b.json")) << *paths.begin();
  EXPECT_TRUE(paths.count(spool + "/20270115T080000Z-a_b-2.json"));
  EXPECT_TRUE(paths.count(spool + "/20270115T080000Z-a_b-3.json"));
  std::set<std::string> texts;
  for (const std::string& p : paths) texts.insert(*ReadFile(p));
  EXPECT_EQ(texts, (std::set<std::string>{"doc 0", "doc 1", "doc 2"}));
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(spool)) files += e.is_regular_file();
  EXPECT_EQ(files, 3u);  // nothing staged is left behind
}

// A server error (a damaged database answers 500) is worth trying again: the drain stops and the
// document stays in the spool, never moved to rejected/.
TEST(ClientTest, ADrainStoppedByAServerErrorKeepsTheDocument) {
  httplib::Server server;
  server.Post("/api/v1/results", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content(R"({"error": "fleet.db: the database is damaged", "status": 500})",
                    "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  testing::TempDir dir;
  Result<std::string> kept = SpoolDocument(dir.File("spool"), "n1", 1.8e9, "{}");
  ASSERT_TRUE(kept.ok());
  Result<std::unique_ptr<ReportClient>> c =
      ReportClient::Create("http://127.0.0.1:" + std::to_string(port), "tok");
  ASSERT_TRUE(c.ok());
  Result<DrainReport> report = DrainSpool(dir.File("spool"), **c);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->stopped.code(), StatusCode::kUnavailable);
  EXPECT_NE(report->stopped.message().find("database is damaged"), std::string::npos);
  EXPECT_TRUE(report->rejected.empty());
  EXPECT_TRUE(std::filesystem::exists(*kept));
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace vigil::server
