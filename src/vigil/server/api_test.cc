#include "vigil/server/api.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vigil/core/json.h"
#include "vigil/eval/fleet_gen.h"
#include "vigil/select/history.h"
#include "vigil/server/api_fixture.h"
#include "vigil/server/dashboard.h"
#include "vigil/server/selection.h"
#include "vigil/store/sqlite_store.h"
#include "vigil/testing/healthy_fleet.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::server {
namespace {

class ApiTest : public ApiFixture {
 protected:
  std::string DbFile() const override { return dir_.File("fleet.db"); }
  testing::TempDir dir_;
  // The node's next validation: other figures (the same ones again are the same upload).
  static FleetRow NextRun(FleetRow row) {
    row.values.front().second *= 1.001;
    return row;
  }
};

TEST_F(ApiTest, UploadsAreJudgedByLearnedCriteriaThatNameTheComponent) {
  std::vector<FleetRow> rows = testing::HealthyFleet(30);
  Response r = Call("POST", "/api/v1/results", testing::SummaryLines(rows));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["stored"], 30);
  EXPECT_EQ(Body(r)["results"][0]["verdict"], "unjudged");

  r = Call("POST", "/api/v1/criteria/learn");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["version"], 1);
  EXPECT_EQ(Body(r)["nodes"], 30);
  // What the criteria find: GPU 5's GEMM 30% low, below, is within their reach.
  bool gemm = false;
  const Json learned = Body(r);
  for (const Json& reach : learned["reach"]) {
    if (reach["benchmark"] != "gemm-flops") continue;
    gemm = true;
    EXPECT_EQ(reach["part"], "GPU 0");
    EXPECT_LT(reach["slowdown"].get<double>(), 0.3) << reach.dump();
  }
  EXPECT_TRUE(gemm) << learned["reach"].dump();

  // The same node again, healthy, then with GPU 5's GEMM throughput 30% low.
  clock_.Advance(3600);
  const NodeResults doc = eval::NodeDocumentOf(rows[3], 3, 7);
  r = Call("POST", "/api/v1/results", DumpJson(ToJson(doc), 2));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["results"][0]["verdict"], "healthy") << r.body;
  EXPECT_EQ(Body(r)["results"][0]["criteria_version"], 1);
  FleetRow slow = rows[3];
  bool planted = false;
  for (auto& [key, value] : slow.values) {
    if (key.find("gemm") != std::string::npos && key.ends_with(":5")) {
      value *= 0.7;
      planted = true;
    }
  }
  ASSERT_TRUE(planted);
  r = Call("POST", "/api/v1/results", DumpJson(ToJson(eval::NodeDocumentOf(slow, 3, 7))));
  ASSERT_EQ(r.status, 201) << r.body;
  const Json judged = Body(r)["results"][0];
  EXPECT_EQ(judged["verdict"], "defective");
  EXPECT_EQ(judged["failing"], Json::array({"GPU 5"})) << judged.dump();

  // Latest state, filters, history.
  r = Call("GET", "/api/v1/nodes", "", {}, false);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["count"], 30);
  r = Call("GET", "/api/v1/nodes", "", {{"verdict", "defective"}}, false);
  ASSERT_EQ(Body(r)["count"], 1);
  EXPECT_EQ(Body(r)["nodes"][0]["node"], rows[3].node);
  EXPECT_EQ(Body(r)["nodes"][0]["age_seconds"], 0);
  r = Call("GET", "/api/v1/nodes", "", {{"hardware", rows[0].hardware}}, false);
  EXPECT_EQ(Body(r)["count"], 30);
  r = Call("GET", "/api/v1/nodes/" + rows[3].node, "", {}, false);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["uploads"], 3);
  ASSERT_EQ(Body(r)["history"].size(), 3u);
  EXPECT_EQ(Body(r)["history"][0]["verdict"], "defective");
  // Unjudged when it came, judged again by the learn as the node's latest upload then.
  EXPECT_EQ(Body(r)["history"][2]["verdict"], "healthy");
  EXPECT_EQ(Body(r)["history"][2]["criteria_version"], 1);
  r = Call("GET", "/api/v1/nodes/" + rows[3].node, "", {{"limit", "1"}}, false);
  EXPECT_EQ(Body(r)["history"].size(), 1u);

  // The criteria outlive the process: a new service over the same file judges by version 1.
  Open();
  EXPECT_EQ(service_->criteria()->version, 1);
  r = Call("GET", "/api/v1/criteria", "", {}, false);
  EXPECT_EQ(Body(r)["current"]["version"], 1);
  EXPECT_EQ(Body(r)["versions"].size(), 1u);
}

// Criteria learned for two hardware classes do not judge a node of a third: it stays unjudged
// (not defective) until a learn includes its class.
TEST_F(ApiTest, ANodeOfAClassWithoutCriteriaIsUnjudged) {
  eval::FleetGenOptions o;
  o.nodes = 60;
  o.defect_rate = 0;
  o.second_class = 0.5;
  const std::vector<FleetRow> rows = eval::GenerateFleet(o)->rows;
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  Response r = Call("POST", "/api/v1/criteria/learn");
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(service_->criteria()->criteria.classes.size(), 2u);

  FleetRow stranger = rows[0];
  stranger.node = "mi300-001";
  stranger.hardware = "8xMI300X";
  r = Call("POST", "/api/v1/results", testing::SummaryLines({stranger, rows[1]}));
  ASSERT_EQ(r.status, 201) << r.body;
  const Json results = Body(r)["results"];
  EXPECT_EQ(results[0]["verdict"], "unjudged") << results[0].dump();
  EXPECT_EQ(results[0]["failing"], Json::array());
  EXPECT_EQ(results[1]["verdict"], "healthy") << results[1].dump();
}

