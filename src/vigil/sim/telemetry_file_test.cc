#include "vigil/sim/telemetry_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "vigil/core/file.h"
#include "vigil/telemetry/readers.h"
#include "vigil/testing/temp_dir.h"

namespace vigil::sim {
namespace {

TelemetryJob SmallFileJob() {
  TelemetryJob job;
  job.machines = 3;
  job.duration_s = 20;
  return job;
}

// Normalised: every metric a signal name, counters as rates (their first sample only a base).
TEST(TelemetryFileTest, CsvAndJsonlHoldTheSameNormalisedSamples) {
  vigil::testing::TempDir dir;
  TelemetryGenerator csv_gen(SmallFileJob()), jsonl_gen(SmallFileJob());
  const Result<int64_t> csv_rows = WriteTelemetryFile(csv_gen, dir.File("t.csv"));
  const Result<int64_t> jsonl_rows = WriteTelemetryFile(jsonl_gen, dir.File("t.jsonl"));
  ASSERT_TRUE(csv_rows.ok()) << csv_rows.status().ToString();
  ASSERT_TRUE(jsonl_rows.ok());
  EXPECT_EQ(*csv_rows, *jsonl_rows);
  const std::string csv = *ReadFile(dir.File("t.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), *csv_rows + 1);
  EXPECT_EQ(csv.substr(0, telemetry::kLongCsvHeader.size()), telemetry::kLongCsvHeader);
  std::set<std::string> metrics;
  std::string csv_values, jsonl_values;
  const auto collect = [&](std::string* out) {
    return [&metrics, out](const telemetry::RawSample& s) {
      metrics.emplace(s.metric);
      *out += std::string(s.metric) + "=" + std::to_string(s.value) + "\n";
    };
  };
  ASSERT_TRUE(telemetry::ParseLongCsv(csv, {}, collect(&csv_values)).ok());
  ASSERT_TRUE(
      telemetry::ParseTelemetryJsonl(*ReadFile(dir.File("t.jsonl")), {}, collect(&jsonl_values))
          .ok());
  EXPECT_EQ(csv_values, jsonl_values);
  EXPECT_TRUE(metrics.contains("gpu_power"));
  for (const std::string& m : metrics) EXPECT_EQ(m.find("DCGM_"), std::string::npos) << m;
}

TEST(TelemetryFileTest, AFileThatCannotBeWrittenIsAnErrorAndLeavesNothing) {
  vigil::testing::TempDir dir;
  TelemetryGenerator gen(SmallFileJob());
  EXPECT_FALSE(WriteTelemetryFile(gen, dir.File("missing/t.csv")).ok());
  EXPECT_EQ(dir.EntryCount(), 0u);
}

}  // namespace
}  // namespace vigil::sim
