#include "vigil/superbench/diagnose.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "vigil/core/file.h"
#include "vigil/superbench/superbench_report.h"

namespace vigil::superbench {
namespace {

const std::string kData = std::string(VIGIL_SOURCE_DIR) + "/tests/data/";

struct Fixture {
  FleetTable table;
  std::vector<Rule> rules;
  Baseline baseline;
};

Fixture Load(const std::string& rules, const std::string& baseline = "") {
  Fixture f;
  Result<FleetTable> t = ReadFleetTable(kData + "superbench_test_results.jsonl");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  f.table = std::move(*t);
  Result<std::vector<Rule>> r = ReadRules(kData + rules);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  f.rules = std::move(*r);
  if (!baseline.empty()) {
    Result<Baseline> b = ReadBaseline(kData + baseline);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    f.baseline = std::move(*b);
  }
  return f;
}

Diagnosis Judge(const Fixture& f, bool strict) {
  DiagnoseOptions o;
  o.strict_missing = strict;
  Result<Diagnosis> d = Diagnose(f.table, f.rules, f.baseline, o);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? std::move(*d) : Diagnosis{};
}

// SuperBench's test_data_diagnosis: the same verdicts, categories and details, and byte for byte
// the files its tests expect in every format.
TEST(DiagnoseTest, SuperBenchFixtureWithBaseline) {
  const Fixture f = Load("superbench_test_rules.yaml", "superbench_test_baseline.json");
  const Diagnosis d = Judge(f, /*strict=*/false);
  ASSERT_EQ(d.nodes.size(), 3u);
  EXPECT_TRUE(d.nodes[0].defective);
  EXPECT_FALSE(d.nodes[1].defective);
  EXPECT_TRUE(d.nodes[2].defective);
  EXPECT_EQ(d.nodes[0].categories, "KernelLaunch");
  EXPECT_EQ(d.nodes[0].details,
            "kernel-launch/event_overhead:0(B/L: 0.0060 VAL: 0.1000 VAR: 1577.85% "
            "Rule:lambda x:x>0.05)");
  EXPECT_EQ(d.nodes[0].issue_count, 1);
  EXPECT_EQ(d.nodes[2].categories, "FailedTest");
  EXPECT_NE(d.nodes[2].details.find("mem-bw/return_code(VAL: 1.0000 Rule:lambda x:x>0)"),
            std::string::npos);
  EXPECT_NE(d.nodes[2].details.find("mem-bw/H2D_Mem_BW:0_miss"), std::string::npos);
  EXPECT_EQ(d.nodes[2].issue_count, 17);
  EXPECT_EQ(d.metrics.size(), 34u);  // 36 columns with Category and Defective Details
  EXPECT_EQ(d.defective_order, (std::vector<size_t>{0, 2}));

  const auto expect_file = [&](ReportFormat format, const std::string& expected) {
    ReportOptions o;
    o.format = format;
    EXPECT_EQ(FormatDiagnosisReport(f.table, d, o), *ReadFile(kData + expected)) << expected;
  };
  expect_file(ReportFormat::kJsonl, "superbench_diagnosis_summary.jsonl");
  expect_file(ReportFormat::kJson, "superbench_diagnosis_summary_json.json");
  expect_file(ReportFormat::kMd, "superbench_diagnosis_summary.md");
  expect_file(ReportFormat::kHtml, "superbench_diagnosis_summary.html");
}

// SuperBench's --output-all JSON: every node, raw values, accept and issue count up front.
TEST(DiagnoseTest, OutputAllHoldsEveryNode) {
  const Fixture f = Load("superbench_test_rules.yaml", "superbench_test_baseline.json");
  const Diagnosis d = Judge(f, false);
  ReportOptions o;
  o.output_all = true;
  const std::string text = FormatDiagnosisReport(f.table, d, o);
  Result<Json> j = ParseJson(text, "all");
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->size(), 3u);
  const Json& n1 = (*j)[0];
  auto it = n1.begin();
  EXPECT_EQ(it.key(), "index");
  EXPECT_EQ((++it).key(), "diagnosis/accept");
  EXPECT_EQ((++it).key(), "diagnosis/issue_num");
  EXPECT_EQ((++it).key(), "diagnosis/category");
  EXPECT_EQ((++it).key(), "diagnosis/issue_details");
  EXPECT_EQ((++it).key(), "bert_models/pytorch-bert-base/steptime_train_float32");
  EXPECT_EQ(n1["diagnosis/accept"], false);
  EXPECT_EQ(n1["diagnosis/issue_num"], 1);
  EXPECT_EQ((*j)[1]["diagnosis/accept"], true);
  EXPECT_EQ((*j)[1]["diagnosis/issue_num"], 0);
  EXPECT_EQ((*j)[1]["diagnosis/category"], "N/A");
  EXPECT_EQ((*j)[2]["diagnosis/issue_num"], 17);
  // Raw values, rounded to 10 decimals as pandas writes them; integral columns as integers.
  EXPECT_NE(text.find("\"bert_models/pytorch-bert-base/steptime_train_float32\": 114.5916701062"),
            std::string::npos);
  EXPECT_NE(text.find("\"gemm-flops/FP16:0\": 33878,"), std::string::npos);
  EXPECT_NE(text.find("\"kernel-launch/event_overhead:0\": 0.1,"), std::string::npos);
}

// SuperBench's test_rules_without_baseline: stored rules feed a multi_rules balance check.
TEST(DiagnoseTest, StoredRulesAndMultiRulesWithoutBaseline) {
  const Fixture f = Load("superbench_test_rules_without_baseline.yaml");
  const Diagnosis d = Judge(f, false);
  // rule0 flags every kernel-launch value > 0, so every node that has them is defective.
  for (const NodeVerdict& v : d.nodes) EXPECT_TRUE(v.defective);
  EXPECT_NE(d.nodes[0].categories.find("KernelLaunch"), std::string::npos);
}

Fixture FromText(const std::string& data, const std::string& rules, Baseline baseline = {}) {
  Fixture f;
  Result<FleetTable> t = ParseFleetTable(data, "data.jsonl");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  f.table = std::move(*t);
  Result<std::vector<Rule>> r = ParseRules(rules, "rules.yaml");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  f.rules = std::move(*r);
  f.baseline = std::move(baseline);
  return f;
}

// SuperBench's test_mutli_rules, both cases.
TEST(DiagnoseTest, MultiRulesCountsAndValues) {
  Fixture f = FromText(
      "{\"node\": \"sb-validation-04\", \"kernel-launch/wall_overhead\": 0.005, "
      "\"mem-bw/D2H_Mem_BW\": 25}\n"
      "{\"node\": \"sb-validation-05\", \"kernel-launch/wall_overhead\": 0.005, "
      "\"mem-bw/D2H_Mem_BW\": 10}\n",
      R"(superbench:
  rules:
    rule1: {categories: CNN, criteria: 'lambda x:x<-0.5', store: True, function: variance,
            metrics: [mem-bw/D2H_Mem_BW]}
    rule2: {categories: CNN, criteria: 'lambda x:x<-0.5', function: variance, store: True,
            metrics: [kernel-launch/wall_overhead]}
    rule3: {categories: CNN, function: multi_rules,
            criteria: 'lambda label:True if label["rule1"]+label["rule2"]>=2 else False'}
)",
      {{"kernel-launch/wall_overhead", 0.01026}, {"mem-bw/D2H_Mem_BW", 24.3}});
  Diagnosis d = Judge(f, false);
  EXPECT_FALSE(d.nodes[0].defective);
  ASSERT_TRUE(d.nodes[1].defective);
  EXPECT_EQ(d.nodes[1].categories, "CNN");
  EXPECT_EQ(d.nodes[1].details,
            "kernel-launch/wall_overhead(B/L: 0.0103 VAL: 0.0050 VAR: -51.27% Rule:lambda "
            "x:x<-0.5),mem-bw/D2H_Mem_BW(B/L: 24.3000 VAL: 10.0000 VAR: -58.85% Rule:lambda "
            "x:x<-0.5),rule3:lambda label:True if label[\"rule1\"]+label[\"rule2\"]>=2 else False");