// A node whose driver lost a GPU reports it missing (a class of its own, "7x ..."): defective
// with the GPU named, whether criteria exist or not, so its vigil_node_healthy series stays.
TEST_F(ApiTest, ANodeMissingAGpuIsDefectiveWithoutCriteria) {
  FleetRow lost{"gpu-017",
                {{"gpu-presence/missing:3", 1}, {"gpu-presence/missing:0", 0}},
                "7x NVIDIA H100 80GB HBM3"};
  Response r = Call("POST", "/api/v1/results", testing::SummaryLines({lost}));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["results"][0]["verdict"], "defective") << r.body;
  EXPECT_EQ(Body(r)["results"][0]["failing"], Json::array({"GPU 3"})) << r.body;
}

TEST_F(ApiTest, ANodeMissingAGpuIsDefectiveUnderCriteriaOfAnotherClass) {
  const std::vector<FleetRow> rows = testing::HealthyFleet(20);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/criteria/learn").status, 201);
  const FleetRow lost{"gpu-018", {{"gpu-presence/missing:3", 1}}, "7x NVIDIA H100 80GB HBM3"};
  Response r = Call("POST", "/api/v1/results", testing::SummaryLines({lost}));
  EXPECT_EQ(Body(r)["results"][0]["verdict"], "defective") << r.body;
  const std::string metrics = Call("GET", "/metrics", "", {}, false).body;
  EXPECT_NE(metrics.find("vigil_node_healthy{node=\"gpu-018\",hardware=\"7x NVIDIA H100 80GB "
                         "HBM3\"} 0"),
            std::string::npos)
      << metrics;
}

TEST_F(ApiTest, WritesNeedTheTokenAndReadOnlyServersRefuseThem) {
  const std::string line = testing::SummaryLines(testing::HealthyFleet(1));
  Response r = Call("POST", "/api/v1/results", line, {}, false);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers.at(0).first, "WWW-Authenticate");
  r = api_->Handle(Request{"POST", "/api/v1/results", {}, "Bearer wrong", line});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Body(r)["error"], "wrong token");
  r = api_->Handle(Request{"POST", "/api/v1/results", {}, "Basic abc", line});
  EXPECT_EQ(r.status, 401);

  Api read_only(*service_, ApiOptions{});
  r = read_only.Handle(Request{"POST", "/api/v1/results", {}, "", line});
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(Body(r)["error"].get<std::string>().find("--token-file"), std::string::npos);
  EXPECT_EQ(read_only.Handle(Request{"GET", "/api/v1/nodes", {}, "", ""}).status, 200);
  Api insecure(*service_, ApiOptions{.token = "", .allow_insecure_writes = true});
  EXPECT_EQ(insecure.Handle(Request{"POST", "/api/v1/results", {}, "", line}).status, 201);
}

TEST_F(ApiTest, BadRequestsGetTheRightStatusAndAJsonError) {
  const struct {
    std::string method, path, body;
    std::map<std::string, std::string> query;
    int status;
    std::string message;
  } cases[] = {
      {"POST", "/api/v1/results", "{\"node\": \"a\", \"x/y\": }", {}, 400, "upload:1:"},
      {"POST", "/api/v1/results", "", {}, 400, "empty upload"},
      {"POST", "/api/v1/results", std::string(2 << 20, ' '), {}, 413, "over the limit"},
      {"GET", "/api/v1/nodes/nobody", "", {}, 404, "no node \"nobody\""},
      {"GET", "/api/v1/nodes", "", {{"verdict", "sick"}}, 400, "verdict"},
      {"GET", "/api/v1/nodes/x", "", {{"limit", "0"}}, 400, "limit"},
      {"GET", "/api/v1/alerts", "", {{"limit", "many"}}, 400, "limit"},
      {"GET", "/api/v1/nothing", "", {}, 404, "no endpoint"},
      {"GET", "/etc/passwd", "", {}, 404, "no page"},
      {"DELETE", "/api/v1/nodes", "", {}, 405, "method not allowed"},
      {"GET", "/api/v1/results", "", {}, 405, "use POST"},
      {"POST", "/api/v1/criteria/learn", "", {}, 409, "nothing to learn from"},
      {"POST", "/api/v1/alerts", "{\"machine\": \"m\"}", {}, 400, "kind: missing"},
      {"GET", "/nodes/nobody", "", {}, 404, "no node"},
      {"GET", "/api/v1/history", "", {}, 409, "no node in the fleet has uploaded"},
      {"GET", "/api/v1/selection", "", {}, 409, "no node in the fleet has uploaded"},
      {"GET", "/api/v1/selection", "", {{"max_share", "2"}}, 400, "max_share"},
      {"GET", "/api/v1/selection", "", {{"horizon", "soon"}}, 400, "horizon"},
      {"GET", "/api/v1/selection", "", {{"budget", "1e400"}}, 400, "budget"},
      {"GET", "/api/v1/selection", "", {{"top", "3"}}, 400, "top: unknown parameter"},
      {"POST", "/api/v1/selection", "", {}, 405, "use GET"},
  };
  for (const auto& c : cases) {
    const Response r = Call(c.method, c.path, c.body, c.query);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << ": " << r.body;
    const Json j = Body(r);
    EXPECT_EQ(j["status"], c.status);
    EXPECT_NE(j["error"].get<std::string>().find(c.message), std::string::npos)
        << c.path << ": " << r.body;
  }
  // Still serving, and the rejected upload was counted.
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  EXPECT_EQ(service_->counters().rejected.load(), 2);
}

