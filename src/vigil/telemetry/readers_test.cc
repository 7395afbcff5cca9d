#include "vigil/telemetry/readers.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace vigil::telemetry {
namespace {

struct Got {
  double time;
  std::string machine, metric, component, group;
  double value;
  Labels labels;
};

SampleSink Collect(std::vector<Got>* out) {
  return [out](const RawSample& s) {
    out->push_back({s.time, std::string(s.machine), std::string(s.metric), std::string(s.component),
                    std::string(s.group), s.value, s.labels ? *s.labels : Labels{}});
  };
}

ReadOptions Source(const char* name) {
  ReadOptions o;
  o.source = name;
  return o;
}

TEST(LongCsvTest, ReadsColumnsInAnyOrder) {
  std::vector<Got> got;
  ASSERT_TRUE(ParseLongCsv("machine,timestamp,value,metric,group\r\n"
                           "n1,1.5,3,step_time,a\n"
                           "\n"
                           "n2,2,,step_time,a\n",
                           Source("t.csv"), Collect(&got))
                  .ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].machine, "n1");
  EXPECT_DOUBLE_EQ(got[0].time, 1.5);
  EXPECT_DOUBLE_EQ(got[0].value, 3);
  EXPECT_EQ(got[0].group, "a");
  EXPECT_TRUE(std::isnan(got[1].value));  // empty: a missing sample
}

TEST(LongCsvTest, ErrorsNameFileLineAndFieldAndLenientSkips) {
  std::vector<Got> got;
  const std::string text = "timestamp,machine,metric,value\n1,n1,m,1\n2,n1,m,abc\nx,n1,m,1\n3,n1\n";
  EXPECT_EQ(ParseLongCsv(text, Source("t.csv"), Collect(&got)).message(),
            "t.csv:3: value: \"abc\" is not a number");
  ReadOptions lenient = Source("t.csv");
  lenient.lenient = true;
  int64_t skipped = 0;
  lenient.skipped = &skipped;
  got.clear();
  ASSERT_TRUE(ParseLongCsv(text, lenient, Collect(&got)).ok());
  EXPECT_EQ(got.size(), 1u);
  EXPECT_EQ(skipped, 3);
  EXPECT_EQ(ParseLongCsv("timestamp,machine,value\n", Source("t.csv"), Collect(&got)).message(),
            "t.csv:1: header: no metric column");
  EXPECT_EQ(ParseLongCsv("", Source("t.csv"), Collect(&got)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ParseLongCsv("timestamp,machine,metric,value\ninf,n,m,1\n", Source("t.csv"), Collect(&got))
          .message(),
      "t.csv:2: timestamp: \"inf\" is not a finite number");
}

TEST(TelemetryJsonlTest, ReadsObjectsAndRejectsBadOnes) {
  std::vector<Got> got;
  ASSERT_TRUE(
      ParseTelemetryJsonl("{\"timestamp\":1,\"machine\":\"n1\",\"metric\":\"m\",\"value\":2.5,"
                          "\"component\":\"gpu1\"}\n"
                          "{\"timestamp\":2,\"machine\":\"n1\",\"metric\":\"m\",\"value\":null}\n",
                          Source("t.jsonl"), Collect(&got))
          .ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].component, "gpu1");
  EXPECT_TRUE(std::isnan(got[1].value));
  EXPECT_EQ(ParseTelemetryJsonl("{\"timestamp\":1,\"metric\":\"m\",\"value\":1}\n",
                                Source("t.jsonl"), Collect(&got))
                .message(),
            "t.jsonl:1: machine: missing");
  EXPECT_EQ(ParseTelemetryJsonl("{\"timestamp\":1,\"machine\":\"n\",\"metric\":\"m\",\"value\":"
                                "\"x\"}\n",
                                Source("t.jsonl"), Collect(&got))
                .message(),
            "t.jsonl:1: value: must be a number or null");
  EXPECT_NE(
      ParseTelemetryJsonl("[1]\n{", Source("t.jsonl"), Collect(&got)).message().find("t.jsonl:1"),
      std::string::npos);
}

