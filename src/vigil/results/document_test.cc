#include "vigil/results/document.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace vigil {
namespace {

NodeResults SampleDoc() {
  NodeResults doc;
  doc.node = "gpu-017";
  doc.vigil_version = "0.1.0";
  doc.suite = "quick";
  doc.start_time = "2026-11-22T09:00:00.000Z";
  doc.end_time = "2026-11-22T09:00:41.500Z";
  doc.inventory.hostname = "gpu-017";
  doc.inventory.cpu_model = "AMD EPYC";
  doc.inventory.sockets = 2;
  doc.inventory.cores = 96;
  doc.inventory.threads = 192;
  doc.inventory.numa_nodes = 2;
  doc.inventory.cpu_vector_extensions = {"avx2", "avx512f"};
  doc.inventory.memory_bytes = 2.0e12;
  doc.inventory.kernel = "6.1.0";
  doc.inventory.os = "Debian GNU/Linux 12 (bookworm)";
  doc.inventory.gpu_driver = "580.65";
  doc.inventory.gpus = {{0, "NVIDIA H100 80GB HBM3", "0000:19:00.0"}};
  doc.inventory.pci_gpus = {{"0000:19:00.0", "nvidia", 16, 16, 32, 32},
                            {"0000:3b:00.0", "", 8, 16, std::nullopt, std::nullopt}};
  BenchmarkRecord stream{"cpu-stream", "memory", BenchStatus::kOk, 0, "", 3.25, {}};
  stream.metrics.push_back(
      Metric{*MetricKey::Parse("cpu-stream/triad_gbps"), 201.5, "GB/s", true, {200.0, 201.5, 203}});
  stream.metrics.push_back(
      Metric{*MetricKey::Parse("cpu-stream/triad_gbps:1"), std::nan(""), "GB/s", true, {}});
  doc.benchmarks.push_back(stream);
  doc.benchmarks.push_back(
      BenchmarkRecord{"disk", "disk", BenchStatus::kFailed, 1, "no space left", 0.5, {}});
  doc.benchmarks.push_back(
      BenchmarkRecord{"gpu-gemm", "gpu", BenchStatus::kSkipped, 0, "no GPU", 0.0, {}});
  return doc;
}

TEST(DocumentTest, JsonRoundTrip) {
  const NodeResults doc = SampleDoc();
  Result<NodeResults> back = ParseNodeResults(DumpJson(ToJson(doc), 2), "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(ToJson(*back), ToJson(doc));
  EXPECT_EQ(back->benchmarks[0].metrics[0].samples.size(), 3u);
  EXPECT_TRUE(std::isnan(back->benchmarks[0].metrics[1].value));
  EXPECT_EQ(back->benchmarks[1].status, BenchStatus::kFailed);
  EXPECT_EQ(back->inventory.gpus[0].bus_id, "0000:19:00.0");
  ASSERT_EQ(back->inventory.pci_gpus.size(), 2u);
  EXPECT_EQ(back->inventory.pci_gpus[1].link_width, 8);
  EXPECT_FALSE(back->inventory.pci_gpus[1].link_speed_gts);  // null: sysfs did not say
}

// Documents written before the inventory read PCI have no pci_gpus: still read.
TEST(DocumentTest, InventoryWithoutPciGpusIsRead) {
  Json j = ToJson(SampleDoc());
  j["inventory"].erase("pci_gpus");
  Result<NodeResults> back = ParseNodeResults(DumpJson(j), "old.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->inventory.pci_gpus.empty());
  j["inventory"]["pci_gpus"] = Json::array({Json{{"bus_id", "0000:19:00.0"}}});
  back = ParseNodeResults(DumpJson(j), "bad.json");
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("bad.json: inventory.pci_gpus[0].driver: missing"),
            std::string::npos)
      << back.status().message();
}

TEST(DocumentTest, FileRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() / "vigil-document-test.json";
  ASSERT_TRUE(WriteNodeResults(path.string(), SampleDoc()).ok());
  Result<NodeResults> back = ReadNodeResults(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->node, "gpu-017");
}

TEST(DocumentTest, ErrorsNameTheField) {
  Json j = ToJson(SampleDoc());
  j["benchmarks"][0]["metrics"][0]["value"] = "fast";
  Result<NodeResults> r = ParseNodeResults(DumpJson(j), "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "a.json: benchmarks[0].metrics[0].value: expected a number");

  j = ToJson(SampleDoc());
  j["benchmarks"][1]["status"] = "meh";
  r = ParseNodeResults(DumpJson(j), "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("benchmarks[1].status: unknown status"), std::string::npos);

  j = ToJson(SampleDoc());
  j["inventory"].erase("cores");
  r = ParseNodeResults(DumpJson(j), "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "a.json: inventory.cores: missing");

  j = ToJson(SampleDoc());
  j["benchmarks"][0]["metrics"][0]["key"] = "no-slash";
  r = ParseNodeResults(DumpJson(j), "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("benchmarks[0].metrics[0].key"), std::string::npos);
}

TEST(DocumentTest, RejectsOtherSchemasAndShapes) {
  Json j = ToJson(SampleDoc());
  j["schema"] = "vigil.results/99";
  EXPECT_FALSE(ParseNodeResults(DumpJson(j), "a.json").ok());
  EXPECT_FALSE(ParseNodeResults("[]", "a.json").ok());
  EXPECT_FALSE(ParseNodeResults("3", "a.json").ok());
  j = ToJson(SampleDoc());
  j["benchmarks"][0]["return_code"] = 1e12;
  EXPECT_FALSE(ParseNodeResults(DumpJson(j), "a.json").ok());
}

TEST(DocumentTest, TextThatIsNotJsonIsNamedByLineAndColumn) {
  const std::string text = DumpJson(ToJson(SampleDoc()), 2);
  Result<NodeResults> r = ParseNodeResults(text.substr(0, 40) + "}", "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("a.json:3:", 0), 0u) << r.status().message();
  EXPECT_FALSE(ParseNodeResults("", "a.json").ok());
}

TEST(DocumentTest, PythonNonFiniteFiguresReadAsMissing) {
  Json j = ToJson(SampleDoc());
  j["benchmarks"][0]["metrics"][0]["value"] = "@NAN@";
  std::string text = DumpJson(j);
  text.replace(text.find("\"@NAN@\""), 7, "NaN");
  Result<NodeResults> r = ParseNodeResults(text, "a.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(std::isnan(r->benchmarks[0].metrics[0].value));
}

TEST(DocumentTest, IntegersAreNotFractions) {
  Json j = ToJson(SampleDoc());
  j["inventory"]["cores"] = 64.5;
  Result<NodeResults> r = ParseNodeResults(DumpJson(j), "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "a.json: inventory.cores: expected an integer");
  j["inventory"]["cores"] = 1e300;
  EXPECT_FALSE(ParseNodeResults(DumpJson(j), "a.json").ok());
  j["inventory"]["cores"] = 18446744073709551615ull;
  r = ParseNodeResults(DumpJson(j), "a.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "a.json: inventory.cores: integer out of range");
}

TEST(DocumentTest, ParseIfResultsDocumentAndBenchmarkRecords) {
  const std::string text = DumpJson(ToJson(SampleDoc()), 2);
  Result<std::optional<NodeResults>> doc = ParseIfResultsDocument(text, "up");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  ASSERT_TRUE(doc->has_value());
  EXPECT_EQ((*doc)->node, SampleDoc().node);
  EXPECT_EQ((*doc)->benchmarks.size(), SampleDoc().benchmarks.size());
  // A document, if not a valid one: its error, as ParseNodeResults words it.
  Result<std::optional<NodeResults>> broken = ParseIfResultsDocument(R"({"schema": 3})", "up");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().message(),
            ParseNodeResults(R"({"schema": 3})", "up").status().message());
  // Anything else is not a document.
  for (const char* other : {R"({"node": "n1", "cpu-stream/triad_gbps": 3})",
                            "{\"node\": \"n1\"}\n{\"node\": \"n2\"}\n", "[]", "{"}) {
    Result<std::optional<NodeResults>> r = ParseIfResultsDocument(other, "up");
    ASSERT_TRUE(r.ok()) << other;
    EXPECT_FALSE(r->has_value()) << other;
  }

  Result<BenchmarkRecord> r =
      ParseBenchmarkRecord(DumpJson(ToJson(SampleDoc().benchmarks[0])), "out");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, SampleDoc().benchmarks[0].name);
  Result<BenchmarkRecord> bad = ParseBenchmarkRecord(R"({"name": 1})", "out");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "out: record.name: expected a string");
}

TEST(DocumentTest, NumbersOutsideTheirRangesAreNamed) {
  struct Case {
    const char* pointer;
    Json value;
    const char* message;
  };
  const Case cases[] = {
      {"/benchmarks/0/metrics/0/value", 1e101,
       "a.json: benchmarks[0].metrics[0].value: 1e+101 is outside [-1e+100, 1e+100]"},
      {"/benchmarks/0/metrics/0/samples/0", -2e200,
       "a.json: benchmarks[0].metrics[0].samples[0]: -2e+200 is outside [-1e+100, 1e+100]"},
      {"/benchmarks/0/duration_s", -1,
       "a.json: benchmarks[0].duration_s: -1s is outside [0s, 365d]"},
      {"/inventory/sockets", 5000, "a.json: inventory.sockets: 5000 is outside [0, 1024]"},
      {"/inventory/cores", -4, "a.json: inventory.cores: -4 is outside [0, 1048576]"},
      {"/inventory/memory_bytes", 1e30,
       "a.json: inventory.memory_bytes: 1e+30 is outside [0, 1.152921504606847e+18]"},
  };
  for (const Case& c : cases) {
    Json j = ToJson(SampleDoc());
    j[Json::json_pointer(c.pointer)] = c.value;
    Result<NodeResults> r = ParseNodeResults(DumpJson(j), "a.json");
    ASSERT_FALSE(r.ok()) << c.pointer;
    EXPECT_EQ(r.status().message(), c.message);
  }
  Json j = ToJson(SampleDoc());
  j["benchmarks"][0]["metrics"][0]["value"] = nullptr;  // missing stays allowed
  j["benchmarks"][0]["duration_s"] = 365 * 86400.0;
  EXPECT_TRUE(ParseNodeResults(DumpJson(j), "a.json").ok());
}

}  // namespace
}  // namespace vigil