  f = FromText(
      "{\"node\": \"n4\", \"nccl-bw:allreduce-run0/allreduce_1073741824_busbw\": 10, "
      "\"nccl-bw:allreduce-run1/allreduce_1073741824_busbw\": 23, "
      "\"nccl-bw:allreduce-run2/allreduce_1073741824_busbw\": 22}\n"
      "{\"node\": \"n5\", \"nccl-bw:allreduce-run0/allreduce_1073741824_busbw\": 22, "
      "\"nccl-bw:allreduce-run1/allreduce_1073741824_busbw\": 23, "
      "\"nccl-bw:allreduce-run2/allreduce_1073741824_busbw\": 22}\n"
      "{\"node\": \"n6\", \"nccl-bw:allreduce-run0/allreduce_1073741824_busbw\": 10, "
      "\"nccl-bw:allreduce-run1/allreduce_1073741824_busbw\": NaN}\n",
      R"(superbench:
  rules:
    rule1:
      categories: NCCL_DIS
      store: True
      metrics:
        - nccl-bw:allreduce-run0/allreduce_1073741824_busbw
        - nccl-bw:allreduce-run1/allreduce_1073741824_busbw
        - nccl-bw:allreduce-run2/allreduce_1073741824_busbw
    rule2:
      categories: NCCL_DIS
      criteria: 'lambda label:True if min(label["rule1"].values())/max(label["rule1"].values())<0.95 else False'
      function: multi_rules
)");
  d = Judge(f, false);
  EXPECT_TRUE(d.nodes[0].defective);
  EXPECT_EQ(d.nodes[0].categories, "NCCL_DIS");
  EXPECT_FALSE(d.nodes[1].defective);
  EXPECT_FALSE(d.nodes[2].defective);  // min and max of [10, nan, nan] are both 10, as in Python
}

