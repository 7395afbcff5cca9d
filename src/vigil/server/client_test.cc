#include "vigil/server/client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <set>
#include <thread>

#include "vigil/core/file.h"
#include "vigil/core/mem_env.h"
#include "vigil/core/mutex.h"
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
  Mutex mu;  // guards seen and status
  std::vector<std::string> seen;
  int status = 201;
  server.Post(
      R"(/api/v1/(results|alerts))", [&](const httplib::Request& req, httplib::Response& res) {
        MutexLock lock(mu);
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
    MutexLock lock(mu);
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
    MutexLock lock(mu);
    status = 503;
  }
  Result<Json> failed = (*c)->Upload("x");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  server.stop();
  serving.join();
}

// A Reporter that answers from a script instead of a server, and keeps what it was sent.
class FakeReporter final : public Reporter {
 public:
  // Answers in order; once they run out, every upload is accepted.
  std::vector<Result<Json>> answers;
  std::vector<std::string> uploads, alerts;

  Result<Json> Upload(std::string_view body) override {
    uploads.emplace_back(body);
    return Next();
  }
  Result<Json> PostAlerts(std::string_view body) override {
    alerts.emplace_back(body);
    return Next();
  }

 private:
  Result<Json> Next() {
    if (answers.empty()) return Json{{"ids", Json::array({1})}};
    Result<Json> a = std::move(answers.front());
    answers.erase(answers.begin());
    return a;
  }
};

// Two nodes whose names sanitise alike ("a/b", "a:b": "a_b"), spooled in the same second, and the
// same node twice: every document keeps a file of its own.
TEST(ClientTest, SpooledDocumentsNeverReplaceEachOther) {
  MemEnv env;
  const std::string spool = "/var/spool/vigil";
  std::set<std::string> paths;
  const std::vector<std::string> nodes = {"a/b", "a:b", "a:b"};
  for (size_t i = 0; i < nodes.size(); ++i) {
    Result<std::string> p = SpoolDocument(spool, nodes[i], 1.8e9, "doc " + std::to_string(i), env);
    ASSERT_TRUE(p.ok()) << p.status().message();
    paths.insert(*p);
  }
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_TRUE(paths.count(spool + "/20270115T080000Z-a_b.json")) << *paths.begin();
  EXPECT_TRUE(paths.count(spool + "/20270115T080000Z-a_b-2.json"));
  EXPECT_TRUE(paths.count(spool + "/20270115T080000Z-a_b-3.json"));
  std::set<std::string> texts;
  for (const std::string& p : paths) texts.insert(*env.ReadFile(p));
  EXPECT_EQ(texts, (std::set<std::string>{"doc 0", "doc 1", "doc 2"}));
  // Nothing staged is left behind (the machine's Env: env_test.cc, WriteNewFile).
  EXPECT_EQ(env.ListDirectory(spool)->size(), 3u);
}

// On the machine's files, as `vigil run --report` spools: the file is where the path says.
TEST(ClientTest, ASpooledDocumentIsAFileOnDisk) {
  testing::TempDir dir;
  Result<std::string> p = SpoolDocument(dir.File("spool"), "n1", 1.8e9, "{}");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(*p, dir.File("spool") + "/20270115T080000Z-n1.json");
  EXPECT_EQ(*ReadFile(*p), "{}");
}

// A server error (a damaged database answers 500) is worth trying again: the drain stops and the
// document stays in the spool, never moved to rejected/.
TEST(ClientTest, ADrainStoppedByAServerErrorKeepsTheDocument) {
  MemEnv env;
  Result<std::string> kept = SpoolDocument("/spool", "n1", 1.8e9, "{}", env);
  ASSERT_TRUE(kept.ok());
  FakeReporter reporter;
  reporter.answers.emplace_back(Status::Unavailable(
      "http://fleet:8080: server error 500: fleet.db: the database is damaged"));
  Result<DrainReport> report = DrainSpool("/spool", reporter, env);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->stopped.code(), StatusCode::kUnavailable);
  EXPECT_NE(report->stopped.message().find("database is damaged"), std::string::npos);
  EXPECT_TRUE(report->rejected.empty());
  EXPECT_EQ(report->kept, std::vector<std::string>{*kept});
  EXPECT_TRUE(env.Stat(*kept).ok());
}

// The line `vigil report` ends with: documents sent and nodes found defective; with a spool, how
// many the server refused (and where they went) and how many wait for next time.
TEST(ClientTest, TheReportSummaryLineCountsEveryDocument) {
  ReportTally t;
  t.sent = 1;
  EXPECT_EQ(ReportSummaryLine(t), "Sent 1 document (0 nodes defective).");
  t.sent = 3;
  t.defective = 1;
  t.spool = "sp";
  EXPECT_EQ(ReportSummaryLine(t), "Sent 3 documents (1 node defective); 0 refused; 0 kept in sp.");
  t.sent = 2;
  t.defective = 2;
  t.refused = 1;
  t.kept = 4;
  EXPECT_EQ(ReportSummaryLine(t),
            "Sent 2 documents (2 nodes defective); 1 refused (moved to sp/rejected); 4 kept in sp "
            "(the server stopped answering).");
}

// Oldest name first: sent files are removed with their answers kept, a refused one goes to
// rejected/ and the drain goes on; files that are not *.json, and directories, stay.
TEST(ClientTest, ADrainSendsOldestFirstAndMovesRefusedFilesAside) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDirectories("/spool/old.json").ok());  // a directory: not sent
  ASSERT_TRUE(env.WriteFileAtomic("/spool/notes.txt", "x").ok());
  const std::string first = *SpoolDocument("/spool", "n1", 1.8e9, "one", env);
  const std::string refused = *SpoolDocument("/spool", "n2", 1.8e9 + 1, "two", env);
  const std::string last = *SpoolDocument("/spool", "n3", 1.8e9 + 2, "three", env);
  FakeReporter reporter;
  reporter.answers.emplace_back(Json{{"ids", Json::array({7})}});
  reporter.answers.emplace_back(Status::InvalidArgument("upload refused (400): not a document"));
  Result<DrainReport> report = DrainSpool("/spool", reporter, env);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->stopped.ok());
  EXPECT_EQ(reporter.uploads, (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(report->sent, (std::vector<std::string>{first, last}));
  EXPECT_EQ(report->rejected, std::vector<std::string>{refused});
  ASSERT_EQ(report->answers.size(), 2u);
  EXPECT_EQ(report->answers[0]["ids"], Json::array({7}));
  EXPECT_EQ(*env.ListDirectory("/spool"),
            (std::vector<std::string>{"notes.txt", "old.json", "rejected"}));
  EXPECT_EQ(*env.ReadFile("/spool/rejected/20270115T080001Z-n2.json"), "two");
}

TEST(ClientTest, AMissingSpoolIsAnIoError) {
  MemEnv env;
  FakeReporter reporter;
  Result<DrainReport> report = DrainSpool("/nowhere", reporter, env);
  EXPECT_EQ(report.status().code(), StatusCode::kIoError);
  EXPECT_TRUE(reporter.uploads.empty());
}

TEST(ClientTest, TheTokenIsReadThroughTheEnv) {
  MemEnv env;
  ASSERT_TRUE(env.WriteFileAtomic("/token", "  s3cret\n").ok());
  EXPECT_EQ(*ReadToken("/token", env), "s3cret");
  ASSERT_TRUE(env.WriteFileAtomic("/inside", "a b").ok());
  EXPECT_EQ(ReadToken("/inside", env).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace vigil::server