TEST(ExpositionTest, ReadsDcgmAndNodeExporterLines) {
  std::vector<Got> got;
  ReadOptions o = Source("scrape.prom");
  o.default_time = 100;
  ASSERT_TRUE(
      ParseExposition(
          "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n"
          "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
          "DCGM_FI_DEV_GPU_UTIL{gpu=\"3\",UUID=\"GPU-x\",Hostname=\"h1\",modelName=\"NVIDIA "
          "H100 80GB HBM3\"} 97\n"
          "node_cpu_seconds_total{cpu=\"7\",instance=\"h2:9100\",mode=\"idle\"} 1.5e+06 "
          "2500\n"
          "node_network_up{device=\"ib0\",instance=\"[::1]:9100\",x=\"a\\\"b\\\\c\\n\",} +Inf\n"
          "   up{hostname=\"h3\"}   NaN\n",
          o, Collect(&got))
          .ok());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].machine, "h1");
  EXPECT_EQ(got[0].component, "gpu3");
  EXPECT_DOUBLE_EQ(got[0].time, 100);
  EXPECT_EQ(got[1].machine, "h2");
  EXPECT_EQ(got[1].component, "cpu7");
  EXPECT_DOUBLE_EQ(got[1].time, 2.5);
  EXPECT_DOUBLE_EQ(got[1].value, 1.5e6);
  EXPECT_EQ(got[2].machine, "::1");
  EXPECT_EQ(got[2].component, "ib0");
  EXPECT_TRUE(std::isinf(got[2].value));
  EXPECT_EQ(FindLabel(got[2].labels, "x"), "a\"b\\c\n");
  EXPECT_TRUE(std::isnan(got[3].value));
}

TEST(ExpositionTest, WrittenLinesReadBackWithTheirLabelsEscaped) {
  std::string text;
  AppendExpositionLine("vigil_node_healthy", {{"hostname", "odd\"name\\x"}, {"gpu", "3"}}, 1,
                       &text);
  AppendExpositionLine("vigil_age_seconds", {{"hostname", "n\nl"}}, std::nan(""), &text);
  EXPECT_EQ(text,
            "vigil_node_healthy{hostname=\"odd\\\"name\\\\x\",gpu=\"3\"} 1\n"
            "vigil_age_seconds{hostname=\"n\\nl\"} NaN\n");
  std::string bare;
  AppendExpositionLine("vigil_uploads_total", {}, 2.5e9, &bare);
  EXPECT_EQ(bare, "vigil_uploads_total 2500000000\n");
  std::vector<std::string> machines;
  ReadOptions o;
  o.default_time = 5;
  ASSERT_TRUE(
      ParseExposition(text, o, [&](const RawSample& s) { machines.emplace_back(s.machine); }).ok());
  ASSERT_EQ(machines.size(), 2u);
  EXPECT_EQ(machines[0], "odd\"name\\x");
  EXPECT_EQ(machines[1], "n\nl");
}

TEST(ExpositionTest, MalformedLinesAreNamed) {
  std::vector<Got> got;
  ReadOptions o = Source("s.prom");
  o.default_time = 1;
  auto error = [&](const std::string& text) {
    return ParseExposition(text, o, Collect(&got)).message();
  };
  EXPECT_EQ(error("1abc 1\n"), "s.prom:1: metric name: cannot start with \"1\"");
  EXPECT_EQ(error("m{hostname=\"h\" 1\n"), "s.prom:1: labels: expected , or } at column 16");
  EXPECT_EQ(error("m{hostname=\"h} 1\n"), "s.prom:1: hostname: unterminated label value");
  EXPECT_EQ(error("m{hostname=h} 1\n"), "s.prom:1: hostname: expected =\"value\"");
  EXPECT_EQ(error("m{hostname=\"h\"} x\n"), "s.prom:1: value: \"x\" is not a number");
  EXPECT_EQ(error("m{hostname=\"h\"} 1 1.5\n"),
            "s.prom:1: timestamp: \"1.5\" is not an integer of milliseconds");
  EXPECT_EQ(error("m{hostname=\"h\"} 1 15 x\n"), "s.prom:1: line: text after the timestamp");
  EXPECT_EQ(error("m{gpu=\"0\"} 1\n"),
            "s.prom:1: labels: no hostname, Hostname or instance label names the machine");
  ReadOptions no_time = Source("s.prom");
  EXPECT_EQ(ParseExposition("m{hostname=\"h\"} 1\n", no_time, Collect(&got)).message(),
            "s.prom:1: timestamp: missing, and no scrape time was given");
}

TEST(QueryRangeTest, ReadsMatrixAnswers) {
  std::vector<Got> got;
  int64_t skipped = 0;
  ReadOptions o = Source("http://p:9090");
  o.skipped = &skipped;
  ASSERT_TRUE(ParseQueryRange(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"h1","gpu":"0"},
       "values":[[1700000000,"300.5"],[1700000001.5,"NaN"]]},
      {"metric":{"__name__":"prometheus_tsdb_head_series"},"values":[[1,"1"]]}]}})",
                              o, Collect(&got))
                  .ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].metric, "DCGM_FI_DEV_POWER_USAGE");
  EXPECT_EQ(got[0].component, "gpu0");
  EXPECT_DOUBLE_EQ(got[1].time, 1700000001.5);
  EXPECT_EQ(skipped, 1);  // no machine label
}