// SuperBench's test_failure_check.
TEST(DiagnoseTest, FailureCheck) {
  const Fixture f = FromText(
      "{\"node\": \"n4\", \"gemm-flops/return_code:0\": 0, \"gemm-flops/return_code:1\": 0, "
      "\"resnet_models/pytorch-resnet152/return_code\": 0}\n"
      "{\"node\": \"n5\", \"gemm-flops/return_code:0\": -1, \"gemm-flops/return_code:1\": null, "
      "\"resnet_models/pytorch-resnet152/return_code\": -1}\n",
      R"(superbench:
  rules:
    rule1:
      categories: FailedTest
      criteria: 'lambda x:x!=0'
      function: failure_check
      metrics: [gemm-flops/return_code:0, gemm-flops/return_code:1, gemm-flops/return_code:2,
                resnet_models/pytorch-resnet152/return_code]
)");
  const Diagnosis d = Judge(f, false);
  ASSERT_TRUE(d.nodes[0].defective);
  EXPECT_EQ(d.nodes[0].categories, "FailedTest");
  EXPECT_EQ(d.nodes[0].details, "gemm-flops/return_code:2_miss");
  ASSERT_TRUE(d.nodes[1].defective);
  EXPECT_EQ(d.nodes[1].details,
            "gemm-flops/return_code:0(VAL: -1.0000 Rule:lambda x:x!=0),"
            "gemm-flops/return_code:1_miss,gemm-flops/return_code:2_miss,"
            "resnet_models/pytorch-resnet152/return_code(VAL: -1.0000 Rule:lambda x:x!=0)");
}

// SuperBench only notes a missing metric; Vigil's default counts it as a violation.
TEST(DiagnoseTest, StrictMissingMakesAMissingMetricDefective) {
  const Fixture f = FromText("{\"node\": \"a\", \"m/x:0\": 1}\n{\"node\": \"b\", \"m/x:1\": 1}\n",
                             "superbench:\n  rules:\n    r:\n      function: value\n"
                             "      criteria: 'lambda x: x > 5'\n      categories: M\n"
                             "      metrics: ['m/x:\\d+']\n");
  EXPECT_FALSE(Judge(f, false).nodes[0].defective);
  const Diagnosis strict = Judge(f, true);
  ASSERT_TRUE(strict.nodes[0].defective);
  EXPECT_EQ(strict.nodes[0].details, "m/x:1_miss");
  EXPECT_EQ(strict.nodes[0].categories, "FailedTest");
}

