#include "vigil/results/summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "vigil/core/file.h"
#include "vigil/core/json.h"

namespace vigil {
namespace {

const std::string kSuperBenchResults =
    std::string(VIGIL_SOURCE_DIR) + "/tests/data/superbench_test_results.jsonl";

// Reading SuperBench's own summary and writing it back must lose nothing: the same nodes, the
// same keys in the same order, the same values to the last bit.
TEST(SummaryTest, SuperBenchFileRoundTripsLosslessly) {
  Result<std::vector<FleetRow>> rows = ReadFleetSummary(kSuperBenchResults);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].node, "sb-validation-01");

  const auto out = std::filesystem::temp_directory_path() / "vigil-summary-roundtrip.jsonl";
  ASSERT_TRUE(WriteFleetSummary(out.string(), *rows).ok());
  const std::string original = *ReadFile(kSuperBenchResults);
  const std::string written = *ReadFile(out.string());
  std::filesystem::remove(out);

  // Compare as JSON, line by line: key order, key text and every value exactly.
  size_t a = 0, b = 0;
  int lines = 0;
  while (a < original.size() && b < written.size()) {
    const size_t ea = original.find('\n', a), eb = written.find('\n', b);
    Json ja = *ParseJson(original.substr(a, ea - a), "orig");
    Json jb = *ParseJson(written.substr(b, eb - b), "written");
    ASSERT_EQ(ja.size(), jb.size());
    auto ia = ja.begin();
    auto ib = jb.begin();
    for (; ia != ja.end(); ++ia, ++ib) {
      ASSERT_EQ(ia.key(), ib.key());
      if (ia->is_string()) {
        EXPECT_EQ(*ia, *ib);
      } else {
        EXPECT_EQ(ia->get<double>(), ib->get<double>()) << ia.key();  // bit-exact
      }
    }
    ++lines;
    a = ea == std::string::npos ? original.size() : ea + 1;
    b = eb == std::string::npos ? written.size() : eb + 1;
  }
  EXPECT_EQ(lines, 3);
  // The planted faults survive: node 01's slow kernel launch and node 03's failed mem-bw.
  const auto find = [](const FleetRow& r, const std::string& k) {
    for (const auto& [key, v] : r.values) {
      if (key == k) return v;
    }
    return std::nan("");
  };
  EXPECT_DOUBLE_EQ(find((*rows)[0], "kernel-launch/event_overhead:0"), 0.1);
  EXPECT_DOUBLE_EQ(find((*rows)[2], "mem-bw/return_code"), 1.0);
}

TEST(SummaryTest, NullIsMissingAndWrittenBack) {
  Result<std::vector<FleetRow>> rows =
      ParseFleetSummary("{\"node\": \"n1\", \"a/b:0\": null, \"a/c\": NaN, \"a/d\": 2.5}\n", "f");
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(std::isnan((*rows)[0].values[0].second));
  EXPECT_TRUE(std::isnan((*rows)[0].values[1].second));
  EXPECT_EQ(FormatFleetRow((*rows)[0]),
            "{\"node\": \"n1\", \"a/b:0\": null, \"a/c\": null, \"a/d\": 2.5}\n");
}

TEST(SummaryTest, IndexNamesTheNodeAndBlankLinesAreSkipped) {
  Result<std::vector<FleetRow>> rows =
      ParseFleetSummary("\n{\"index\": \"n7\", \"x/y\": 1}\n  \n", "f");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].node, "n7");
}

TEST(SummaryTest, ErrorsNameFileLineAndField) {
  struct Case {
    std::string text;
    std::string expected_prefix;
  };
  const Case cases[] = {
      {"{\"node\": \"a\"}\n{\"node\": \"b\", \"x/y\": \"fast\"}\n",
       "fleet.jsonl:2: field \"x/y\": expected a number or null"},
      {"{\"node\": \"a\", \"bogus\": 1}\n", "fleet.jsonl:1: field \"bogus\": "},
      {"{\"x/y\": 1}\n", "fleet.jsonl:1: no \"node\" field"},
      {"{\"node\": 3}\n", "fleet.jsonl:1: field \"node\": expected a string"},
      {"[1, 2]\n", "fleet.jsonl:1: expected a JSON object"},
      {"{\"node\": \"a\"}\n{\"node\": \"b\",\n", "fleet.jsonl:2:"},
      {"{\"node\": \"a\", \"index\": \"b\"}\n", "fleet.jsonl:1: both"},
  };
  for (const Case& c : cases) {
    Result<std::vector<FleetRow>> r = ParseFleetSummary(c.text, "fleet.jsonl");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind(c.expected_prefix, 0), 0u) << r.status().message();
  }
}

TEST(SummaryTest, FormatsIntegersWithoutFraction) {
  FleetRow row{"n", {{"a/b", 3.0}, {"a/c", 0.1}, {"a/d", -2.0}, {"a/e", 1e300}}};
  EXPECT_EQ(FormatFleetRow(row),
            "{\"node\": \"n\", \"a/b\": 3, \"a/c\": 0.1, \"a/d\": -2, \"a/e\": 1e+300}\n");
}

TEST(SummaryTest, RowOfDocumentSkipsSkippedBenchmarks) {
  NodeResults doc;
  doc.node = "n1";
  BenchmarkRecord ok{"cpu-stream", "memory", BenchStatus::kOk, 0, "", 1.0, {}};
  ok.metrics.push_back(Metric{*MetricKey::Parse("cpu-stream/copy_gbps"), 10.5, "GB/s", true, {}});
  doc.benchmarks.push_back(ok);
  doc.benchmarks.push_back({"disk", "disk", BenchStatus::kFailed, 1, "boom", 1.0, {}});
  doc.benchmarks.push_back({"gpu-gemm", "gpu", BenchStatus::kSkipped, 0, "no GPU", 0.0, {}});
  const FleetRow row = FleetRowOf(doc);
  EXPECT_EQ(FormatFleetRow(row),
            "{\"node\": \"n1\", \"cpu-stream/copy_gbps\": 10.5, \"cpu-stream/return_code\": 0, "
            "\"disk/return_code\": 1}\n");
}

}  // namespace
}  // namespace vigil
