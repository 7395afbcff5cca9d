#include "vigil/server/dashboard.h"

#include <gtest/gtest.h>

#include "vigil/core/json.h"
#include "vigil/detect/detector.h"
#include "vigil/learned/judge.h"

namespace vigil::server {
namespace {

store::NodeState NodeOf(std::string name, Verdict verdict) {
  store::NodeState n;
  n.node = std::move(name);
  n.verdict = verdict;
  return n;
}

constexpr char kEvil[] = "<script>alert(\"x\")</script>&";
constexpr char kEscaped[] = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;";

TEST(DashboardTest, FiguresReadAsPeopleWriteThem) {
  EXPECT_EQ(Readable(33858.0635), "33,858");
  EXPECT_EQ(Readable(235.0457), "235");
  EXPECT_EQ(Readable(23.68471956), "23.68");
  EXPECT_EQ(Readable(0.0057), "0.0057");
  EXPECT_EQ(Readable(1234567), "1,234,567");
  EXPECT_EQ(Readable(-98765.4), "-98,765");
  EXPECT_EQ(Readable(0), "0");
  EXPECT_EQ(Readable(100), "100");
  EXPECT_EQ(Readable(2e-9), "2.000e-09");
  EXPECT_EQ(Readable(std::nan("")), "-");
}

TEST(DashboardTest, UnitsComeFromSuperBenchsNames) {
  EXPECT_EQ(UnitOfMetric("gemm-flops/fp16_flops:3"), "GFLOPS");
  EXPECT_EQ(UnitOfMetric("gemm-flops/int8_tc_iops:0"), "GIOPS");
  EXPECT_EQ(UnitOfMetric("gpu-gemm/bf16_tflops:3"), "TFLOPS");
  EXPECT_EQ(UnitOfMetric("cpu-stream/triad_gbps"), "GB/s");
  EXPECT_EQ(UnitOfMetric("mem-bw/h2d_bw:1"), "GB/s");
  EXPECT_EQ(UnitOfMetric("ib-loopback/ib_write_8388608_bw:2"), "GB/s");
  EXPECT_EQ(UnitOfMetric("nccl-bw:ib/allreduce_8589934592_busbw"), "GB/s");
  EXPECT_EQ(UnitOfMetric("kernel-launch/event_time"), "ms");
  EXPECT_EQ(UnitOfMetric("gpt_models/pytorch-gpt2-large/fp16_train_throughput"), "samples/s");
  EXPECT_EQ(UnitOfMetric("bert_models/pytorch-bert-base/steptime_train_float32"), "ms");
  EXPECT_EQ(UnitOfMetric("disk-benchmark/nvme0n1_seq_read_bw"), "");  // not stated: none claimed
  EXPECT_EQ(UnitOfMetric("gemm-flops/return_code"), "");
}

TEST(DashboardTest, FleetAddressesEscapeWhatTheyCarry) {
  FleetQuery q;
  EXPECT_EQ(FleetUrl(q, 0), "/");
  q.search = "gpu 3&x=<";
  q.filter.verdict = Verdict::kDefective;
  q.per_page = 50;
  EXPECT_EQ(FleetUrl(q, 2), "/?verdict=defective&q=gpu%203%26x%3D%3C&per_page=50&page=3");
}

FleetPage PageOf(std::vector<RankedNode> nodes, size_t matched, size_t page, size_t pages) {
  FleetPage p;
  p.query.per_page = 2;
  p.query.page = page;
  p.ranking.nodes = std::move(nodes);
  p.ranking.matched = matched;
  p.ranking.page = page;
  p.ranking.pages = pages;
  p.now = 1000;
  return p;
}

TEST(DashboardTest, TheFleetPageListsItsNodesInTheRankingsOrderAndEscapesThem) {
  RankedNode bad{NodeOf(kEvil, Verdict::kDefective), {"gemm-flops/fp16_flops:3", 2.5, 250}};
  bad.node.failing = {ParseComponent("GPU 3")};
  RankedNode good{NodeOf("n2", Verdict::kHealthy), {"mem-bw/h2d_bw:0", 0.42, 25}};
  FleetPage p = PageOf({bad, good}, 5, 1, 3);
  p.query.search = kEvil;
  const std::string html = RenderFleetPage(p);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find(std::string("<tr data-node=\"") + kEscaped), std::string::npos);
  EXPECT_LT(html.find(kEscaped), html.find("data-node=\"n2\""));
  EXPECT_NE(html.find("250% &middot; gemm-flops/fp16_flops:3"), std::string::npos);
  EXPECT_NE(html.find("42% &middot; mem-bw/h2d_bw:0"), std::string::npos);
  // The rank counts on from the pages before; the range and the links keep the search.
  EXPECT_NE(html.find("<td class=\"num\">3</td>"), std::string::npos);
  EXPECT_NE(html.find("Nodes 3-4 of 5, worst first."), std::string::npos);
  EXPECT_NE(html.find("page 2 of 3"), std::string::npos);
  EXPECT_NE(html.find("href=\"/?q=%3Cscript%3Ealert%28%22x%22%29%3C%2Fscript%3E%26&amp;per_page=2"
                      "&amp;page=3\""),
            std::string::npos);
  EXPECT_NE(html.find(std::string("name=\"q\" value=\"") + kEscaped), std::string::npos);
  EXPECT_NE(html.find("<meta http-equiv=\"refresh\" content=\"30\">"), std::string::npos);
}

TEST(DashboardTest, AlertsComeFirstWithTheirRuleComponentAndEvidence) {
  detect::Alert a;
  a.machine = "<b>n7</b>";
  a.kind = detect::AlertKind::kDivergence;
  a.rule = "component";
  a.component = "gpu3";
  a.detected = 1.8e9;
  a.evidence.push_back({"sm_clock", "mean", 1200, 1980, -14.2, -0.394});
  a.evidence.push_back({"step_time", "mean", 2.6, 2, 9.5, 0.3, "own_past"});
  store::StoredAlert stored{
      1, 1.8e9, a.machine, "divergence", a.detected, DumpJson(detect::AlertToJson(a))};
  FleetPage p = PageOf({}, 0, 0, 0);
  p.alerts = {stored};
  const std::string html = RenderFleetPage(p);
  const size_t alerts = html.find("id=\"alerts\"");
  ASSERT_NE(alerts, std::string::npos);
  EXPECT_LT(alerts, html.find("id=\"nodes\""));
  EXPECT_NE(html.find("<td>&lt;b&gt;n7&lt;/b&gt;</td><td>divergence: component</td><td>gpu3</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("sm_clock mean = 1,200 against a peer median of 1,980 (-14.2 robust "
                      "sigmas, -39%)"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("step_time mean = 2.6 against its own past level of 2 (+9.5 robust sigmas, "
                      "+30%)"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("No node matches."), std::string::npos);
}

TEST(DashboardTest, TheSelectorsPlanListsNodeBenchmarksWhyAndBenefitEscaped) {
  FleetPage p = PageOf({}, 0, 0, 0);
  p.selection_note = "the history has no incident: no incident penalty can be learned from it";
  std::string html = RenderFleetPage(p);
  EXPECT_NE(html.find("<p id=\"selection\">No plan: the history has no incident"),
            std::string::npos)
      << html;

  p.selection = *ParseJson(R"({"at": 1800000000, "candidates": 3, "model": {"kind": "cox"},
      "validations": [{"node": "<b>n7</b>", "benchmarks": ["gemm-flops", "nccl-bw:ib"],
      "probability": 0.25, "averted_node_hours": 6.5, "cost_node_hours": 0.5,
      "net_node_hours": 6, "why": "days_since_validation x2.1"}]})",
                           "plan");
  html = RenderFleetPage(p);
  const size_t table = html.find("<table id=\"selection\">");
  ASSERT_NE(table, std::string::npos) << html;
  EXPECT_LT(html.find("id=\"nodes\""), table);
  EXPECT_NE(html.find("1 of 3 nodes whose validation pays, planned with the cox risk model, as of "
                      "2027-01-15T08:00:00.000Z"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td><a href=\"/nodes/%3Cb%3En7%3C%2Fb%3E\">&lt;b&gt;n7&lt;/b&gt;</a></td>"
                      "<td>gemm-flops, nccl-bw:ib</td><td>days_since_validation x2.1</td>"
                      "<td>25%</td><td>6.5 averted for 0.5 spent: 6 net</td>"),
            std::string::npos)
      << html;

  p.selection = *ParseJson(R"({"at": 1800000000, "candidates": 0, "validations": []})", "plan");
  EXPECT_NE(RenderFleetPage(p).find("No validation pays now."), std::string::npos);
}

TEST(DashboardTest, TheNodePageShowsEveryFindingWithUnitsAndEscapesIt) {
  learned::Finding low;
  low.component = ParseComponent("GPU 3");
  low.metric = "gemm-flops/fp16_flops:3";
  low.value = 25000;
  low.expected_low = 32000;
  low.expected_high = INFINITY;
  low.deviation = -0.2617;
  low.severity = learned::Severity::kMajor;
  learned::Finding odd = low;
  odd.metric = kEvil;
  odd.severity = learned::Severity::kCritical;
  store::Upload u;
  u.node = "n1";
  u.received = 1.8e9;
  u.verdict = Verdict::kDefective;
  u.findings = DumpJson(Json::array({learned::FindingToJson(low), learned::FindingToJson(odd)}));
  u.row = FleetRow{"n1", {{"gemm-flops/fp16_flops:3", 25000}}, ""};
  NodePage p;
  p.node.node = "n1";
  p.node.verdict = Verdict::kDefective;
  p.history = {u};
  p.now = 1.8e9 + 60;
  const std::string html = RenderNodePage(p);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Findings (2)</h2>"), std::string::npos);
  // The critical one first, then the major one with its figures and unit.
  EXPECT_LT(html.find(kEscaped), html.find("<td>gemm-flops/fp16_flops:3</td>"));
  EXPECT_NE(html.find("<td class=\"major\">major</td><td>GPU 3</td><td>gemm-flops/fp16_flops:3"
                      "</td><td>fleet</td><td class=\"num value\">25,000 GFLOPS</td>"
                      "<td class=\"expected\">at least 32,000 GFLOPS</td><td class=\"num "
                      "deviation\">-26.2% from the fleet&#39;s centre</td>"),
            std::string::npos)
      << html;
  // Its plot, under its component's heading, in its unit.
  EXPECT_NE(html.find("<h3>GPU 3</h3>"), std::string::npos);
  EXPECT_NE(html.find("gemm-flops/fp16_flops:3 (GFLOPS)"), std::string::npos);

  p.units["gemm-flops/fp16_flops:3"] = "FLOP/ms";  // the document's unit wins over the name's
  EXPECT_NE(RenderNodePage(p).find("25,000 FLOP/ms"), std::string::npos);
}

}  // namespace
}  // namespace vigil::server