TEST_F(ApiTest, AlertsAreStoredAndListed) {
  const std::string body =
      "{\"machine\":\"gpu-07\",\"kind\":\"rule\",\"rule\":\"xid 79\",\"component\":\"gpu3\","
      "\"onset\":100,\"detected\":101,\"evidence\":[]}\n"
      "{\"machine\":\"gpu-09\",\"kind\":\"divergence\",\"detected\":130}\n";
  Response r = Call("POST", "/api/v1/alerts", body);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["ids"], Json::array({1, 2}));
  r = Call("POST", "/api/v1/alerts",
           "[{\"machine\":\"gpu-07\",\"kind\":\"missing\",\"detected\":1}]");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Call("GET", "/api/v1/alerts", "", {{"machine", "gpu-07"}}, false);
  ASSERT_EQ(Body(r)["count"], 2);
  EXPECT_EQ(Body(r)["alerts"][0]["kind"], "missing");
  EXPECT_EQ(Body(r)["alerts"][1]["rule"], "xid 79");
  EXPECT_EQ(service_->counters().alerts.load(), 3);
}

TEST_F(ApiTest, IncidentsOfUploadedNodesAreStoredListedAndBadOnesNamed) {
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(testing::HealthyFleet(3))).status,
            201);
  const std::string node = store_->Nodes({})->at(0).node;
  // JSON Lines, then one pretty-printed object, then an array.
  Response r =
      Call("POST", "/api/v1/incidents",
           fmt::format("{{\"node\":\"{0}\",\"time\":1.7e9,\"kind\":\"GPU\","
                       "\"cost_node_hours\":64,\"job\":\"j-1\"}}\n\n"
                       "{{\"node\":\"{0}\",\"time\":\"2026-11-22T09:30:00Z\","
                       "\"kind\":\"network\",\"cost_node_hours\":2,\"note\":\"NCCL timeout\"}}\n",
                       node));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["ids"], Json::array({1, 2}));
  r = Call("POST", "/api/v1/incidents",
           fmt::format("{{\n  \"node\": \"{}\",\n  \"time\": 1.75e9,\n  \"kind\": \"HBM\",\n"
                       "  \"cost_node_hours\": 0.5\n}}\n",
                       node));
  ASSERT_EQ(r.status, 201) << r.body;
  // The same request again (its answer was lost): nothing new, the stored ids, 200.
  r = Call("POST", "/api/v1/incidents",
           fmt::format("{{\n  \"node\": \"{}\",\n  \"time\": 1.75e9,\n  \"kind\": \"HBM\",\n"
                       "  \"cost_node_hours\": 0.5\n}}\n",
                       node));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["stored"], 0);
  EXPECT_EQ(Body(r)["repeated"], 1);
  EXPECT_EQ(Body(r)["ids"], Json::array({3}));
  r = Call("GET", "/api/v1/incidents", "", {{"node", node}, {"limit", "2"}}, false);
  ASSERT_EQ(r.status, 200) << r.body;
  const Json listed = Body(r);
  ASSERT_EQ(listed["count"], 2);
  EXPECT_EQ(listed["incidents"][0]["kind"], "HBM");
  EXPECT_EQ(listed["incidents"][1]["note"], "NCCL timeout");
  EXPECT_EQ(listed["incidents"][1]["time"], 1795339800.0);
  EXPECT_EQ(listed["incidents"][1]["received"], FormatUtc(1.8e9));
  EXPECT_EQ(Body(Call("GET", "/api/v1/incidents", "", {{"node", "other"}}, false))["count"], 0);

  const struct {
    std::string body;
    int status;
    std::string message;
  } bad[] = {
      {"", 400, "incidents: no incident"},
      {"{\"node\":\"nobody\",\"time\":1.7e9,\"kind\":\"GPU\",\"cost_node_hours\":1}", 404,
       "incidents:1: node: no node \"nobody\""},
      {fmt::format("\n{{\"node\":\"{}\",\"time\":1.7e9,\"kind\":\"GPU\",\"cost_node_hours\":-1}}",
                   node),
       400, "incidents:2: cost_node_hours: expected a finite number >= 0"},
      {fmt::format("[{{\"node\":\"{}\",\"time\":\"yesterday\",\"kind\":\"GPU\","
                   "\"cost_node_hours\":1}}]",
                   node),
       400, "incidents: incident 1: time: expected ISO 8601"},
      {fmt::format("{{\"node\":\"{}\",\"time\":1.9e9,\"kind\":\"GPU\",\"cost_node_hours\":1}}",
                   node),
       400, "time: 2030-"},
      {fmt::format("{{\"node\":\"{}\",\"time\":0,\"kind\":\"GPU\",\"cost_node_hours\":1}}", node),
       400, "incidents:1: time: expected a time in 2000 or later"},
      {"{\"node\":\"a\",\"time\":1.7e9,\"kind\":\"GPU\",\"cost\":1}", 400,
       "incidents:1: cost: unknown field"},
      {"{\"node\":\"a\",\"time\":1.7e9,\"kind\":\"GPU\",\"cost_node_hours\":1}\n{\"node\":", 400,
       "incidents:2"},
  };
  for (const auto& c : bad) {
    r = Call("POST", "/api/v1/incidents", c.body);
    EXPECT_EQ(r.status, c.status) << c.body << ": " << r.body;
    EXPECT_NE(Body(r)["error"].get<std::string>().find(c.message), std::string::npos)
        << c.body << ": " << r.body;
  }
  // Writes need the token, as every write does; nothing of the rejected bodies was stored.
  EXPECT_EQ(Call("POST", "/api/v1/incidents", "{}", {}, false).status, 401);
  EXPECT_EQ(Body(Call("GET", "/api/v1/incidents", "", {}, false))["count"], 3);
}