TEST(QueryRangeTest, ErrorsAndGarbage) {
  std::vector<Got> got;
  const ReadOptions o = Source("http://p:9090");
  const Status err = ParseQueryRange(
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})", o,
      Collect(&got));
  EXPECT_EQ(err.code(), StatusCode::kUnavailable);
  EXPECT_NE(err.message().find("parse error at char 3"), std::string::npos);
  EXPECT_EQ(ParseQueryRange("<html>", o, Collect(&got)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseQueryRange(R"({"status":"success","data":{"resultType":"vector","result":[]}})", o,
                            Collect(&got))
                .message(),
            "http://p:9090: query_range answer: resultType \"vector\" is not matrix");
  EXPECT_EQ(ParseQueryRange(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":"m","hostname":"h"},"values":[[1]]}]}})",
                            o, Collect(&got))
                .message(),
            "http://p:9090: query_range answer: series 1: a value is not [time, \"value\"]");
}

TEST(TelemetryWritersTest, WhatIsWrittenReadsBack) {
  RawSample s;
  s.time = 1800000000.5;
  s.machine = "node\"1";  // JSONL escapes what CSV cannot hold
  s.metric = "gpu_power";
  s.component = "gpu3";
  s.value = 612.25;
  std::string jsonl;
  AppendTelemetryJsonl(s, &jsonl);
  std::vector<Got> got;
  ASSERT_TRUE(ParseTelemetryJsonl(jsonl, Source("w.jsonl"), Collect(&got)).ok()) << jsonl;
  s.machine = "node1";
  std::string csv(kLongCsvHeader);
  AppendLongCsv(s, &csv);
  ASSERT_TRUE(ParseLongCsv(csv, Source("w.csv"), Collect(&got)).ok()) << csv;
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].machine, "node\"1");
  EXPECT_EQ(got[1].machine, "node1");
  for (const Got& g : got) {
    EXPECT_DOUBLE_EQ(g.time, 1800000000.5);
    EXPECT_EQ(g.metric, "gpu_power");
    EXPECT_EQ(g.component, "gpu3");
    EXPECT_DOUBLE_EQ(g.value, 612.25);
  }
}

TEST(ParseNumberTest, PrometheusSpellings) {
  EXPECT_DOUBLE_EQ(*ParseNumber("+1.5e3"), 1500);
  EXPECT_TRUE(std::isinf(*ParseNumber("-Inf")));
  EXPECT_FALSE(ParseNumber(""));
  EXPECT_FALSE(ParseNumber("1x"));
  EXPECT_FALSE(ParseNumber("+"));
}