TEST(DiagnoseTest, BaselineLookup) {
  const Baseline b = *ReadBaseline(kData + "superbench_test_baseline.json");
  EXPECT_EQ(BaselineOf(b, "kernel-launch/event_overhead:0"), 0.00596);
  EXPECT_EQ(BaselineOf(b, "kernel-launch/return_code"), 0);
  EXPECT_EQ(BaselineOf(b, "mem-bw/H2D:0"), std::nullopt);
}

TEST(DiagnoseTest, BadRuleFilesNameTheRule) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"superbench:\n  rules:\n    r1:\n      function: variance\n      criteria: 'lambda x:x>0'"
       "\n      metrics: [a/b]\n",
       "rules.yaml:3: rule \"r1\": lacks \"categories\""},
      {"superbench:\n  rules:\n    r1: {categories: C, function: abb, criteria: 'lambda x:x>0', "
       "metrics: [a/b]}\n",
       "rules.yaml:3: rule \"r1\": unknown function \"abb\""},
      {"superbench:\n  rules:\n    r1: {categories: C, function: value, metrics: [a/b]}\n",
       "rules.yaml:3: rule \"r1\": lacks \"criteria\""},
      {"superbench:\n  rules:\n    r1: {categories: C, function: value, criteria: 'x>5', "
       "metrics: [a/b]}\n",
       "rules.yaml:3: rule \"r1\": criteria \"x>5\": position 1:"},
      {"superbench:\n  rules:\n    r1: {categories: C, function: value, "
       "criteria: 'lambda x: __import__(\"os\")', metrics: [a/b]}\n",
       "rules.yaml:3: rule \"r1\": criteria"},
      {"superbench:\n  rules:\n    r1: {categories: C, function: value, criteria: 'lambda x: x',"
       " metrics: [a/b]}\n",
       "rules.yaml:3: rule \"r1\": criteria \"lambda x: x\" must return True or False"},
      {"superbench:\n  rules:\n    r1: {categories: C, store: 'true', function: value, "
       "criteria: 'lambda x:x>0', metrics: [a/b]}\n",
       "rules.yaml:3: rule \"r1\": \"store\" must be True or False"},
      {"superbench:\n  rules:\n    r1: {categories: C, function: value, criteria: 'lambda x:x>0'}"
       "\n",
       "rules.yaml:3: rule \"r1\": lacks \"metrics\""},
      {"rules: []\n", "rules.yaml: expected \"superbench: rules:\""},
      {"superbench: [\n", "rules.yaml:2: not valid YAML"},
  };
  for (const Case& c : cases) {
    Result<std::vector<Rule>> r = ParseRules(c.yaml, "rules.yaml");
    ASSERT_FALSE(r.ok()) << c.yaml;
    EXPECT_EQ(r.status().message().rfind(c.message, 0), 0u) << r.status().message();
  }
}