// The fleet's history from the store reads back with select's reader as what was put in: nodes
// with their class, each upload a validation (a document's benchmarks with their measured times,
// summary lines with the fleet's mean times), the defective component with its benchmark, the
// incidents and the alerts.
// A replayed or zero-based detector trace cannot stretch the history over decades: alerts
// before a node's first upload and records far ahead of the clock are left out, and incidents
// before 2000 are refused.
TEST_F(ApiTest, TheHistoryWindowIgnoresRecordsOutsideIt) {
  std::vector<FleetRow> rows = testing::HealthyFleet(3);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  const std::string node = rows[0].node;
  for (const double detected : {0.0, clock_.WallSeconds() + 86400}) {
    ASSERT_EQ(Call("POST", "/api/v1/alerts",
                   fmt::format("{{\"machine\":\"{}\",\"kind\":\"rule\",\"rule\":\"xid 79\","
                               "\"component\":\"gpu1\",\"detected\":{}}}",
                               node, detected))
                  .status,
              201);
  }
  const Response refused = Call("POST", "/api/v1/incidents",
                                fmt::format("{{\"node\":\"{}\",\"time\":0,\"kind\":\"GPU\","
                                            "\"cost_node_hours\":1}}",
                                            node));
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body.find("time"), std::string::npos) << refused.body;
  clock_.Advance(3600);
  const Response r = Call("GET", "/api/v1/history", "", {}, false);
  ASSERT_EQ(r.status, 200) << r.body;
  const Result<select::History> h = select::ParseHistory(r.body, "history");
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->start_s, 1.8e9);
  EXPECT_EQ(h->end_s, clock_.WallSeconds());
  EXPECT_TRUE(h->alerts.empty());
  EXPECT_TRUE(h->incidents.empty());
}

TEST_F(ApiTest, TheFleetsHistoryReadsBackAsWhatWasPutIn) {
  std::vector<FleetRow> rows = testing::HealthyFleet(30);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/criteria/learn").status, 201);
  clock_.Advance(3600);
  FleetRow slow = rows[3];
  for (auto& [key, value] : slow.values) {
    if (key.find("gemm") != std::string::npos && key.ends_with(":5")) value *= 0.7;
  }
  NodeResults doc = eval::NodeDocumentOf(slow, 3, 7);
  for (size_t b = 0; b < doc.benchmarks.size(); ++b) doc.benchmarks[b].duration_s = 10.0 * (b + 1);
  Response r = Call("POST", "/api/v1/results", DumpJson(ToJson(doc)));
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(Body(r)["results"][0]["failing"], Json::array({"GPU 5"}));
  clock_.Advance(60);
  const std::string node = rows[3].node;
  ASSERT_EQ(Call("POST", "/api/v1/incidents",
                 fmt::format("{{\"node\":\"{}\",\"time\":{},\"kind\":\"GPU\","
                             "\"cost_node_hours\":48,\"job\":\"train-1\"}}",
                             node, clock_.WallSeconds() - 30))
                .status,
            201);
  ASSERT_EQ(Call("POST", "/api/v1/alerts",
                 fmt::format("{{\"machine\":\"{}\",\"kind\":\"rule\",\"rule\":\"xid 79\","
                             "\"component\":\"gpu5\",\"detected\":{}}}",
                             node, clock_.WallSeconds() - 10))
                .status,
            201);
  // A job-level stall naming the node: its component is the job's group, no part of the node.
  ASSERT_EQ(Call("POST", "/api/v1/alerts",
                 fmt::format("{{\"machine\":\"{}\",\"kind\":\"job\",\"rule\":\"stall\","
                             "\"component\":\"stage2\",\"detected\":{}}}",
                             node, clock_.WallSeconds() - 5))
                .status,
            201);

  r = Call("GET", "/api/v1/history", "", {}, false);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/x-ndjson");
  const Result<select::History> parsed = select::ParseHistory(r.body, "history");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const select::History& h = *parsed;
  EXPECT_EQ(select::HistoryToJsonl(h), r.body);  // nothing lost or changed on the way
  ASSERT_EQ(h.nodes.size(), 30u);
  EXPECT_EQ(h.nodes[0].node_class, rows[0].hardware);
  EXPECT_EQ(h.nodes[0].joined_s, 1.8e9);
  EXPECT_EQ(h.end_s, clock_.WallSeconds());
  ASSERT_EQ(h.validations.size(), 31u);
  const select::HistoryValidation& last = h.validations.back();
  EXPECT_EQ(h.nodes[static_cast<size_t>(last.node)].name, node);
  EXPECT_EQ(last.time_s, 1.8e9 + 3600);
  ASSERT_EQ(last.benchmarks.size(), doc.benchmarks.size());
  for (size_t b = 0; b < doc.benchmarks.size(); ++b) {
    EXPECT_EQ(last.benchmarks[b].name, doc.benchmarks[b].name);
    EXPECT_EQ(last.benchmarks[b].seconds, 10.0 * (b + 1));
  }
  // Judged by version 1: GPU 5's GEMM at 70% is past its limit, and the margin says so.
  const auto gpu = std::find_if(last.margins.begin(), last.margins.end(),
                                [](const auto& m) { return m.first == "GPU"; });
  ASSERT_NE(gpu, last.margins.end());
  EXPECT_LE(gpu->second, 0);
  ASSERT_EQ(last.findings.size(), 1u);
  EXPECT_EQ(last.findings[0].component, "GPU 5");
  EXPECT_EQ(last.findings[0].kind, "GPU");
  EXPECT_NE(last.findings[0].benchmark.find("gemm"), std::string::npos);
  // A summary line's benchmarks were not timed: each gets the time measured in the document.
  const select::HistoryValidation& first = h.validations.front();
  ASSERT_FALSE(first.benchmarks.empty());
  for (const select::BenchmarkRun& b : first.benchmarks) {
    const auto in_doc = std::find_if(last.benchmarks.begin(), last.benchmarks.end(),
                                     [&](const auto& d) { return d.name == b.name; });
    ASSERT_NE(in_doc, last.benchmarks.end()) << b.name;
    EXPECT_EQ(b.seconds, in_doc->seconds);
  }
  EXPECT_TRUE(first.findings.empty());
  EXPECT_FALSE(first.margins.empty());  // judged again by the learn, as the node's latest then
  ASSERT_EQ(h.incidents.size(), 1u);
  EXPECT_EQ(h.nodes[static_cast<size_t>(h.incidents[0].node)].name, node);
  EXPECT_EQ(h.incidents[0].kind, "GPU");
  EXPECT_EQ(h.incidents[0].cost_node_hours, 48);
  EXPECT_EQ(h.incidents[0].time_s, clock_.WallSeconds() - 30);
  ASSERT_EQ(h.alerts.size(), 2u);
  EXPECT_EQ(h.alerts[0].kind, "GPU");
  EXPECT_EQ(h.alerts[0].time_s, clock_.WallSeconds() - 10);
  EXPECT_EQ(h.alerts[1].kind, "node");
  EXPECT_EQ(h.alerts[1].time_s, clock_.WallSeconds() - 5);

  // The selection is planned from that history, as `vigil select --json` prints it.
  r = Call("GET", "/api/v1/selection", "", {{"horizon", "7d"}, {"max_share", "0.1"}}, false);
  ASSERT_EQ(r.status, 200) << r.body;
  const Result<select::Selection> local =
      select::SelectFromHistory(h, *SelectionQuery({{"horizon", "7d"}, {"max_share", "0.1"}}));
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ(Body(r), select::SelectionToJson(*local, h));
}

