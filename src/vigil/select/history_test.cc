#include "vigil/select/history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace vigil::select {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kHeader =
    R"({"format":"vigil-history","version":1,"start":1000,"end":900000})"
    "\n";

std::string WithHeader(std::string_view body) { return std::string(kHeader) + std::string(body); }

constexpr std::string_view kTwoNodes =
    R"({"record":"node","node":"n1","class":"H100","joined":1000})"
    "\n"
    R"({"record":"node","node":"n2","class":"A100","joined":5000})"
    "\n";

TEST(HistoryTest, ReadsEveryRecordAndWritesItBack) {
  const std::string text = WithHeader(
      std::string(kTwoNodes) +
      R"({"record":"incident","node":"n2","time":9000,"kind":"GPU","cost_node_hours":12.5})"
      "\n"
      R"({"record":"validation","node":"n1","time":8000,"benchmarks":[{"name":"gemm-flops","seconds":600}],"margins":{"GPU":0.1,"HBM":-0.02},"findings":[{"component":"HBM","kind":"HBM","benchmark":"gemm-flops"}]})"
      "\n"
      R"({"record":"alert","node":"n1","time":7000,"kind":"GPU"})"
      "\n");
  const Result<History> h = ParseHistory(text, "h.jsonl");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->nodes.size(), 2u);
  EXPECT_EQ(h->nodes[1].node_class, "A100");
  ASSERT_EQ(h->validations.size(), 1u);
  EXPECT_EQ(h->validations[0].benchmarks[0].seconds, 600);
  EXPECT_EQ(h->validations[0].margins[1].second, -0.02);
  EXPECT_EQ(h->validations[0].findings[0].kind, "HBM");
  EXPECT_EQ(h->incidents[0].node, 1);
  EXPECT_EQ(h->incidents[0].cost_node_hours, 12.5);
  EXPECT_EQ(h->alerts[0].time_s, 7000);

  const Result<History> again = ParseHistory(HistoryToJsonl(*h), "again");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(HistoryToJsonl(*again), HistoryToJsonl(*h));
}

struct BadCase {
  std::string text;
  std::string error;
};

class BadHistoryTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadHistoryTest, NamesFileLineAndField) {
  const Result<History> h = ParseHistory(GetParam().text, "h.jsonl");
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(h.status().message(), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadHistoryTest,
    ::testing::Values(
        BadCase{"", "h.jsonl: empty history"}, BadCase{std::string(kHeader), "h.jsonl: no nodes"},
        BadCase{R"({"format":"vigil-history","version":2,"start":0,"end":1})",
                "h.jsonl:1: version: version 2 is not supported"},
        BadCase{R"({"record":"node","node":"n1","class":"H100","joined":1000})",
                "h.jsonl:1: format: expected \"vigil-history\""},
        BadCase{
            WithHeader(
                std::string(kTwoNodes) +
                R"({"record":"incident","node":"n2","time":2000,"kind":"GPU","cost_node_hours":1})"),
            "h.jsonl:4: time: before node \"n2\" joined the fleet"},
        BadCase{WithHeader(R"({"record":"alert","node":"n9","time":2000,"kind":"GPU"})"),
                "h.jsonl:2: node: \"n9\" has no node record before this line"},
        BadCase{
            WithHeader(
                std::string(kTwoNodes) +
                R"({"record":"incident","node":"n1","time":2000,"kind":"GPU","cost_node_hours":-1})"),
            "h.jsonl:4: cost_node_hours: expected a finite number >= 0"},
        BadCase{WithHeader(std::string(kTwoNodes) +
                           R"({"record":"alert","node":"n1","time":9e9,"kind":"GPU"})"),
                "h.jsonl:4: time: outside the header's [start, end]"},
        BadCase{
            WithHeader(
                std::string(kTwoNodes) +
                R"({"record":"validation","node":"n1","time":2000,"benchmarks":[],"findings":[{"component":"GPU 1","kind":"GPU","benchmark":"x"}]})"),
            "h.jsonl:4: findings[0].benchmark: \"x\" is not among"},
        BadCase{
            WithHeader(
                std::string(kTwoNodes) +
                R"({"record":"validation","node":"n1","time":2000,"benchmarks":[{"name":"a","seconds":1},{"name":"b","secs":1}],"findings":[]})"),
            "h.jsonl:4: benchmarks[1].secs: unknown field"},
        BadCase{
            WithHeader(
                std::string(kTwoNodes) +
                R"({"record":"validation","node":"n1","time":2000,"benchmarks":[],"margin":{},"findings":[]})"),
            "h.jsonl:4: margin: unknown field"},
        BadCase{WithHeader(std::string(kTwoNodes) + std::string(kTwoNodes)),
                "h.jsonl:4: node: \"n1\" is declared twice"},
        BadCase{WithHeader(std::string(kTwoNodes) + R"({"record":"reboot"})"),
                "h.jsonl:4: record: expected node, validation, incident or alert"},
        BadCase{WithHeader("[1,2]"), "h.jsonl:2: line: expected a JSON object"},
        BadCase{WithHeader("{\"record\":"), "h.jsonl:2"}));

}  // namespace
}  // namespace vigil::select