TEST(DiagnoseTest, MissingOrZeroBaselineAndBadRegexAreErrors) {
  const std::string data = "{\"node\": \"a\", \"m/x\": 1}\n";
  const std::string variance =
      "superbench:\n  rules:\n    r:\n      function: variance\n      criteria: 'lambda x:x<0'\n"
      "      categories: M\n      metrics: [m/x]\n";
  Fixture f = FromText(data, variance);
  Result<Diagnosis> d = Diagnose(f.table, f.rules, {}, {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "rule \"r\": no baseline for \"m/x\"");
  d = Diagnose(f.table, f.rules, {{"m/x", 0.0}}, {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), "rule \"r\": the baseline of \"m/x\" is 0");
  f = FromText(data,
               "superbench:\n  rules:\n    r:\n      function: value\n"
               "      criteria: 'lambda x:x<0'\n      categories: M\n      metrics: ['m/(x']\n");
  d = Diagnose(f.table, f.rules, {}, {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message().rfind("rule \"r\": metric pattern \"m/(x\":", 0), 0u);
  f = FromText(data,
               "superbench:\n  rules:\n    r:\n      function: multi_rules\n"
               "      criteria: 'lambda label: label[\"nope\"] > 0'\n      categories: M\n");
  d = Diagnose(f.table, f.rules, {}, {});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("no stored rule \"nope\""), std::string::npos);
}

TEST(DiagnoseTest, SameVerdictsForAnyThreadCount) {
  std::string data;
  for (int i = 0; i < 500; ++i) {
    data += fmt::format("{{\"node\": \"n{}\", \"m/x:0\": {}, \"m/x:1\": {}}}\n", i, i % 7, i % 3);
  }
  const Fixture f = FromText(data,
                             "superbench:\n  rules:\n    r:\n      function: value\n"
                             "      criteria: 'lambda x:x>5'\n      categories: M\n"
                             "      metrics: ['m/x:\\d']\n");
  DiagnoseOptions one, many;
  one.threads = 1;
  many.threads = 4;
  const Diagnosis a = *Diagnose(f.table, f.rules, {}, one);
  const Diagnosis b = *Diagnose(f.table, f.rules, {}, many);
  ReportOptions o;
  o.format = ReportFormat::kJsonl;
  EXPECT_EQ(FormatDiagnosisReport(f.table, a, o), FormatDiagnosisReport(f.table, b, o));
  EXPECT_EQ(a.defective_order.size(), 71u);  // i % 7 == 6
}

TEST(DiagnoseTest, GenerateBaselineMeanAndFixThreshold) {
  Result<FleetTable> t = ReadFleetTable(kData + "superbench_test_generate_baseline_results.jsonl");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Result<BaselineResult> mean = GenerateBaseline(*t, nullptr);
  ASSERT_TRUE(mean.ok());
  EXPECT_EQ(mean->baseline.size(), t->metric_count());
  Result<std::vector<Rule>> rules =
      ReadRules(kData + "superbench_test_generate_baseline_diagnosis_rules.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().ToString();
  Result<BaselineResult> fixed = GenerateBaseline(*t, &*rules);
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_GT(fixed->baseline.size(), 0u);
  for (const auto& [metric, value] : fixed->baseline) {
    EXPECT_TRUE(metric.rfind("kernel-launch", 0) == 0 || metric.rfind("mem-bw", 0) == 0) << metric;
    EXPECT_TRUE(std::isfinite(value));
  }

  // A planted outlier is dropped, and the baseline is the mean of the rest.
  const Fixture f = FromText(
      "{\"node\": \"a\", \"m/x\": 100}\n{\"node\": \"b\", \"m/x\": 102}\n"
      "{\"node\": \"c\", \"m/x\": 98}\n{\"node\": \"d\", \"m/x\": 50}\n",
      "superbench:\n  rules:\n    r:\n      function: variance\n      criteria: 'lambda x:x<-0.1'\n"
      "      categories: M\n      metrics: [m/x]\n");
  Result<BaselineResult> b = GenerateBaseline(f.table, &f.rules);
  ASSERT_TRUE(b.ok());
  EXPECT_DOUBLE_EQ(b->baseline.at("m/x"), 100.0);
  EXPECT_EQ(b->dropped.at("m/x"), 1);
  EXPECT_EQ(FormatBaseline({{"m/x", 100.0}, {"a/b", 0.0123456}, {"a/c", 12.3456}}, 2),
            "{\n  \"a/b\": 0.012,\n  \"a/c\": 12.35,\n  \"m/x\": 100\n}\n");
}

// Sums beyond a double: refused, naming the metric, rather than written as "inf".
TEST(DiagnoseTest, GenerateBaselineRefusesAMeanThatIsNotFinite) {
  const FleetTable t = TableOfRows(
      {{"a", {{"m/x", 1e308}, {"m/y", 1}}, ""}, {"b", {{"m/x", 1e308}, {"m/y", 2}}, ""}}, "rows");
  Result<BaselineResult> b = GenerateBaseline(t, nullptr);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(b.status().message(),
            "metric \"m/x\": its mean is inf (the values overflow a double when summed)");
  Result<std::vector<Rule>> rules = ParseRules(
      "superbench:\n  rules:\n    r:\n      function: value\n      criteria: 'lambda x:x<0'\n"
      "      categories: M\n      metrics: [m/x]\n",
      "rules.yaml");
  ASSERT_TRUE(rules.ok());
  b = GenerateBaseline(t, &*rules);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("\"m/x\""), std::string::npos);
}

// A rule written for another SuperBench release selects nothing: SuperBench passes it in
// silence; Vigil warns, names the rule and says which names the data has.
TEST(DiagnoseTest, RuleSelectingNothingIsAWarningWithANamingHint) {
  const std::string rules =
      "superbench:\n  rules:\n    rdma:\n      function: variance\n"
      "      criteria: 'lambda x:x<-0.1'\n      categories: RDMA\n"
      "      metrics:\n        - ib-loopback/ib_write_8388608_ib\\d+_bw:\\d*\n"
      "    gone:\n      function: value\n      criteria: 'lambda x:x>0'\n"
      "      categories: M\n      metrics: [disk-benchmark/.*_iops]\n"
      "    failed:\n      function: failure_check\n      criteria: 'lambda x:x>0'\n"
      "      categories: F\n      metrics: [nope/return_code]\n";
  const Fixture f =
      FromText("{\"node\": \"a\", \"ib-loopback/IB_write_8388608_Avg_4:0\": 1}\n", rules);
  Result<Diagnosis> d = Diagnose(f.table, f.rules, {}, {});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->warnings.size(), 2u);  // failure_check flags the node instead
  EXPECT_EQ(d->warnings[0],
            "rule \"rdma\" (line 4): its metrics 'ib-loopback/ib_write_8388608_ib\\d+_bw:\\d*' "
            "select no key of the data ('ib-loopback/ib_write_8388608_ib\\d+_bw:\\d*' has "
            "SuperBench v0.4-v0.5 names but the data's ib-loopback keys have v0.3 names, such as "
            "\"ib-loopback/IB_write_8388608_Avg_4:0\")");
  EXPECT_EQ(d->warnings[1],
            "rule \"gone\" (line 10): its metrics 'disk-benchmark/.*_iops' select no key of the "
            "data (the data has no disk-benchmark keys)");
  EXPECT_TRUE(d->nodes[0].defective);

  DiagnoseOptions strict;
  strict.strict = true;
  d = Diagnose(f.table, f.rules, {}, strict);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message().rfind("rule \"rdma\" (line 4): its metrics", 0), 0u)
      << d.status().message();
  EXPECT_TRUE(d.status().message().ends_with(" (--strict)")) << d.status().message();
}