// The selection is computed again only when the service wrote to the store or other options are
// asked for.
TEST_F(ApiTest, TheSelectionIsCachedUntilTheStoreChanges) {
  std::vector<FleetRow> rows = testing::HealthyFleet(10);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string doc = DumpJson(ToJson(eval::NodeDocumentOf(rows[i], 3, i)));
    ASSERT_EQ(Call("POST", "/api/v1/results", doc).status, 201);
  }
  clock_.Advance(86400);
  // Validations but no incident: nothing to price a plan with, and the Selector says so.
  Response r = Call("GET", "/api/v1/selection", "", {}, false);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(Body(r)["error"].get<std::string>().find("no incident"), std::string::npos) << r.body;
  ASSERT_EQ(Call("POST", "/api/v1/incidents",
                 fmt::format("{{\"node\":\"{}\",\"time\":{},\"kind\":\"GPU\","
                             "\"cost_node_hours\":8}}",
                             rows[1].node, clock_.WallSeconds() - 3600))
                .status,
            201);
  SelectionCache cache(*service_);
  const select::SelectOptions defaults = *SelectionQuery({});
  const Result<std::string> first = cache.Answer(defaults);
  ASSERT_TRUE(first.ok()) << first.status().message();
  clock_.Advance(60);
  EXPECT_EQ(*cache.Answer(defaults), *first);
  EXPECT_EQ(cache.computed(), 1);
  ASSERT_TRUE(cache.Answer(*SelectionQuery({{"budget", "2"}})).ok());
  EXPECT_EQ(cache.computed(), 2);
  ASSERT_TRUE(cache.Answer(*SelectionQuery({{"budget", "2"}})).ok());
  EXPECT_EQ(cache.computed(), 2);
  ASSERT_EQ(Call("POST", "/api/v1/results", FormatFleetRow(NextRun(rows[2]))).status, 201);
  ASSERT_TRUE(cache.Answer(*SelectionQuery({{"budget", "2"}})).ok());
  EXPECT_EQ(cache.computed(), 3);

  // Each stored document is parsed once, however often the history is built again: the ten of
  // the first build, then the one new document, for the plan and the history alike.
  EXPECT_EQ(cache.documents_parsed(), 10);
  const std::string doc = DumpJson(ToJson(eval::NodeDocumentOf(NextRun(rows[3]), 3, 3)));
  ASSERT_EQ(Call("POST", "/api/v1/results", doc).status, 201);
  const Result<std::string> plan = cache.Answer(defaults);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const Result<std::string> history = cache.HistoryJsonl();
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(cache.documents_parsed(), 11);
  // And the history it builds from what it kept is the one a fresh build reads.
  SelectionCache fresh(*service_);
  EXPECT_EQ(*fresh.HistoryJsonl(), *history);
  EXPECT_EQ(fresh.documents_parsed(), 11);
}

