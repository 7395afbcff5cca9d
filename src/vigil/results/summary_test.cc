#include "vigil/results/summary.h"

#include <fmt/format.h>
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
  Result<FleetTable> table = ReadFleetTable(kSuperBenchResults);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  ASSERT_EQ(table->node_count(), 3u);
  EXPECT_EQ(table->node(0), "sb-validation-01");
  EXPECT_EQ(table->line(2), 3);

  const auto out = std::filesystem::temp_directory_path() / "vigil-summary-roundtrip.jsonl";
  std::vector<FleetRow> rows;
  for (size_t i = 0; i < table->node_count(); ++i) rows.push_back(table->Row(i));
  ASSERT_TRUE(WriteFleetSummary(out.string(), rows).ok());
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
  EXPECT_DOUBLE_EQ(table->at(0, table->column("kernel-launch/event_overhead:0")), 0.1);
  EXPECT_DOUBLE_EQ(table->at(2, table->column("mem-bw/return_code")), 1.0);
  EXPECT_TRUE(std::isnan(table->at(2, table->column("mem-bw/H2D_Mem_BW:0"))));
}

TEST(SummaryTest, NullAndNaNAreMissing) {
  Result<FleetTable> t = ParseFleetTable(
      "{\"node\": \"n1\", \"a/b:0\": null, \"a/c\": NaN, \"a/d\": 2.5, \"hardware\": \"8x H\", "
      "\"a/e\": -Infinity}\n",
      "f");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(std::isnan(t->at(0, 0)));
  EXPECT_TRUE(std::isnan(t->at(0, 1)));
  EXPECT_EQ(t->hardware(0), "8x H");
  EXPECT_EQ(FormatFleetRow(t->Row(0)),
            "{\"node\": \"n1\", \"hardware\": \"8x H\", \"a/d\": 2.5}\n");
}

TEST(SummaryTest, IndexNamesTheNodeAndBlankLinesAreSkipped) {
  Result<FleetTable> t = ParseFleetTable("\n{\"index\": \"n7\", \"x/y\": 1}\n  \n", "f");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->node_count(), 1u);
  EXPECT_EQ(t->node(0), "n7");
  EXPECT_EQ(t->line(0), 2);
}

// Lines may list different keys in different orders; columns follow first appearance and the
// result is the same for any number of threads.
TEST(SummaryTest, ColumnsAreTheUnionInFirstAppearanceOrderForAnyThreadCount) {
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    text += fmt::format("{{\"node\": \"n{}\", \"a/x\": {}, \"a/y:{}\": {}", i, i, i % 5, -i);
    if (i % 2 == 0) text += fmt::format(", \"b/z\": {}", i * 0.5);
    text += "}\n";
  }
  Result<FleetTable> one = ParseFleetTable(text, "f", 1);
  ASSERT_TRUE(one.ok());
  for (int threads : {2, 3, 7}) {
    // Force several chunks on this small input by asking for many threads per byte.
    Result<FleetTable> many = ParseFleetTable(text, "f", threads);
    ASSERT_TRUE(many.ok());
    ASSERT_EQ(many->metrics(), one->metrics());
    ASSERT_EQ(many->node_count(), 3000u);
    for (size_t i = 0; i < 3000; i += 7) {
      EXPECT_EQ(many->line(i), one->line(i));
      for (size_t j = 0; j < one->metric_count(); ++j) {
        const double a = one->at(i, j), b = many->at(i, j);
        EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b)));
      }
    }
  }
  EXPECT_EQ(one->metrics()[0], "a/x");
  EXPECT_EQ(one->metrics()[1], "a/y:0");
  EXPECT_EQ(one->metrics()[2], "b/z");
  EXPECT_TRUE(std::isnan(one->at(1, one->column("b/z"))));
}

TEST(SummaryTest, TableOfRowsMatchesTheParsedLines) {
  const std::vector<FleetRow> rows = {
      {"a", {{"gpu-gemm/bf16_tflops:0", 700}, {"cpu-stream/triad_gbps", 200}}, "8x H100"},
      {"b", {{"cpu-stream/triad_gbps", 190}, {"disk-fio/read_mbps:1", 5}}, ""}};
  const FleetTable built = TableOfRows(rows, "memory");
  const FleetTable parsed =
      *ParseFleetTable(FormatFleetRow(rows[0]) + FormatFleetRow(rows[1]), "f");
  ASSERT_EQ(built.node_count(), 2u);
  EXPECT_EQ(built.metrics(), parsed.metrics());
  EXPECT_EQ(built.source(1), "memory");
  EXPECT_EQ(built.line(1), 2);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(built.node(i), parsed.node(i));
    EXPECT_EQ(built.hardware(i), parsed.hardware(i));
    EXPECT_EQ(FormatFleetRow(built.Row(i)), FormatFleetRow(parsed.Row(i)));
  }
}

TEST(SummaryTest, AppendWidensAndKeepsSources) {
  FleetTable a = *ParseFleetTable("{\"node\": \"a\", \"x/1\": 1}\n", "one.jsonl");
  Result<FleetTable> b =
      ParseFleetTable("\n{\"node\": \"b\", \"x/2\": 2, \"x/1\": 3}\n", "two.jsonl");
  ASSERT_TRUE(b.ok());
  ASSERT_TRUE(a.Append(std::move(*b)).ok());
  ASSERT_EQ(a.node_count(), 2u);
  ASSERT_EQ(a.metric_count(), 2u);
  EXPECT_DOUBLE_EQ(a.at(0, 0), 1);
  EXPECT_TRUE(std::isnan(a.at(0, 1)));
  EXPECT_DOUBLE_EQ(a.at(1, 0), 3);
  EXPECT_DOUBLE_EQ(a.at(1, 1), 2);
  EXPECT_EQ(a.source(1), "two.jsonl");
  EXPECT_EQ(a.line(1), 2);
}