// NDv4's quick-scan rules (v0.4 names) against a v0.3 summary: every rule whose benchmark was
// renamed is named, with the generation of both.
TEST(DiagnoseTest, V04RulesAgainstV03DataNameEachRule) {
  const Fixture f = Load("superbench_ndv4_rule.yaml", "superbench_ndv4_baseline.json");
  Result<Diagnosis> d = Diagnose(f.table, f.rules, f.baseline, {});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::vector<std::string> named;
  for (const std::string& w : d->warnings) named.push_back(w.substr(0, w.find(' ', 6)));
  EXPECT_EQ(named,
            (std::vector<std::string>{"rule \"kernel_launch\"", "rule \"mem_bw\"",
                                      "rule \"gflops\"", "rule \"tensor_core\"",
                                      "rule \"rdma_loopback\"", "rule \"model_throughput\""}));
  for (const std::string& w : d->warnings) {
    if (w.find("tensor_core") != std::string::npos) continue;  // '*_tc_' is no release's name
    EXPECT_NE(w.find("has SuperBench v0.4"), std::string::npos) << w;
    EXPECT_NE(w.find("keys have v0.3 names"), std::string::npos) << w;
  }
}

TEST(PythonReprTest, MatchesPython) {
  EXPECT_EQ(PythonRepr(0.0), "0.0");
  EXPECT_EQ(PythonRepr(1577.85), "1577.85");
  EXPECT_EQ(PythonRepr(-0.17), "-0.17");
  EXPECT_EQ(PythonRepr(15.7785234899), "15.7785234899");
  EXPECT_EQ(PythonRepr(1e16), "1e+16");
  EXPECT_EQ(PythonRepr(1.5e-05), "1.5e-05");
  EXPECT_EQ(PythonRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonRepr(123.0), "123.0");
  EXPECT_EQ(PythonRepr(1234567890123456.0), "1234567890123456.0");
}

TEST(DiagnoseTest, BaselineValuesBeyondAnyMetricValueAreRefused) {
  const Result<Baseline> b = ParseBaseline(R"({"mem-bw/H2D:0": 1e200})", "b.json");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(),
            "b.json: field \"mem-bw/H2D:0\": 1e+200 is outside [-1e+100, 1e+100]");
}

}  // namespace
}  // namespace vigil::superbench