TEST_F(ApiTest, MetricsExportVerdictsAgesFindingsAndCounters) {
  std::vector<FleetRow> rows = testing::HealthyFleet(10);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/criteria/learn").status, 201);
  FleetRow broken = rows[0];
  bool failed = false;
  for (auto& [key, value] : broken.values) {
    if (!failed && key.ends_with("/return_code")) value = failed = true;
  }
  ASSERT_TRUE(failed);
  clock_.Advance(60);
  ASSERT_EQ(Call("POST", "/api/v1/results", FormatFleetRow(broken)).status, 201);
  const Response m = Call("GET", "/metrics", "", {}, false);
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.content_type.rfind("text/plain; version=0.0.4", 0), 0u);
  const std::string& t = m.body;
  EXPECT_NE(t.find("vigil_node_healthy{node=\"" + rows[0].node + "\",hardware=\"" +
                   rows[0].hardware + "\"} 0\n"),
            std::string::npos)
      << t.substr(0, 2000);
  EXPECT_NE(t.find("vigil_node_last_validation_age_seconds{node=\"" + rows[1].node + "\"} 60\n"),
            std::string::npos);
  EXPECT_NE(t.find("vigil_nodes{verdict=\"defective\"} 1\n"), std::string::npos);
  EXPECT_NE(t.find("vigil_nodes{verdict=\"healthy\"} 9\n"), std::string::npos);  // judged again
  EXPECT_NE(t.find("vigil_nodes{verdict=\"unjudged\"} 0\n"), std::string::npos);
  EXPECT_NE(t.find("vigil_failing_components{component="), std::string::npos);
  EXPECT_NE(t.find("vigil_uploads_ingested_total 11\n"), std::string::npos);
  EXPECT_NE(t.find("vigil_criteria_version 1\n"), std::string::npos);
  EXPECT_NE(t.find("vigil_http_requests_total{route=\"/api/v1/results\",code=\"201\"} 2\n"),
            std::string::npos);
}

TEST_F(ApiTest, DashboardListsNodesAndPlotsTheirHistoryWithNamesEscaped) {
  std::vector<FleetRow> rows = testing::HealthyFleet(8);
  rows[2].node = "<img src=x onerror=alert(1)>";
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/criteria/learn").status, 201);
  clock_.Advance(86400);
  ASSERT_EQ(Call("POST", "/api/v1/results", FormatFleetRow(NextRun(rows[1]))).status, 201);

  Response r = Call("GET", "/", "", {}, false);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.body.find("<tr data-node=\"" + rows[0].node + "\">"), std::string::npos);
  EXPECT_NE(r.body.find("class=\"verdict healthy\""), std::string::npos);
  EXPECT_EQ(r.body.find("<img"), std::string::npos);
  EXPECT_NE(r.body.find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_EQ(r.body.find("http://"), r.body.find("http://www.w3.org"));  // nothing fetched
  r = Call("GET", "/", "", {{"verdict", "defective"}}, false);
  EXPECT_EQ(r.body.find("data-node"), std::string::npos);

  r = Call("GET", "/nodes/" + rows[1].node, "", {}, false);
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("<svg"), std::string::npos);
  EXPECT_NE(r.body.find("class=\"band\""), std::string::npos);  // the learned range
  EXPECT_NE(r.body.find("<polyline"), std::string::npos);
  EXPECT_NE(r.body.find("2 uploads"), std::string::npos);
  EXPECT_EQ(HtmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST_F(ApiTest, ARetriedUploadGetsTheFirstAnswerAndIsStoredOnce) {
  const std::string doc =
      DumpJson(ToJson(eval::NodeDocumentOf(testing::HealthyFleet(1)[0], 3, 1)), 2);
  Response first = Call("POST", "/api/v1/results", doc);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(Body(first)["stored"], 1);
  EXPECT_EQ(Body(first)["results"][0]["repeated"], false);
  clock_.Advance(30);
  Response again = Call("POST", "/api/v1/results", doc);
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(Body(again)["stored"], 0);
  EXPECT_EQ(Body(again)["repeated"], 1);
  Json a = Body(again)["results"][0], f = Body(first)["results"][0];
  EXPECT_EQ(a["repeated"], true);
  a.erase("repeated");
  f.erase("repeated");
  EXPECT_EQ(a, f);  // id, verdict, received... as the first time
  const std::string node = f["node"].get<std::string>();
  EXPECT_EQ(Body(Call("GET", "/api/v1/nodes/" + node))["uploads"], 1);
  EXPECT_NE(Call("GET", "/metrics").body.find("vigil_uploads_repeated_total 1\n"),
            std::string::npos);
}

TEST_F(ApiTest, RetiredNodesLeaveTheListsAndMetricsAndRenamedOnesKeepTheirHistory) {
  const std::vector<FleetRow> rows = testing::HealthyFleet(8);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  const std::string gone = rows[0].node, moved = rows[1].node;

  Response r = Call("POST", "/api/v1/nodes/" + gone + "/retire");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["retired"], FormatUtc(clock_.WallSeconds()));
  EXPECT_EQ(Body(Call("GET", "/api/v1/nodes"))["count"], 7);
  r = Call("GET", "/api/v1/nodes", "", {{"retired", "true"}});
  ASSERT_EQ(Body(r)["count"], 1);
  EXPECT_EQ(Body(r)["nodes"][0]["node"], gone);
  EXPECT_EQ(Call("GET", "/metrics").body.find("node=\"" + gone + "\""), std::string::npos);
  r = Call("GET", "/api/v1/nodes/" + gone);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["history"].size(), 1u);
  EXPECT_EQ(Body(Call("GET", "/healthz"))["nodes"], 7);

  r = Call("POST", "/api/v1/nodes/" + moved + "/rename", R"({"to": "renamed-01"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["node"], "renamed-01");
  EXPECT_EQ(Body(r)["history"].size(), 1u);
  EXPECT_EQ(Call("GET", "/api/v1/nodes/" + moved).status, 404);

  // A new upload brings the retired node back.
  ASSERT_EQ(Call("POST", "/api/v1/results", FormatFleetRow(NextRun(rows[0]))).status, 201);
  r = Call("GET", "/api/v1/nodes/" + gone);
  EXPECT_EQ(Body(r)["retired"], nullptr);
  EXPECT_EQ(Body(r)["uploads"], 2);
  EXPECT_EQ(Body(Call("GET", "/api/v1/nodes"))["count"], 8);

  const struct {
    std::string method, path, body;
    bool auth;
    int status;
    std::string message;
  } cases[] = {
      {"POST", "/api/v1/nodes/nobody/retire", "", true, 404, "no node \"nobody\""},
      {"POST", "/api/v1/nodes/nobody/rename", R"({"to": "x"})", true, 404, "no node"},
      {"POST", "/api/v1/nodes/renamed-01/rename", R"({"to": ")" + gone + "\"}", true, 409,
       "exists already"},
      {"POST", "/api/v1/nodes/renamed-01/rename", R"({"name": "x"})", true, 400, "rename: to:"},
      {"POST", "/api/v1/nodes/renamed-01/rename", R"({"to": "a/b"})", true, 400, "rename: to:"},
      {"POST", "/api/v1/nodes/renamed-01/rename", "{", true, 400, "rename:"},
      {"POST", "/api/v1/nodes/renamed-01/retire", "", false, 401, "Authorization"},
      {"GET", "/api/v1/nodes/renamed-01/retire", "", true, 405, "use POST"},
      {"POST", "/api/v1/nodes/renamed-01/delete", "", true, 404, "no endpoint"},
      {"GET", "/api/v1/nodes", "", true, 400, "retired: expected true or false"},
  };
  for (const auto& c : cases) {
    const std::map<std::string, std::string> query =
        c.path == "/api/v1/nodes" ? std::map<std::string, std::string>{{"retired", "yes"}}
                                  : std::map<std::string, std::string>{};
    r = Call(c.method, c.path, c.body, query, c.auth);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << ": " << r.body;
    EXPECT_NE(Body(r)["error"].get<std::string>().find(c.message), std::string::npos)
        << c.path << ": " << r.body;
  }
}