// Times outside 1970..2200 and values beyond 1e100 are malformed lines, in every format; missing
// values (empty, null, NaN, Inf) stay missing.
TEST(TelemetryBoundsTest, TimesAndValuesOutsideTheirRangesAreNamed) {
  std::vector<Got> got;
  const auto csv = [&](const std::string& line) {
    return ParseLongCsv("timestamp,machine,metric,value\n" + line + "\n", Source("t.csv"),
                        Collect(&got));
  };
  EXPECT_EQ(csv("9.2e18,n1,power,1").message(),
            "t.csv:2: timestamp: 9.2e18 is outside [0, 7258118400] (Unix seconds, years 1970 to "
            "2200)");
  EXPECT_EQ(csv("-1,n1,power,1").message(),
            "t.csv:2: timestamp: -1 is outside [0, 7258118400] (Unix seconds, years 1970 to 2200)");
  EXPECT_EQ(csv("7258118401,n1,power,1").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(csv("10,n1,power,1e101").message(),
            "t.csv:2: value: 1e101 is outside [-1e+100, 1e+100]");
  EXPECT_EQ(csv("10,n1,power,-2e100").code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(got.empty());
  for (const char* missing : {"", "NaN", "+Inf", "-Inf"}) {
    EXPECT_TRUE(csv(std::string("7258118400,n1,power,") + missing).ok()) << missing;
  }
  EXPECT_TRUE(csv("0,n1,power,1e100").ok());
  EXPECT_EQ(got.size(), 5u);

  Status s =
      ParseTelemetryJsonl(R"({"timestamp":9.2e18,"machine":"n1","metric":"power","value":1})",
                          Source("t.jsonl"), Collect(&got));
  EXPECT_EQ(s.message(),
            "t.jsonl:1: timestamp: 9.2e+18 is outside [0, 7258118400] (Unix seconds, years 1970 to "
            "2200)");
  s = ParseTelemetryJsonl(R"({"timestamp":1,"machine":"n1","metric":"power","value":-1e300})",
                          Source("t.jsonl"), Collect(&got));
  EXPECT_EQ(s.message(), "t.jsonl:1: value: -1e+300 is outside [-1e+100, 1e+100]");

  s = ParseExposition("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",Hostname=\"h\"} 1 9223372036854775807\n",
                      Source("s.prom"), Collect(&got));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("s.prom:1: timestamp: 9223372036854776 is outside"), std::string::npos)
      << s.message();
  ReadOptions scrape = Source("s.prom");
  scrape.default_time = -5;  // a file's time before 1970
  EXPECT_EQ(ParseExposition("up{instance=\"h:9100\"} 1\n", scrape, Collect(&got)).code(),
            StatusCode::kInvalidArgument);

  s = ParseQueryRange(
      R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","instance":"h:1"},"values":[[1e19,"1"]]}]}})",
      Source("prom"), Collect(&got));
  EXPECT_EQ(s.message(),
            "prom: query_range answer: series 1: time 1e+19 is outside [0, 7258118400] (Unix "
            "seconds, years 1970 to 2200)");
  EXPECT_EQ(got.size(), 5u);
}

// What a reader fed `pieces` yields: the samples as text, then its status.
std::vector<std::string> ReadPieces(TelemetryFormat format, const std::vector<std::string>& pieces,
                                    bool lenient) {
  ReadOptions o = Source("t");
  o.lenient = lenient;
  o.default_time = 7;
  int64_t skipped = 0;
  o.skipped = &skipped;
  TelemetryReader reader(format, o);
  std::vector<std::string> out;
  const SampleSink sink = [&](const RawSample& s) {
    out.push_back(fmt::format("{} {} {} {} {} {}", s.time, s.machine, s.metric, s.component,
                              s.group, s.value));
  };
  Status status;
  for (const std::string& piece : pieces) {
    status = reader.Read(piece, sink);
    if (!status.ok()) break;
  }
  if (status.ok()) status = reader.Finish();
  out.push_back(fmt::format("{} skipped {}", status.ToString(), skipped));
  return out;
}

// A text read in pieces of whole lines, cut anywhere, gives what the text read whole gives:
// the same samples, and errors naming the same line (the CSV header is kept across pieces).
TEST(TelemetryReaderTest, PiecesOfWholeLinesReadAsTheWholeText) {
  const std::vector<std::pair<TelemetryFormat, std::string>> texts = {
      {TelemetryFormat::kLongCsv,
       "machine,timestamp,value,metric\r\nn1,1,3,a\n\nn2,2,,a\nn3,3,x,a\nn1,4,5,a"},
      {TelemetryFormat::kJsonl,
       "{\"timestamp\":1,\"machine\":\"n1\",\"metric\":\"a\",\"value\":2}\n\n[]\n"
       "{\"timestamp\":3,\"machine\":\"n2\",\"metric\":\"a\",\"value\":null}\n"},
      {TelemetryFormat::kExposition,
       "# HELP a\na{hostname=\"h1\",gpu=\"0\"} 1 1000\na{gpu=\"0\"} 1\na{hostname=\"h2\"} 2\n"},
  };
  for (const auto& [format, text] : texts) {
    std::vector<std::string> lines;
    for (size_t at = 0; at < text.size();) {
      const size_t end = std::min(text.find('\n', at), text.size() - 1) + 1;
      lines.push_back(text.substr(at, end - at));
      at = end;
    }
    for (const bool lenient : {false, true}) {
      const std::vector<std::string> whole = ReadPieces(format, {text}, lenient);
      EXPECT_EQ(ReadPieces(format, lines, lenient), whole) << text;
      for (size_t cut = 1; cut < lines.size(); ++cut) {
        std::string head, tail;
        for (size_t i = 0; i < lines.size(); ++i) (i < cut ? head : tail) += lines[i];
        EXPECT_EQ(ReadPieces(format, {head, "", tail}, lenient), whole) << text << cut;
      }
    }
  }
  EXPECT_EQ(ReadPieces(TelemetryFormat::kLongCsv,
                       {"machine,timestamp,value,metric\n", "n1,1,oops,a\n"}, false)
                .back(),
            "invalid argument: t:2: value: \"oops\" is not a number skipped 0");
  EXPECT_EQ(ReadPieces(TelemetryFormat::kLongCsv, {"", ""}, false).back(),
            "invalid argument: t:1: header: empty file, expected a header line skipped 0");
  EXPECT_EQ(ReadPieces(TelemetryFormat::kJsonl, {}, false).back(), "OK skipped 0");
}

}  // namespace
}  // namespace vigil::telemetry
