// End-to-end tests of the fleet service: `vigil serve` as a process on port 0, fed by
// `vigil run --report`, `vigil report` and an HTTP client; killed with SIGKILL mid-stream; and its
// dashboard loaded by a real headless browser.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "serve_process.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/text.h"
#include "vigil/testing/temp_dir.h"
#include "vigil_process.h"

namespace vigil {
namespace {

using testing::ProcessResult;
using testing::RunVigil;
using testing::TempDir;
using testing::VigilProcess;

constexpr const char* kToken = testing::kServeToken;
using Server = testing::ServeProcess;
using testing::GetJson;

TEST(ServeE2eTest, RunReportsItsResultsAndTheSpoolKeepsThemWhileTheServerIsDown) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("token"), kToken).ok());
  // No server yet: the document goes to the spool and the run still succeeds.
  const std::vector<std::string> run = {"run",
                                        "--bench",
                                        "cpu-stream",
                                        "--set",
                                        "cpu-stream.array_size=1000000",
                                        "--node",
                                        "n1",
                                        "--out",
                                        dir.File("r.json"),
                                        "--report",
                                        "http://127.0.0.1:1",
                                        "--token-file",
                                        dir.File("token"),
                                        "--spool",
                                        dir.File("spool")};
  ProcessResult r = RunVigil(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("vigil report --spool"), std::string::npos) << r.err;
  size_t spooled = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.File("spool"))) {
    spooled += e.path().extension() == ".json";
  }
  EXPECT_EQ(spooled, 1u);

  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  r = RunVigil({"report", "--spool", dir.File("spool"), "--report", server.url(), "--token-file",
                dir.File("token")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The verdict, then the line `vigil report` ends with: what was sent, refused and kept.
  EXPECT_EQ(r.out, "n1: unjudged\nSent 1 document (0 nodes defective); 0 refused; 0 kept in " +
                       dir.File("spool") + ".\n");
  EXPECT_TRUE(std::filesystem::is_empty(dir.File("spool")) ||
              !std::filesystem::exists(dir.File("spool") + "/x.json"));

  // With the server up, run uploads straight away and prints the verdict.
  std::vector<std::string> live = run;
  live[10] = server.url();
  r = RunVigil(live);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("verdict unjudged"), std::string::npos) << r.err;
  const Json node = GetJson(server.port(), "/api/v1/nodes/n1");
  EXPECT_EQ(node["uploads"], 2) << node.dump();

  // A wrong token is refused with the server's message, exit 2.
  ASSERT_TRUE(WriteFileAtomic(dir.File("bad"), "nope").ok());
  r = RunVigil(
      {"report", dir.File("r.json"), "--report", server.url(), "--token-file", dir.File("bad")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("wrong token"), std::string::npos) << r.err;
}

// A health check with --report asks the service for the node's latest verdict: a node found
// defective there fails its check though nothing local is wrong; an unknown node or a service
// that cannot be reached leaves the check to what it read.
TEST(ServeE2eTest, TheHealthCheckAsksTheServiceForTheNodesVerdict) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("token"), kToken).ok());
  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  // n2's last validation found its root filesystem full (a fixed rule: no criteria needed).
  ProcessResult r =
      RunVigil({"run", "--suite", "health", "--set", "host-health.min_free=16T", "--node", "n2",
                "--scratch", dir.path(), "--out", dir.File("n2.json")});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  r = RunVigil(
      {"report", dir.File("n2.json"), "--report", server.url(), "--token-file", dir.File("token")});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out,
            "n2: defective (failing: filesystem /, filesystem scratch)\n"
            "Sent 1 document (1 node defective).\n");

  const auto health = [&](const std::string& node, const std::string& url) {
    return RunVigil({"run", "--suite", "health", "--node", node, "--scratch", dir.path(),
                     "--report", url, "--token-file", dir.File("token")});
  };
  r = health("n2", server.url());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "vigil: filesystem / defective at the fleet service's latest validation\n");
  r = health("n3", server.url());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
  r = health("n2", "http://127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
  EXPECT_NE(r.err.find("the node's latest verdict is not known"), std::string::npos) << r.err;
  // Passing checks uploaded nothing: the node's history is its one validation.
  EXPECT_EQ(GetJson(server.port(), "/api/v1/nodes/n3")["uploads"], nullptr);
  EXPECT_EQ(GetJson(server.port(), "/api/v1/nodes/n2")["uploads"], 1);
  // A check that finds a fault sends its document: the service judges the node by it.
  r = RunVigil({"run", "--suite", "health", "--set", "host-health.min_free=16T", "--node", "n4",
                "--scratch", dir.path(), "--report", server.url(), "--token-file",
                dir.File("token")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "vigil: filesystem / root_full=1 (+1 more)\n");
  EXPECT_EQ(GetJson(server.port(), "/api/v1/nodes/n4")["verdict"], "defective");
}

// vigil detect --report posts its alerts to the fleet service; a server that cannot be reached
// leaves them in --out and fails the command (exit 3), a wrong token is refused (exit 2).
TEST(ServeE2eTest, DetectPostsItsAlertsToTheServer) {
  TempDir dir;
  ProcessResult sim =
      RunVigil({"simulate", "telemetry", "--machines", "8", "--duration", "10m", "--faults", "2",
                "--kinds", "hang,nic_down", "--seed", "3", "--out", dir.File("t.csv")});
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  ProcessResult r = RunVigil({"detect", "--input", dir.File("t.csv"), "--out",
                              dir.File("down.jsonl"), "--report", "http://127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("alerts not sent: http://127.0.0.1:1: cannot reach the server"),
            std::string::npos)
      << r.err;
  Result<std::string> kept = ReadFile(dir.File("down.jsonl"));
  ASSERT_TRUE(kept.ok());
  const size_t raised = static_cast<size_t>(std::count(kept->begin(), kept->end(), '\n'));
  EXPECT_GE(raised, 2u);

  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  r = RunVigil({"detect", "--input", dir.File("t.csv"), "--report", server.url(), "--token-file",
                dir.File("token")});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // alerts raised, and sent
  EXPECT_NE(r.err.find(fmt::format("{} alerts sent", raised)), std::string::npos) << r.err;
  const Json alerts = GetJson(server.port(), "/api/v1/alerts");
  ASSERT_EQ(alerts["count"], raised) << alerts.dump();
  EXPECT_EQ(alerts["alerts"][0]["kind"].is_string(), true);

  ASSERT_TRUE(WriteFileAtomic(dir.File("bad"), "nope").ok());
  r = RunVigil({"detect", "--input", dir.File("t.csv"), "--report", server.url(), "--token-file",
                dir.File("bad")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("alerts refused (401)"), std::string::npos) << r.err;
}

TEST(ServeE2eTest, BadDatabasesAndAddressesAreClearErrorsAtStartUp) {
  TempDir dir;
  dir.Write("garbage.db", std::string(4096, 'g'));
  ProcessResult r = RunVigil({"serve", "--db", dir.File("garbage.db"), "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("garbage.db"), std::string::npos) << r.err;

  Server first(dir, dir.File("fleet.db"));
  ASSERT_GT(first.port(), 0);
  r = RunVigil({"serve", "--db", dir.File("fleet.db"), "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("locked"), std::string::npos) << r.err;

  r = RunVigil({"serve", "--db", dir.File("other.db"), "--listen",
                "127.0.0.1:" + std::to_string(first.port())});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("cannot listen"), std::string::npos) << r.err;
  r = RunVigil({"serve", "--db", dir.File("other.db"), "--listen", "localhost"});
  EXPECT_EQ(r.exit_code, 2);
}

// Every upload the server acknowledged is in the store after a SIGKILL at an arbitrary moment.
TEST(ServeE2eTest, NothingAcknowledgedIsLostWhenTheServerIsKilled) {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  std::set<std::string> acknowledged;
  {
    Server server(dir, db);
    ASSERT_GT(server.port(), 0);
    std::mutex mu;
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t) {
      clients.emplace_back([&, t] {
        httplib::Client c("127.0.0.1", server.port());
        const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kToken}};
        for (int i = 0; !stop.load(); ++i) {
          const std::string node = "n" + std::to_string(t) + "-" + std::to_string(i);
          // About 4 KB a line: the WAL passes its checkpoint threshold during the run, so the
          // kill can land during a checkpoint too.
          std::string body = "{\"node\": \"" + node + "\"";
          for (int m = 0; m < 150; ++m) {
            body += fmt::format(", \"cpu-stream/triad_gbps:{}\": {}.5", m, i + m);
          }
          body += "}";
          auto res = c.Post("/api/v1/results", auth, body, "application/json");
          if (!res) break;  // the server died mid-request: not acknowledged
          if (res->status == 201) {
            std::lock_guard lock(mu);
            acknowledged.insert(node);
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    server.process().Signal(SIGKILL);
    stop = true;
    for (auto& c : clients) c.join();
    server.process().Wait();
  }
  ASSERT_GT(acknowledged.size(), 20u);
  Server again(dir, db);
  ASSERT_GT(again.port(), 0);
  const Json nodes = GetJson(again.port(), "/api/v1/nodes");
  std::set<std::string> stored;
  for (const Json& n : nodes["nodes"]) stored.insert(n["node"].get<std::string>());
  size_t lost = 0;
  for (const std::string& n : acknowledged) lost += stored.count(n) == 0;
  EXPECT_EQ(lost, 0u) << "of " << acknowledged.size() << " acknowledged, " << stored.size()
                      << " stored";
}

httplib::Headers Auth() { return {{"Authorization", std::string("Bearer ") + kToken}}; }

// Generated summary lines of `nodes` nodes of one hardware class, written to `path`.
void SimulateFleet(const TempDir& dir, int nodes, const std::string& path) {
  ProcessResult r =
      RunVigil({"simulate", "fleet", "--nodes", std::to_string(nodes), "--second-class", "0",
                "--out", path, "--truth", dir.File("truth.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// An upload whose answer was lost is sent again: the server answers as the first time and stores
// it once. A node retired through the API leaves the fleet; its history stays readable.
TEST(ServeE2eTest, ARetriedUploadIsStoredOnceAndARetiredNodeLeavesTheFleet) {
  TempDir dir;
  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  SimulateFleet(dir, 6, dir.File("fleet.jsonl"));
  const std::vector<std::string> report = {"report",     dir.File("fleet.jsonl"), "--report",
                                           server.url(), "--token-file",          dir.File("token"),
                                           "--json"};
  ProcessResult first = RunVigil(report);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ProcessResult again = RunVigil(report);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const Json a = *ParseJson(first.out, "first"), b = *ParseJson(again.out, "again");
  EXPECT_EQ(a["stored"], 6);
  EXPECT_EQ(b["stored"], 0);
  EXPECT_EQ(b["repeated"], 6);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(b["results"][i]["id"], a["results"][i]["id"]);
    EXPECT_EQ(b["results"][i]["verdict"], a["results"][i]["verdict"]);
  }
  Json nodes = GetJson(server.port(), "/api/v1/nodes");
  ASSERT_EQ(nodes["count"], 6) << nodes.dump();
  for (const Json& n : nodes["nodes"]) EXPECT_EQ(n["uploads"], 1) << n.dump();

  const std::string gone = nodes["nodes"][0]["node"].get<std::string>();
  httplib::Client c("127.0.0.1", server.port());
  auto res = c.Post("/api/v1/nodes/" + gone + "/retire", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);  // a write: the token is needed
  res = c.Post("/api/v1/nodes/" + gone + "/retire", Auth(), "", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  nodes = GetJson(server.port(), "/api/v1/nodes");
  EXPECT_EQ(nodes["count"], 5);
  const Json node = GetJson(server.port(), "/api/v1/nodes/" + gone);
  EXPECT_TRUE(node["retired"].is_string()) << node.dump();
  EXPECT_EQ(node["history"].size(), 1u);
  res = c.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.find("node=\"" + gone + "\""), std::string::npos);
}

// The database file deleted under a running server: /healthz says so (503), uploads are refused
// with 503 (an agent keeps them: `vigil report` exits 3), instead of being acknowledged into a
// file that no longer exists.
TEST(ServeE2eTest, ADeletedDatabaseFailsHealthzAndUploadsWith503) {
  TempDir dir;
  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  SimulateFleet(dir, 3, dir.File("fleet.jsonl"));
  const std::vector<std::string> report = {"report",       dir.File("fleet.jsonl"),
                                           "--report",     server.url(),
                                           "--token-file", dir.File("token")};
  ASSERT_EQ(RunVigil(report).exit_code, 0);
  httplib::Client c("127.0.0.1", server.port());
  auto res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  std::filesystem::remove(dir.File("fleet.db"));
  res = c.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_NE(res->body.find("was deleted"), std::string::npos) << res->body;
  const ProcessResult r = RunVigil(report);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("server error 503"), std::string::npos) << r.err;
}

// A stop (SIGTERM) after thousands of uploads takes well under a second: the WAL was kept short.
// The database, damaged in the middle, is then refused at start-up with a message naming it.
TEST(ServeE2eTest, AStopIsQuickAndADamagedDatabaseIsRefusedAtStartUp) {
  TempDir dir;
  const std::string db = dir.File("fleet.db");
  SimulateFleet(dir, 3000, dir.File("fleet.jsonl"));
  {
    Server server(dir, db);
    ASSERT_GT(server.port(), 0);
    ProcessResult r = RunVigil({"report", dir.File("fleet.jsonl"), "--report", server.url(),
                                "--token-file", dir.File("token")});
    ASSERT_LE(r.exit_code, 1) << r.err;
    const auto t0 = std::chrono::steady_clock::now();
    server.process().Signal(SIGTERM);
    r = server.process().Wait();
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_LT(took, 1.0);
  }
  const auto size = static_cast<off_t>(std::filesystem::file_size(db));
  ASSERT_GT(size, 1 << 20);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(size / 2 / 4096 * 4096);
    const std::string junk(8 * 4096, '\x5a');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const ProcessResult r = RunVigil({"serve", "--db", db, "--listen", "127.0.0.1:0"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(db + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;
}

// Debian's headless Chromium (scripts/setup.sh installs it); "" when there is none.
std::string HeadlessBrowser() {
  std::string browser;
  for (const char* b : {"/usr/bin/chromium-headless-shell", "/usr/bin/chromium"}) {
    if (access(b, X_OK) == 0) browser = b;
  }
  return browser;
}

// The browser's flags for one page, `action` being --dump-dom or --screenshot=FILE.
ProcessResult LoadInBrowser(const std::string& browser, const TempDir& dir, const std::string& url,
                            const std::string& action) {
  return testing::RunProgram(
      browser, {"--headless", "--no-sandbox", "--disable-gpu",
                "--user-data-dir=" + dir.File("profile"), "--window-size=1280,900", action, url});
}

// The page's DOM once the browser has loaded it; empty (with a test failure) when it could not.
std::string DomOf(const std::string& browser, const TempDir& dir, const std::string& url) {
  ProcessResult r = LoadInBrowser(browser, dir, url, "--dump-dom");
  EXPECT_EQ(r.exit_code, 0) << url << ": " << r.err;
  return r.exit_code == 0 ? r.out : std::string();
}

// A screenshot of the page, kept in the build tree as `name` for a person to look at; checks that
// it is a PNG of some substance.
void ExpectScreenshot(const std::string& browser, const TempDir& dir, const std::string& url,
                      const std::string& name) {
  const std::string shot = std::filesystem::absolute(name).string();
  std::filesystem::remove(shot);
  ProcessResult r = LoadInBrowser(browser, dir, url, "--screenshot=" + shot);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<std::string> png = ReadFile(shot);
  ASSERT_TRUE(png.ok()) << r.err;
  EXPECT_EQ(png->substr(0, 8), "\x89PNG\r\n\x1a\n");
  EXPECT_GT(png->size(), 10000u);
}

// How often `part` occurs in `text`.
size_t Occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(part, at)) != std::string::npos; at += part.size()) ++n;
  return n;
}

// Uploads `dir`/fleet.jsonl, a simulated fleet of `nodes` nodes, learns criteria from it, and
// judges it again by them.
void UploadAndLearn(const TempDir& dir, const Server& server, int nodes) {
  SimulateFleet(dir, nodes, dir.File("fleet.jsonl"));
  ProcessResult r = RunVigil({"report", dir.File("fleet.jsonl"), "--report", server.url(),
                              "--token-file", dir.File("token")});
  ASSERT_LE(r.exit_code, 1) << r.err;
  httplib::Client c("127.0.0.1", server.port());
  auto res = c.Post("/api/v1/criteria/learn", Auth(), "", "text/plain");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
}

// Debian's headless Chromium loads the dashboard: the fleet page lists the nodes with their
// verdicts, and a screenshot is saved beside the test (dashboard.png in the build tree).
TEST(ServeE2eTest, HeadlessBrowserSeesTheFleetPage) {
  const std::string browser = HeadlessBrowser();
  if (browser.empty()) GTEST_SKIP() << "no chromium (scripts/setup.sh installs it)";
  TempDir dir;
  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  UploadAndLearn(dir, server, 20);
  const std::string dom = DomOf(browser, dir, server.url() + "/");
  EXPECT_NE(dom.find("Vigil fleet"), std::string::npos);
  EXPECT_EQ(Occurrences(dom, "<tr data-node="), 20u) << dom.substr(0, 3000);
  EXPECT_NE(dom.find("class=\"verdict healthy\">healthy<"), std::string::npos);
  ExpectScreenshot(browser, dir, server.url() + "/", "dashboard.png");
}

// The rows of the fleet page's node table, in order: (node as the page shows it, verdict, the
// share of its band its nearest value uses, as printed).
struct PageRow {
  std::string node, verdict, used;
};

std::vector<PageRow> RowsOf(const std::string& dom) {
  std::vector<PageRow> rows;
  const auto cell = [&](size_t from, const std::string& open) {
    const size_t b = dom.find(open, from);
    if (b == std::string::npos) return std::string();
    const size_t e = dom.find('<', b + open.size());
    return dom.substr(b + open.size(), e - b - open.size());
  };
  for (size_t at = 0; (at = dom.find("<tr data-node=\"", at)) != std::string::npos; ++at) {
    const size_t name = at + 15;
    PageRow r{dom.substr(name, dom.find('"', name) - name), cell(at, "class=\"verdict "), ""};
    r.verdict = r.verdict.substr(r.verdict.find('>') + 1);
    const std::string nearest = cell(at, "class=\"nearest\"");
    r.used = nearest.substr(nearest.find('>') + 1);
    rows.push_back(r);
  }
  return rows;
}

// The dashboard as an operator uses it, in a real browser: a simulated fleet with criteria
// learned, one node uploaded with GPU 3's GEMM 40% down and a name made of HTML, a detector alert
// on it. The fleet page shows the alert first with its evidence, then the defective nodes before
// the healthy ones, those nearest their limits first; search and paging answer what they are
// asked; the node's page shows its finding with its figures and units, and its plots by component.
TEST(ServeE2eTest, TheDashboardShowsTheWorstFirstAndWhy) {
  const std::string browser = HeadlessBrowser();
  if (browser.empty()) GTEST_SKIP() << "no chromium (scripts/setup.sh installs it)";
  TempDir dir;
  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  UploadAndLearn(dir, server, 30);

  // A healthy node's line, with GPU 3's fp16 GEMM 40% down, under a name that is HTML.
  Result<std::string> lines = ReadFile(dir.File("fleet.jsonl"));
  ASSERT_TRUE(lines.ok());
  Result<Json> line = ParseJson(lines->substr(0, lines->find('\n')), "fleet.jsonl");
  ASSERT_TRUE(line.ok());
  const std::string evil = "zz\"><img src=x onerror=alert(1)>";
  const std::string metric = "gemm-flops/fp16_flops:3";
  ASSERT_TRUE((*line)[metric].is_number()) << line->dump();
  (*line)["node"] = evil;
  (*line)[metric] = (*line)[metric].get<double>() * 0.6;
  httplib::Client c("127.0.0.1", server.port());
  auto res = c.Post("/api/v1/results", Auth(), line->dump() + "\n", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const std::string alert =
      R"({"machine": "gpu-node-7", "kind": "rule", "rule": "xid 79", "component": "gpu3", )"
      R"("detected": 1800000000, "evidence": [{"signal": "xid", "stat": "gpu3", "value": 79, )"
      R"("peer_median": 0, "deviation": 0, "effect": 0}]})";
  res = c.Post("/api/v1/alerts", Auth(), alert, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;

  std::string dom = DomOf(browser, dir, server.url() + "/");
  // Escaped: the name is text on the page, never an element.
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  const size_t alerts = dom.find("id=\"alerts\"");
  ASSERT_NE(alerts, std::string::npos) << dom.substr(0, 3000);
  EXPECT_LT(alerts, dom.find("id=\"nodes\""));
  EXPECT_NE(dom.find("<td>gpu-node-7</td><td>rule: xid 79</td><td>gpu3</td><td><div>xid gpu3 = "
                     "79</div></td>"),
            std::string::npos)
      << dom.substr(alerts, 1500);
  // The Selector's panel: no incident posted yet, so no plan, and the page says why.
  EXPECT_NE(dom.find("<p id=\"selection\">No plan: the history has no incident"), std::string::npos)
      << dom.substr(dom.find("Validations the Selector plans"), 500);
  const std::vector<PageRow> rows = RowsOf(dom);
  ASSERT_EQ(rows.size(), 31u);
  EXPECT_EQ(rows[0].verdict, "defective");
  bool evil_found = false;
  size_t defective = 0;
  for (const PageRow& r : rows) {
    if (r.verdict == "defective") ++defective;
    evil_found |= r.node.find("zz&quot;&gt;&lt;img") == 0 && r.verdict == "defective";
  }
  EXPECT_TRUE(evil_found);
  // Every defective node before every healthy one, and the healthy ones by band used, most first.
  double previous = INFINITY;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].verdict, i < defective ? "defective" : "healthy") << i;
    if (i < defective) continue;
    EXPECT_NE(rows[i].used.find("% "), std::string::npos) << rows[i].node;  // "63% · metric"
    const double used = std::strtod(rows[i].used.c_str(), nullptr);
    EXPECT_LE(used, previous) << rows[i].node;
    previous = used;
  }
  ExpectScreenshot(browser, dir, server.url() + "/", "dashboard-fleet.png");

  // Search and paging, answered by the server.
  dom = DomOf(browser, dir, server.url() + "/?q=ZZ%22");
  std::vector<PageRow> found = RowsOf(dom);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].verdict, "defective");
  dom = DomOf(browser, dir, server.url() + "/?per_page=7&page=2");
  found = RowsOf(dom);
  ASSERT_EQ(found.size(), 7u);
  EXPECT_EQ(found[0].node, rows[7].node);
  EXPECT_EQ(found[6].node, rows[13].node);
  EXPECT_NE(dom.find("Nodes 8-14 of 31, worst first."), std::string::npos);
  EXPECT_NE(dom.find("page 2 of 5"), std::string::npos);

  // The node's page: its finding with value, expected range and unit, and GPU 3's plot.
  const std::string node_url =
      server.url() + "/nodes/zz%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E";
  dom = DomOf(browser, dir, node_url);
  EXPECT_EQ(dom.find("<img"), std::string::npos);
  const size_t finding = dom.find("<td>" + metric + "</td>");
  ASSERT_NE(finding, std::string::npos) << dom.substr(0, 4000);
  const std::string row = dom.substr(finding, dom.find("</tr>", finding) - finding);
  EXPECT_NE(row.find("GFLOPS</td><td class=\"expected\">at least "), std::string::npos) << row;
  EXPECT_NE(row.find("% from the fleet's centre"), std::string::npos) << row;
  EXPECT_NE(dom.find("<td class=\"major\">major</td><td>GPU 3</td>"), std::string::npos) << row;
  EXPECT_NE(dom.find("<h3>GPU 3</h3>"), std::string::npos);
  EXPECT_NE(dom.find(metric + " (GFLOPS)"), std::string::npos);
  EXPECT_NE(dom.find("class=\"band\""), std::string::npos);
  ExpectScreenshot(browser, dir, node_url, "dashboard-node.png");
}

// vigil select --url plans from the history a running service keeps: validations uploaded by
// `vigil report`, incidents posted over HTTP; the plan is the one GET /api/v1/selection answers.
TEST(ServeE2eTest, SelectPlansFromTheServicesHistory) {
  TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir.File("token"), kToken).ok());
  Server server(dir, dir.File("fleet.db"));
  ASSERT_GT(server.port(), 0);
  // Nothing uploaded yet: no history, said so, and no plan (exit 2).
  ProcessResult r = RunVigil({"select", "--url", server.url()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("no node in the fleet has uploaded"), std::string::npos) << r.err;

  // Four nodes validated with the health suite; n2's root filesystem is full (defective).
  for (const std::string node : {"n1", "n2", "n3", "n4"}) {
    std::vector<std::string> run = {"run",      "--suite", "health",
                                    "--node",   node,      "--scratch",
                                    dir.path(), "--out",   dir.File(node + ".json")};
    if (node == "n2") run.insert(run.begin() + 3, {"--set", "host-health.min_free=16T"});
    r = RunVigil(run);
    ASSERT_LE(r.exit_code, 1) << r.err;
    r = RunVigil({"report", dir.File(node + ".json"), "--report", server.url(), "--token-file",
                  dir.File("token")});
    ASSERT_LE(r.exit_code, 1) << r.out << r.err;
  }
  httplib::Client c("127.0.0.1", server.port());
  // After the validations (a second's clock reads earlier than their fractional receipt times,
  // and an incident at a node's first record opens the window the risk model counts from).
  const double now = static_cast<double>(std::time(nullptr)) + 2;
  const std::string incidents = fmt::format(
      "{{\"node\":\"n2\",\"time\":{},\"kind\":\"filesystem\",\"cost_node_hours\":12,"
      "\"job\":\"train-7\"}}\n"
      "{{\"node\":\"n4\",\"time\":{},\"kind\":\"software\",\"cost_node_hours\":3}}\n",
      now, now);
  auto res = c.Post("/api/v1/incidents", incidents, "application/x-ndjson");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);  // a write: the token is needed
  res = c.Post("/api/v1/incidents", Auth(), incidents, "application/x-ndjson");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  res = c.Post("/api/v1/incidents", Auth(),
               "{\"node\":\"n9\",\"time\":1.7e9,\"kind\":\"GPU\",\"cost_node_hours\":1}",
               "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404) << res->body;
  EXPECT_EQ(GetJson(server.port(), "/api/v1/incidents?node=n2")["count"], 1);

  r = RunVigil({"select", "--url", server.url(), "--horizon", "7d", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Result<Json> local = ParseJson(r.out, "select --url");
  ASSERT_TRUE(local.ok()) << local.status().message();
  ASSERT_TRUE((*local)["validations"].is_array()) << r.out;
  const Json served = GetJson(server.port(), "/api/v1/selection?horizon=7d");
  ASSERT_TRUE(served.is_object());
  // The same history planned in two places a moment apart (each up to its own "now"): the same
  // kind of model and the same suite, learned from the same validations and incidents.
  EXPECT_EQ((*local)["model"]["kind"], served["model"]["kind"]);
  EXPECT_EQ((*local)["model"]["mean_incident_node_hours"], 7.5);
  EXPECT_EQ(served["model"]["mean_incident_node_hours"], 7.5);
  EXPECT_EQ((*local)["suite"], served["suite"]);
  ASSERT_FALSE(served["suite"].empty()) << served.dump();
  r = RunVigil({"select", "--url", server.url()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("4 nodes; risk model:"), std::string::npos) << r.out;
  // The dashboard's panel lists the same planned nodes as the service's plan.
  res = c.Get("/");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const Json plan = GetJson(server.port(), "/api/v1/selection");
  for (const Json& v : plan["validations"]) {
    const std::string node = v["node"].get<std::string>();
    EXPECT_NE(res->body.find("<tr class=\"planned\"><td><a href=\"/nodes/" + node + "\">"),
              std::string::npos)
        << node << ": " << res->body;
  }
  EXPECT_NE(
      res->body.find(fmt::format("{} of {} nodes whose validation pays", plan["validations"].size(),
                                 plan["candidates"].get<int64_t>())),
      std::string::npos);

  // --url and --history together, and a server that is not there.
  r = RunVigil({"select", "--url", server.url(), "--history", dir.File("n1.json")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = RunVigil({"select", "--url", "http://127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot reach the server"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace vigil