TEST_F(ApiTest, LearnReportsTheClassesLeftOutAndTheNodesJudgedAgain) {
  // Two classes, so that the odd node's is not judged by the only class learned.
  eval::FleetGenOptions o;
  o.nodes = 30;
  o.defect_rate = 0;
  o.second_class = 0.5;
  std::vector<FleetRow> rows = eval::GenerateFleet(o)->rows;
  const FleetRow lost{"gpu-017", rows[0].values, "7x NVIDIA H100 80GB HBM3"};
  rows.push_back(lost);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  const Response r = Call("POST", "/api/v1/criteria/learn");
  ASSERT_EQ(r.status, 201) << r.body;
  const Json j = Body(r);
  EXPECT_EQ(j["nodes"], 30);
  EXPECT_EQ(j["classes"].size(), 2u);
  EXPECT_EQ(j["rejudged"], 31);
  EXPECT_EQ(j["changed"], 30);  // unjudged until now; the odd node stays so
  ASSERT_EQ(j["left_out"].size(), 1u);
  EXPECT_EQ(j["left_out"][0]["hardware"], lost.hardware);
  EXPECT_EQ(j["left_out"][0]["nodes"], Json::array({"gpu-017"}));
  EXPECT_EQ(j["left_out"][0]["reason"], "1 node, fewer than the 5 needed to learn from");
  EXPECT_EQ(Body(Call("GET", "/api/v1/nodes", "", {{"verdict", "unjudged"}}))["count"], 1);
}

// A database damaged under the running server: an upload is the server's failure (500, which
// agents keep and retry), not the client's (400, which they set aside as refused).
TEST_F(ApiTest, AWriteToADamagedDatabaseIsA500) {
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(testing::HealthyFleet(5))).status,
            201);
  Open();  // the store's writer starts with no page of the tables read
  const std::string path = dir_.File("fleet.db");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  ASSERT_GT(st.st_size, 4096);
  // Every page but the first (the header and the schema) overwritten.
  const std::string junk(static_cast<size_t>(st.st_size) - 4096, '\x5a');
  const int fd = open(path.c_str(), O_WRONLY);
  ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), 4096), static_cast<ssize_t>(junk.size()));
  close(fd);
  const Response r =
      Call("POST", "/api/v1/results", testing::SummaryLines(testing::HealthyFleet(1)));
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_NE(Body(r)["error"].get<std::string>().find("the database is damaged"), std::string::npos)
      << r.body;
}

// The database file deleted under the running server: /healthz fails and writes are refused
// with 503 (agents keep them), instead of being acknowledged into a file that is gone.
TEST_F(ApiTest, ADeletedDatabaseFailsHealthAndRefusesWritesWith503) {
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(testing::HealthyFleet(2))).status,
            201);
  ASSERT_EQ(Call("GET", "/healthz").status, 200);
  ASSERT_EQ(unlink(dir_.File("fleet.db").c_str()), 0);
  Response r = Call("GET", "/healthz");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(Body(r)["error"].get<std::string>().find("was deleted"), std::string::npos) << r.body;
  r = Call("POST", "/api/v1/results", testing::SummaryLines(testing::HealthyFleet(1)));
  EXPECT_EQ(r.status, 503) << r.body;
}

// /metrics and the fleet page read the service's fleet in memory, kept up to date by each write:
// after uploads, a learn, a retirement and a rename they show what a restarted service, which
// loads the fleet from the store, shows.
// The node names of the fleet page's rows, in order.
std::vector<std::string> PageNodes(const std::string& html) {
  std::vector<std::string> out;
  constexpr std::string_view kRow = "<tr data-node=\"";
  for (size_t at = 0; (at = html.find(kRow, at)) != std::string::npos; ++at) {
    const size_t name = at + kRow.size();
    out.push_back(html.substr(name, html.find('"', name) - name));
  }
  return out;
}

