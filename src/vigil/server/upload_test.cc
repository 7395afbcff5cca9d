#include "vigil/server/upload.h"

#include <gtest/gtest.h>

#include "vigil/core/json.h"
#include "vigil/eval/fleet_gen.h"

namespace vigil::server {
namespace {

TEST(UploadTest, ADocumentGivesItsRowAndTheBenchmarksThatRan) {
  const eval::GeneratedFleet fleet = *eval::GenerateFleet({.nodes = 2, .defect_rate = 0});
  const NodeResults doc = eval::NodeDocumentOf(fleet.rows[0], 3, 1);
  const std::string text = DumpJson(ToJson(doc), 2);
  const Result<std::vector<ParsedUpload>> up = ParseUpload(text, "upload");
  ASSERT_TRUE(up.ok()) << up.status().message();
  ASSERT_EQ(up->size(), 1u);
  const ParsedUpload& u = (*up)[0];
  EXPECT_EQ(FormatFleetRow(u.row), FormatFleetRow(fleet.rows[0]));
  EXPECT_EQ(u.document, text);
  EXPECT_EQ(u.start_time, doc.start_time);
  EXPECT_EQ(u.benchmarks.size(), doc.benchmarks.size());
}

TEST(UploadTest, SummaryLinesGiveOneUploadPerNode) {
  const std::string body =
      "{\"node\": \"a\", \"hardware\": \"8x H100\", \"gpu-gemm/bf16_tflops:0\": 700}\n"
      "\n{\"node\": \"b\", \"cpu-stream/triad_gbps\": 200, \"disk-fio/read:1\": 3}\n";
  const Result<std::vector<ParsedUpload>> up = ParseUpload(body, "upload");
  ASSERT_TRUE(up.ok()) << up.status().message();
  ASSERT_EQ(up->size(), 2u);
  EXPECT_EQ((*up)[0].row.hardware, "8x H100");
  EXPECT_EQ((*up)[0].benchmarks, std::vector<std::string>{"gpu-gemm"});
  EXPECT_EQ((*up)[1].benchmarks, (std::vector<std::string>{"cpu-stream", "disk-fio"}));
  EXPECT_EQ((*up)[1].document, "");
  // One line alone is a summary too.
  EXPECT_TRUE(ParseUpload("{\"node\": \"c\", \"x/y\": 1}", "upload").ok());
}

TEST(UploadTest, MalformedBodiesAreNamed) {
  const struct {
    const char* body;
    const char* message;
  } cases[] = {
      {"", "upload: empty upload"},
      {"  \n ", "upload: empty upload"},
      {"{\"node\": \"a\", \"x/y\": }", "upload:1:"},
      {"{\n  \"schema\": \"vigil.results/1\",\n  \"node\": \n", "upload:"},
      {"{\"schema\": \"vigil.results/2\"}", "upload"},
      {"{\"node\": \"a\", \"x/y\": 1}\n{\"node\": \"b\", \"x/y\": \"fast\"}\n", "upload:2:"},
      {"{\"node\": \"a/b\", \"x/y\": 1}", "control character or '/'"},
      {"{\"node\": \"\", \"x/y\": 1}", "node name is empty"},
      {"[1, 2]", "upload:1:"},
  };
  for (const auto& c : cases) {
    const Result<std::vector<ParsedUpload>> up = ParseUpload(c.body, "upload");
    ASSERT_FALSE(up.ok()) << c.body;
    EXPECT_NE(up.status().message().find(c.message), std::string::npos)
        << c.body << " -> " << up.status().message();
    EXPECT_EQ(up.status().code(), StatusCode::kInvalidArgument);
  }
  // Found by upload_fuzz: a document that lists a metric twice.
  NodeResults doc = eval::NodeDocumentOf(
      {"n", {{"cpu-stream/add_gbps", 19}, {"cpu-stream/copy_gbps", 15}}, ""}, 1, 1);
  doc.benchmarks[0].metrics.push_back(doc.benchmarks[0].metrics[0]);
  const Result<std::vector<ParsedUpload>> twice = ParseUpload(DumpJson(ToJson(doc)), "upload");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("\"cpu-stream/add_gbps\" appears twice"),
            std::string::npos)
      << twice.status().message();
  EXPECT_FALSE(CheckNodeName(std::string(254, 'n')).ok());
  EXPECT_TRUE(CheckNodeName(std::string(253, 'n')).ok());
}

}  // namespace
}  // namespace vigil::server