// A node tested again and appended by `vigil run --summary`: the later line is the node's.
TEST(SummaryTest, RepeatedNodeKeepsItsLaterLineWithAWarning) {
  const std::string text =
      "{\"node\": \"a\", \"x/1\": 1}\n"
      "{\"node\": \"b\", \"x/1\": 2}\n"
      "{\"node\": \"a\", \"x/1\": 3, \"x/2\": 4}\n";
  Result<FleetTable> t = ParseFleetTable(text, "fleet.jsonl");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->node_count(), 3u);  // parsing keeps every line: a node's history is such a text
  EXPECT_TRUE(t->warnings().empty());
  t->KeepLastOfEachNode();
  ASSERT_EQ(t->node_count(), 2u);
  EXPECT_EQ(t->node(0), "b");
  EXPECT_EQ(t->node(1), "a");
  EXPECT_EQ(t->line(1), 3);
  EXPECT_DOUBLE_EQ(t->at(1, 0), 3);
  EXPECT_DOUBLE_EQ(t->at(1, 1), 4);
  EXPECT_DOUBLE_EQ(t->at(0, 0), 2);
  EXPECT_TRUE(std::isnan(t->at(0, 1)));
  ASSERT_EQ(t->warnings().size(), 1u);
  EXPECT_EQ(t->warnings()[0],
            "fleet.jsonl: node \"a\" is on lines 1 and 3: the later line (3) wins");

  // ReadFleetTable does the same; the same node in two files is two rows.
  const auto path = std::filesystem::temp_directory_path() / "vigil-summary-repeated.jsonl";
  ASSERT_TRUE(WriteFileAtomic(path.string(), text).ok());
  Result<FleetTable> read = ReadFleetTable(path.string());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->node_count(), 2u);
  ASSERT_EQ(read->warnings().size(), 1u);
  EXPECT_NE(read->warnings()[0].find(path.string() + ": node \"a\""), std::string::npos);
  Result<FleetTable> again = ReadFleetTable(path.string());
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(read->Append(std::move(*again)).ok());
  read->KeepLastOfEachNode();
  EXPECT_EQ(read->node_count(), 4u);
  EXPECT_EQ(read->warnings().size(), 2u);
  std::filesystem::remove(path);
}

TEST(SummaryTest, ManyRepeatsAreCountedNotListed) {
  std::string text;
  for (size_t i = 0; i < kMaxRepeatWarnings + 5; ++i) text += "{\"node\": \"a\", \"x/1\": 1}\n";
  FleetTable t = *ParseFleetTable(text, "fleet.jsonl");
  t.KeepLastOfEachNode();
  EXPECT_EQ(t.node_count(), 1u);
  EXPECT_EQ(t.line(0), static_cast<int>(kMaxRepeatWarnings + 5));
  ASSERT_EQ(t.warnings().size(), kMaxRepeatWarnings + 1);
  EXPECT_EQ(t.warnings().back(), "... and 4 more lines of nodes listed again (the later wins)");
}

// A file with a key per node and value would need a column each: refused with the line of the
// first key beyond the cap, not built until memory runs out.
TEST(SummaryTest, TooManyDistinctKeysIsAnError) {
  const auto line = [](size_t from, size_t count, int node) {
    std::string out = fmt::format("{{\"node\": \"n{}\"", node);
    for (size_t k = from; k < from + count; ++k) out += fmt::format(", \"b/m{}\": 1", k);
    return out + "}\n";
  };
  const std::string text = line(0, kMaxFleetMetrics / 2, 1) + line(0, 10, 2) +
                           line(kMaxFleetMetrics / 2, kMaxFleetMetrics / 2 + 1, 3);
  Result<FleetTable> t = ParseFleetTable(text, "keys.jsonl", 1);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(),
            fmt::format("keys.jsonl:3: field \"b/m{}\": more than {} distinct metric keys (the "
                        "most a fleet table holds; docs/formats.md)",
                        kMaxFleetMetrics, kMaxFleetMetrics));
  // The same keys over two files.
  FleetTable a = *ParseFleetTable(line(0, kMaxFleetMetrics / 2 + 1, 1), "a.jsonl");
  Result<FleetTable> b =
      ParseFleetTable(line(kMaxFleetMetrics, kMaxFleetMetrics / 2, 2), "b.jsonl");
  ASSERT_TRUE(b.ok());
  const Status s = a.Append(std::move(*b));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("b.jsonl: more than", 0), 0u) << s.message();
  EXPECT_EQ(a.node_count(), 1u);
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
      {"{\"node\": \"a\", \"x/y\": 1, \"x/y\": 2}\n",
       "fleet.jsonl:1: field \"x/y\": appears twice"},
      {"{\"node\": \"a\"} {}\n", "fleet.jsonl:1: not valid JSON"},
      {"{\"node\": \"a\", \"x/y\": 1e999}\n", "fleet.jsonl:1:"},
      {"{\"node\": \"a\", \"x/y\": \"NaN\"}\n", "fleet.jsonl:1: field \"x/y\": expected a number"},
      {"{\"node\": \"a\", \"x/y\": -1e101}\n",
       "fleet.jsonl:1: field \"x/y\": -1e+101 is outside [-1e+100, 1e+100]"},
  };
  for (const Case& c : cases) {
    Result<FleetTable> r = ParseFleetTable(c.text, "fleet.jsonl");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind(c.expected_prefix, 0), 0u) << r.status().message();
  }
}

TEST(SummaryTest, FormatsIntegersWithoutFraction) {
  FleetRow row{"n", {{"a/b", 3.0}, {"a/c", 0.1}, {"a/d", -2.0}, {"a/e", 1e300}}, ""};
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