TEST_F(ApiTest, TheFleetPageRanksSearchesAndPagesOnTheServer) {
  std::vector<FleetRow> rows = testing::HealthyFleet(12);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/criteria/learn").status, 201);
  FleetRow slow = NextRun(rows[7]);
  for (auto& [key, value] : slow.values) {
    if (key.find("gemm") != std::string::npos && key.ends_with(":5")) value *= 0.7;
  }
  clock_.Advance(60);
  Response r = Call("POST", "/api/v1/results", FormatFleetRow(slow));
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(Body(r)["results"][0]["verdict"], "defective") << r.body;

  r = Call("GET", "/", "", {}, false);
  ASSERT_EQ(r.status, 200);
  const std::vector<std::string> all = PageNodes(r.body);
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(all[0], rows[7].node);  // the defective node first, though not first by name
  // Every healthy node has its share of the band shown, and the page reloads itself.
  size_t ranked = 0;
  for (size_t at = 0; (at = r.body.find("class=\"nearest\" title=", at)) != std::string::npos;
       ++at) {
    ++ranked;
  }
  EXPECT_EQ(ranked, 12u);
  EXPECT_NE(r.body.find("<meta http-equiv=\"refresh\" content=\"30\">"), std::string::npos);
  // The same order after a restart: the figures are computed again from the stored uploads.
  Open();
  EXPECT_EQ(PageNodes(Call("GET", "/", "", {}, false).body), all);

  r = Call("GET", "/", "", {{"per_page", "5"}, {"page", "3"}, {"refresh", "0"}}, false);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(PageNodes(r.body), (std::vector<std::string>{all[10], all[11]}));
  EXPECT_EQ(r.body.find("http-equiv"), std::string::npos);
  EXPECT_NE(r.body.find("Nodes 11-12 of 12, worst first."), std::string::npos);
  r = Call("GET", "/", "", {{"q", rows[3].node}}, false);
  EXPECT_EQ(PageNodes(r.body), (std::vector<std::string>{rows[3].node}));
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"per_page", "0"}, {"per_page", "1001"}, {"page", "0"}, {"refresh", "x"}}) {
    r = Call("GET", "/", "", {{name, value}}, false);
    EXPECT_EQ(r.status, 400) << name << "=" << value;
    EXPECT_NE(r.body.find(name + ": expected a whole number"), std::string::npos) << r.body;
  }
}

TEST_F(ApiTest, TheFleetInMemoryIsWhatTheStoreHoldsAfterEveryKindOfWrite) {
  std::vector<FleetRow> rows = testing::HealthyFleet(10);
  ASSERT_EQ(Call("POST", "/api/v1/results", testing::SummaryLines(rows)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/criteria/learn").status, 201);
  FleetRow broken = NextRun(rows[0]);
  for (auto& [key, value] : broken.values) {
    if (key.ends_with("/return_code")) {
      value = 1;
      break;
    }
  }
  clock_.Advance(60);
  ASSERT_EQ(Call("POST", "/api/v1/results", FormatFleetRow(broken)).status, 201);
  ASSERT_EQ(Call("POST", "/api/v1/nodes/" + rows[1].node + "/retire").status, 200);
  ASSERT_EQ(
      Call("POST", "/api/v1/nodes/" + rows[2].node + "/rename", R"({"to": "zz-renamed"})").status,
      200);
  const auto fleet_lines = [&] {
    std::string out;
    const std::string body = Call("GET", "/metrics", "", {}, false).body;
    for (std::string_view rest = body; !rest.empty();) {
      const size_t eol = rest.find('\n');
      const std::string_view line = rest.substr(0, eol);
      if (line.starts_with("vigil_node") || line.starts_with("vigil_failing")) {
        (out += line) += '\n';
      }
      rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
    }
    return out;
  };
  const std::string metrics = fleet_lines();
  const std::string page = Call("GET", "/", "", {}, false).body;
  EXPECT_NE(metrics.find("vigil_nodes{verdict=\"defective\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("vigil_nodes{verdict=\"healthy\"} 8\n"), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("node=\"" + rows[1].node + "\""), std::string::npos);  // retired
  EXPECT_NE(metrics.find("node=\"zz-renamed\""), std::string::npos);
  EXPECT_NE(page.find("data-node=\"zz-renamed\""), std::string::npos);

  Open();  // a restart: the fleet is read from the store
  EXPECT_EQ(fleet_lines(), metrics);
  EXPECT_EQ(Call("GET", "/", "", {}, false).body, page);
}

TEST_F(ApiTest, TheNetworkEndpointLocalisesTheUploadedPairs) {
  std::string lines;
  for (int a = 0; a < 4; ++a) {
    Json row = {{"node", fmt::format("n{}", a)}};
    for (int b = 0; b < 4; ++b) {
      if (a != b) row[fmt::format("net-pair/bw_gbps:n{}-n{}", a, b)] = a == 3 || b == 3 ? 0.4 : 9.9;
    }
    lines += DumpJson(row) + "\n";
  }
  ASSERT_EQ(Call("POST", "/api/v1/results", lines).status, 201);
  const Response r = Call("GET", "/api/v1/network", "", {}, false);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["pairs"]["bandwidth"], 12);
  ASSERT_EQ(Body(r)["culprits"].size(), 1u) << r.body;
  EXPECT_EQ(Body(r)["culprits"][0]["subject"], "n3");
  EXPECT_EQ(Call("POST", "/api/v1/network").status, 405);
}

}  // namespace
}  // namespace vigil::server
