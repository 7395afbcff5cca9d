#include "vigil/superbench/diagnose.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <re2/re2.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "vigil/core/bounds.h"
#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/parallel.h"
#include "vigil/core/text.h"
#include "vigil/core/yaml_fields.h"
#include "vigil/results/anatomy.h"

namespace vigil::superbench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kNodesPerThread = 64;  // below that a second thread does not pay

// ------------------------------------------------------------------------------- rule files

Result<RuleFunction> FunctionOf(std::string_view name) {
  if (name == "variance") return RuleFunction::kVariance;
  if (name == "value") return RuleFunction::kValue;
  if (name == "multi_rules") return RuleFunction::kMultiRules;
  if (name == "failure_check") return RuleFunction::kFailureCheck;
  return Status::InvalidArgument(fmt::format(
      "unknown function {} (variance, value, multi_rules or failure_check)", Quote(name)));
}

// A plain (unquoted) YAML scalar: yaml-cpp tags quoted ones "!".
bool IsPlain(const YAML::Node& n) { return n.IsScalar() && n.Tag() != "!"; }

Result<Rule> ParseRule(const std::string& name, const YAML::Node& node) {
  Rule rule;
  rule.name = name;
  rule.line = node.Mark().line + 1;
  if (!node.IsMap()) return Status::InvalidArgument("expected a mapping of fields");
  const YAML::Node categories = node["categories"];
  if (!categories || !categories.IsScalar()) {
    return Status::InvalidArgument("lacks \"categories\"");
  }
  rule.category = categories.Scalar();
  if (const YAML::Node store = node["store"]) {
    bool b = false;
    if (!IsPlain(store) || !YAML::convert<bool>::decode(store, b)) {
      return Status::InvalidArgument("\"store\" must be True or False");
    }
    rule.store = b;
  }
  if (const YAML::Node metrics = node["metrics"]) {
    if (metrics.IsScalar()) {
      rule.patterns.push_back(metrics.Scalar());
    } else if (metrics.IsSequence()) {
      for (const YAML::Node& m : metrics) {
        if (!m.IsScalar()) return Status::InvalidArgument("\"metrics\" entries must be strings");
        rule.patterns.push_back(m.Scalar());
      }
    } else {
      return Status::InvalidArgument("\"metrics\" must be a string or a list of strings");
    }
  }
  const YAML::Node function = node["function"];
  const YAML::Node criteria = node["criteria"];
  if (function) {
    if (!function.IsScalar()) return Status::InvalidArgument("\"function\" must be a string");
    VIGIL_ASSIGN_OR_RETURN(rule.function, FunctionOf(function.Scalar()));
  } else if (!rule.store || criteria) {
    return Status::InvalidArgument("lacks \"function\"");
  }
  if (criteria) {
    if (!criteria.IsScalar()) return Status::InvalidArgument("\"criteria\" must be a string");
    Result<Criteria> c = Criteria::Parse(criteria.Scalar());
    if (!c.ok()) {
      return Status::InvalidArgument(
          fmt::format("criteria {}: {}", Quote(criteria.Scalar()), c.status().message()));
    }
    rule.criteria = std::move(*c);
  } else if (rule.function != RuleFunction::kNone) {
    return Status::InvalidArgument("lacks \"criteria\"");
  }
  if (rule.function != RuleFunction::kMultiRules && rule.patterns.empty()) {
    return Status::InvalidArgument("lacks \"metrics\"");
  }
  if (rule.function == RuleFunction::kMultiRules && rule.store) {
    return Status::InvalidArgument("a multi_rules rule cannot be stored");
  }
  // SuperBench calls the criteria with 0 when it loads a variance or value rule and requires a
  // bool back.
  if (rule.criteria && rule.function != RuleFunction::kMultiRules) {
    const EvalResult r = (*rule.criteria)(0.0);
    if (r.error != EvalError::kNone) {
      return Status::InvalidArgument(
          fmt::format("criteria {} fails on 0: {}", Quote(rule.criteria->text()), r.message));
    }
    if (r.kind != EvalResult::Kind::kBool) {
      return Status::InvalidArgument(
          fmt::format("criteria {} must return True or False", Quote(rule.criteria->text())));
    }
  }
  return rule;
}

// ----------------------------------------------------------------------- metric resolution

// SuperBench's benchmark of a key or pattern: the text before the first '/', or before the first
// ':' when that part holds an annotation ("nccl-bw:allreduce-run0/busbw" -> "nccl-bw").
std::string_view BenchmarkOf(std::string_view key) {
  std::string_view b = key.substr(0, key.find('/'));
  if (b.find(':') != std::string_view::npos) b = key.substr(0, key.find(':'));
  return b;
}

// The table's columns by SuperBench benchmark.
using ColumnsByBenchmark = std::map<std::string, std::vector<size_t>, std::less<>>;
ColumnsByBenchmark ByBenchmark(const FleetTable& table) {
  ColumnsByBenchmark out;
  for (size_t c = 0; c < table.metric_count(); ++c) {
    out[std::string(BenchmarkOf(table.metrics()[c]))].push_back(c);
  }
  return out;
}

struct ResolvedRule {
  const Rule* rule;
  std::vector<size_t> columns;      // table columns the rule selects, sorted by key
  std::vector<double> baselines;    // per column (variance rules)
  std::vector<size_t> summary_pos;  // per column: its place in Diagnosis::metrics
  // failure_check: per pattern, the first selected column it matches, or -1.
  std::vector<long> pattern_first_match;
};

// The columns a rule selects, as SuperBench's RuleBase._get_metrics does.
Result<std::vector<size_t>> Select(const Rule& rule, const FleetTable& table,
                                   const ColumnsByBenchmark& by_benchmark,
                                   std::vector<std::unique_ptr<RE2>>& regexes) {
  regexes.clear();
  for (const std::string& p : rule.patterns) {
    RE2::Options opts;
    opts.set_log_errors(false);
    auto re = std::make_unique<RE2>(p, opts);
    if (!re->ok()) {
      return Status::InvalidArgument(fmt::format("metric pattern {}: {}", Quote(p), re->error()));
    }
    regexes.push_back(std::move(re));
  }
  std::set<size_t> selected;
  std::set<std::string_view> benchmarks;
  for (const std::string& p : rule.patterns) {
    if (p.find('/') != std::string::npos) benchmarks.insert(BenchmarkOf(p));
  }
  for (std::string_view b : benchmarks) {
    auto it = by_benchmark.find(b);
    if (it == by_benchmark.end()) continue;
    for (size_t col : it->second) {
      const std::string& key = table.metrics()[col];
      bool hit = std::find(rule.patterns.begin(), rule.patterns.end(), key) != rule.patterns.end();
      for (size_t i = 0; !hit && i < rule.patterns.size(); ++i) {
        hit = BenchmarkOf(rule.patterns[i]) == b && RE2::PartialMatch(key, *regexes[i]);
      }
      if (hit) selected.insert(col);
    }
  }
  std::vector<size_t> cols(selected.begin(), selected.end());
  std::sort(cols.begin(), cols.end(),
            [&](size_t a, size_t b) { return table.metrics()[a] < table.metrics()[b]; });
  return cols;
}

// Why a rule may select nothing: for each of its patterns, the data's keys of the pattern's
// benchmark (none at all, or named in another SuperBench generation than the pattern's).
std::string NamingHint(const Rule& rule, const FleetTable& table,
                       const ColumnsByBenchmark& by_benchmark,
                       const std::vector<std::unique_ptr<RE2>>& regexes) {
  std::vector<std::string> hints;
  for (size_t p = 0; p < rule.patterns.size(); ++p) {
    const std::string& pattern = rule.patterns[p];
    if (pattern.find('/') == std::string::npos) continue;
    const std::string_view benchmark = BenchmarkOf(pattern);
    auto it = by_benchmark.find(benchmark);
    if (it == by_benchmark.end()) {
      hints.push_back(fmt::format("the data has no {} keys", benchmark));
      continue;
    }
    // The data's generation: that of its first key of the benchmark that has one.
    const std::string* example = &table.metrics()[it->second.front()];
    const NamingGeneration* data = nullptr;
    for (size_t col : it->second) {
      if ((data = NamingGenerationOf(table.metrics()[col])) != nullptr) {
        example = &table.metrics()[col];
        break;
      }
    }
    // The pattern's: the generation whose example names (under the data's own prefix, such as
    // "gpt_models/pytorch-gpt2-large/", with and without a rank) it selects.
    const std::string prefix = example->substr(0, example->rfind('/') + 1);
    const NamingGeneration* own = nullptr;
    for (const NamingGeneration& g : NamingGenerations()) {
      if (data == nullptr || g.benchmark != data->benchmark || own != nullptr) continue;
      for (std::string_view name : g.examples) {
        const std::string key = prefix + std::string(name);
        if (RE2::PartialMatch(key, *regexes[p]) || RE2::PartialMatch(key + ":0", *regexes[p])) {
          own = &g;
          break;
        }
      }
    }
    if (own != nullptr && own != data) {
      hints.push_back(fmt::format(
          "'{}' has SuperBench {} names but the data's {} keys have {} names, such as {}", pattern,
          own->releases, benchmark, data->releases, Quote(*example)));
    } else if (data != nullptr) {
      hints.push_back(fmt::format("the data's {} keys have SuperBench {} names, such as {}",
                                  benchmark, data->releases, Quote(*example)));
    } else {
      hints.push_back(fmt::format("the data's {} keys are such as {}", benchmark, Quote(*example)));
    }
  }
  return hints.empty() ? "" : fmt::format(" ({})", fmt::join(hints, "; "));
}

// ------------------------------------------------------------------------- node evaluation

std::string Fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

struct NodeState {
  std::vector<std::string> details;
  std::set<std::string> categories;
  Labels labels;
  bool defective = false;
};

class NodeJudge {
 public:
  NodeJudge(const FleetTable& t, const std::vector<ResolvedRule>& rules, const DiagnoseOptions& o,
            size_t metric_count)
      : t_(t), rules_(rules), o_(o), metric_count_(metric_count) {}

  // Judges node i. Errors for a criteria that fails on a value, and a multi_rules KeyError.
  Result<NodeVerdict> Judge(size_t i) const {
    NodeState s;
    NodeVerdict v;
    v.summary.assign(metric_count_, kNaN);
    const double* row = t_.row(i);
    for (const ResolvedRule& r : rules_) {
      const Rule& rule = *r.rule;
      if (rule.function == RuleFunction::kNone) {  // stored values, no criteria
        StoredLabel& label = s.labels[rule.name];
        label.is_map = true;
        for (size_t col : r.columns) label.values.emplace_back(t_.metrics()[col], row[col]);
        continue;
      }
      int violated = 0;
      switch (rule.function) {
        case RuleFunction::kVariance:
        case RuleFunction::kValue: {
          VIGIL_ASSIGN_OR_RETURN(violated, Metrics(r, row, o_.strict_missing, s, v));
          break;
        }
        case RuleFunction::kFailureCheck: {
          VIGIL_ASSIGN_OR_RETURN(violated, FailureCheck(r, row, s, v));
          break;
        }
        case RuleFunction::kMultiRules: {
          VIGIL_ASSIGN_OR_RETURN(violated, MultiRules(rule, s));
          break;
        }
        case RuleFunction::kNone:
          break;
      }
      if (rule.store) {
        s.labels[rule.name] = StoredLabel{false, static_cast<double>(violated), {}};
      } else if (violated > 0) {
        s.defective = true;
      }
    }
    v.defective = s.defective;
    if (!v.defective) {
      v.summary.clear();
      return v;
    }
    std::sort(s.details.begin(), s.details.end());
    v.details = fmt::format("{}", fmt::join(s.details, ","));
    v.categories = fmt::format("{}", fmt::join(s.categories, ","));
    v.issue_count = static_cast<int>(std::count(v.details.begin(), v.details.end(), ',')) + 1;
    return v;
  }

 private:
  static void Add(NodeState& s, std::string detail, const std::string* category) {
    s.details.push_back(std::move(detail));
    if (category != nullptr) s.categories.insert(*category);
  }

  // variance and value rules (and the value part of failure_check): the number of violations.
  Result<int> Metrics(const ResolvedRule& r, const double* row, bool count_missing, NodeState& s,
                      NodeVerdict& v) const {
    const Rule& rule = *r.rule;
    const std::string* category = rule.store ? nullptr : &rule.category;
    static const std::string kFailedTest = "FailedTest";
    int violated = 0;
    for (size_t k = 0; k < r.columns.size(); ++k) {
      const std::string& metric = t_.metrics()[r.columns[k]];
      const double val = row[r.columns[k]];
      if (std::isnan(val)) {
        Add(s, metric + "_miss", &kFailedTest);
        if (count_missing) ++violated;
        continue;
      }
      double x = val;
      if (rule.function == RuleFunction::kVariance) x = (val - r.baselines[k]) / r.baselines[k];
      v.summary[r.summary_pos[k]] = x;
      const EvalResult e = (*rule.criteria)(x);
      if (e.error != EvalError::kNone) {  // SuperBench stops with the exception
        return Status::InvalidArgument(fmt::format("rule {}: criteria {} fails on {} = {}: {}",
                                                   Quote(rule.name), Quote(rule.criteria->text()),
                                                   metric, x, e.message));
      }
      if (!e.truthy()) continue;
      ++violated;
      if (rule.function == RuleFunction::kVariance) {
        Add(s,
            fmt::format("{}(B/L: {} VAL: {} VAR: {}% Rule:{})", metric, Fixed(r.baselines[k], 4),
                        Fixed(val, 4), Fixed(x * 100, 2), rule.criteria->text()),
            category);
      } else {
        Add(s, fmt::format("{}(VAL: {} Rule:{})", metric, Fixed(val, 4), rule.criteria->text()),
            category);
      }
    }
    return violated;
  }

  Result<int> FailureCheck(const ResolvedRule& r, const double* row, NodeState& s,
                           NodeVerdict& v) const {
    int violated = 0;
    for (size_t p = 0; p < r.rule->patterns.size(); ++p) {
      const long col = r.pattern_first_match[p];
      if (col < 0) {
        ++violated;
        Add(s, r.rule->patterns[p] + "_miss", &r.rule->category);
      } else if (std::isnan(row[col])) {
        ++violated;
      }
    }
    // The value check adds the "_miss" details; a missing return code counted above already.
    VIGIL_ASSIGN_OR_RETURN(int failed, Metrics(r, row, /*count_missing=*/false, s, v));
    return violated + failed;
  }

  static Result<int> MultiRules(const Rule& rule, NodeState& s) {
    const EvalResult e = (*rule.criteria)(s.labels);
    if (e.error == EvalError::kKeyError) {
      return Status::InvalidArgument(fmt::format("rule {}: criteria {}: {}", Quote(rule.name),
                                                 Quote(rule.criteria->text()), e.message));
    }
    // SuperBench passes the rule on any other error (a missing metric's NaN, a division by
    // zero) and on a result that is not a bool.
    if (e.error != EvalError::kNone || e.kind != EvalResult::Kind::kBool || !e.truthy()) {
      return 0;
    }
    Add(s, fmt::format("{}:{}", rule.name, rule.criteria->text()), &rule.category);
    return 1;
  }

  const FleetTable& t_;
  const std::vector<ResolvedRule>& rules_;
  const DiagnoseOptions& o_;
  size_t metric_count_;
};

}  // namespace

Result<std::vector<Rule>> ParseRules(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(text, source));
  const YAML::Node rules =
      doc.IsMap() && doc["superbench"].IsMap() ? doc["superbench"]["rules"] : YAML::Node();
  if (!rules || !rules.IsMap()) {
    return Status::InvalidArgument(
        fmt::format("{}: expected \"superbench: rules:\" holding a mapping of rules", source));
  }
  std::vector<Rule> out;
  for (const auto& kv : rules) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    Result<Rule> rule = ParseRule(name, kv.second);
    if (!rule.ok()) {
      return Status::InvalidArgument(fmt::format("{}:{}: rule {}: {}", source,
                                                 kv.first.Mark().line + 1, Quote(name),
                                                 rule.status().message()));
    }
    out.push_back(std::move(*rule));
  }
  return out;
}

Result<std::vector<Rule>> ReadRules(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRules(text, path);
}

Result<Baseline> ParseBaseline(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(Json doc, ParseJson(text, source));
  if (!doc.is_object()) {
    return Status::InvalidArgument(fmt::format("{}: expected a JSON object", source));
  }
  Baseline b;
  for (const auto& [key, value] : doc.items()) {
    if (!value.is_number()) {
      return Status::InvalidArgument(
          fmt::format("{}: field {}: expected a number", source, Quote(key)));
    }
    const double v = value.get<double>();
    if (!kMetricValueBounds.Contains(v)) {
      return Status::InvalidArgument(fmt::format("{}: field {}: {}", source, Quote(key),
                                                 DescribeOutside(v, kMetricValueBounds)));
    }
    b[key] = v;
  }
  return b;
}

Result<Baseline> ReadBaseline(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseBaseline(text, path);
}

std::optional<double> BaselineOf(const Baseline& baseline, std::string_view metric) {
  if (auto it = baseline.find(metric); it != baseline.end()) return it->second;
  const size_t colon = metric.rfind(':');
  const std::string_view shorter = colon != std::string_view::npos
                                       ? metric.substr(0, colon)
                                       : metric.substr(0, metric.find('/'));
  if (auto it = baseline.find(shorter); it != baseline.end()) return it->second;
  return std::nullopt;
}

Result<Diagnosis> Diagnose(const FleetTable& table, const std::vector<Rule>& rules,
                           const Baseline& baseline, const DiagnoseOptions& options) {
  const ColumnsByBenchmark by_benchmark = ByBenchmark(table);
  std::vector<std::string> warnings;
  std::vector<ResolvedRule> resolved;
  std::map<std::string, RuleFunction> enabled;  // metric -> function of the last rule selecting it
  std::vector<std::unique_ptr<RE2>> regexes;
  for (const Rule& rule : rules) {
    const auto fail = [&](std::string_view what) {
      return Status::InvalidArgument(fmt::format("rule {}: {}", Quote(rule.name), what));
    };
    ResolvedRule r{&rule, {}, {}, {}, {}};
    if (rule.function != RuleFunction::kMultiRules) {
      Result<std::vector<size_t>> cols = Select(rule, table, by_benchmark, regexes);
      if (!cols.ok()) return fail(cols.status().message());
      r.columns = std::move(*cols);
    }
    // A failure_check rule that selects nothing flags every node already.
    if (r.columns.empty() && rule.function != RuleFunction::kMultiRules &&
        rule.function != RuleFunction::kFailureCheck) {
      std::vector<std::string> patterns;
      // Patterns as written (Quote would double a regex's backslashes).
      for (const std::string& p : rule.patterns) patterns.push_back("'" + p + "'");
      std::string what = fmt::format(
          "rule {} (line {}): its metrics {} select no key of the data{}", Quote(rule.name),
          rule.line, fmt::join(patterns, ", "), NamingHint(rule, table, by_benchmark, regexes));
      if (options.strict) return Status::InvalidArgument(what + " (--strict)");
      warnings.push_back(std::move(what));
    }
    for (size_t col : r.columns) {
      const std::string& metric = table.metrics()[col];
      if (rule.function == RuleFunction::kVariance) {
        const std::optional<double> b = BaselineOf(baseline, metric);
        if (!b) return fail(fmt::format("no baseline for {}", Quote(metric)));
        if (*b == 0) return fail(fmt::format("the baseline of {} is 0", Quote(metric)));
        r.baselines.push_back(*b);
      }
      if (rule.function != RuleFunction::kNone) enabled[metric] = rule.function;
    }
    if (rule.function == RuleFunction::kFailureCheck) {
      for (size_t p = 0; p < rule.patterns.size(); ++p) {
        long first = -1;
        for (size_t col : r.columns) {
          if (RE2::PartialMatch(table.metrics()[col], *regexes[p])) {
            first = static_cast<long>(col);
            break;
          }
        }
        r.pattern_first_match.push_back(first);
      }
    }
    resolved.push_back(std::move(r));
  }
  Diagnosis d;
  d.warnings = std::move(warnings);
  std::map<std::string_view, size_t> position;
  for (const auto& [metric, function] : enabled) {
    position[metric] = d.metrics.size();
    d.metrics.push_back(metric);
    d.metric_kinds.push_back(function);
  }
  for (ResolvedRule& r : resolved) {
    for (size_t col : r.columns) {
      auto it = position.find(table.metrics()[col]);
      r.summary_pos.push_back(it == position.end() ? 0 : it->second);
    }
  }

  // Nodes are independent: split them over threads.
  const size_t n = table.node_count();
  d.nodes.resize(n);
  const size_t workers = WorkerCount(n, kNodesPerThread, options.threads);
  std::vector<Status> errors(workers);
  const NodeJudge judge(table, resolved, options, d.metrics.size());
  RunWorkers(workers, [&](size_t w) {
    const auto [begin, end] = ShareOf(n, w, workers);
    for (size_t i = begin; i < end; ++i) {
      Result<NodeVerdict> v = judge.Judge(i);
      if (!v.ok()) {
        errors[w] = v.status();
        return;
      }
      d.nodes[i] = std::move(*v);
    }
  });
  for (const Status& s : errors) VIGIL_RETURN_IF_ERROR(s);

  for (size_t i = 0; i < n; ++i) {
    if (d.nodes[i].defective) d.defective_order.push_back(i);
  }
  std::stable_sort(d.defective_order.begin(), d.defective_order.end(), [&](size_t a, size_t b) {
    const NodeVerdict& x = d.nodes[a];
    const NodeVerdict& y = d.nodes[b];
    if (x.categories != y.categories) return x.categories > y.categories;
    return x.details > y.details;
  });
  return d;
}

Result<BaselineResult> GenerateBaseline(const FleetTable& table, const std::vector<Rule>* rules) {
  BaselineResult out;
  // A mean of finite values overflows only when their sum does: refused rather than written as
  // "inf", which no JSON reader (SuperBench's included) takes back.
  const auto finite = [&](size_t col, double b) {
    if (std::isfinite(b)) return Status::Ok();
    return Status::InvalidArgument(
        fmt::format("metric {}: its mean is {} (the values overflow a double when summed)",
                    Quote(table.metrics()[col]), b));
  };
  const auto mean_of = [&](size_t col, const std::vector<bool>* keep) {
    double sum = 0;
    size_t count = 0;
    for (size_t i = 0; i < table.node_count(); ++i) {
      const double v = table.at(i, col);
      if (std::isnan(v) || (keep != nullptr && !(*keep)[i])) continue;
      sum += v;
      ++count;
    }
    return count == 0 ? kNaN : sum / static_cast<double>(count);
  };
  if (rules == nullptr) {
    for (size_t c = 0; c < table.metric_count(); ++c) {
      const double m = mean_of(c, nullptr);
      if (std::isnan(m)) continue;  // no node has a value
      VIGIL_RETURN_IF_ERROR(finite(c, m));
      out.baseline[table.metrics()[c]] = m;
    }
    return out;
  }
  // Each variance and value rule's metrics, selected as Diagnose selects them.
  const ColumnsByBenchmark by_benchmark = ByBenchmark(table);
  std::vector<std::unique_ptr<RE2>> regexes;
  for (const Rule& rule : *rules) {
    if (rule.function != RuleFunction::kVariance && rule.function != RuleFunction::kValue) continue;
    Result<std::vector<size_t>> cols = Select(rule, table, by_benchmark, regexes);
    if (!cols.ok()) {
      return Status::InvalidArgument(
          fmt::format("rule {}: {}", Quote(rule.name), cols.status().message()));
    }
    for (size_t col : *cols) {
      std::vector<bool> keep(table.node_count(), true);
      int dropped = 0;
      double b = kNaN;
      for (bool clean = false; !clean;) {
        clean = true;
        b = mean_of(col, &keep);
        if (std::isnan(b) || b == 0) break;
        for (size_t i = 0; i < table.node_count(); ++i) {
          const double v = table.at(i, col);
          if (!keep[i] || std::isnan(v)) continue;
          const double x = rule.function == RuleFunction::kVariance ? (v - b) / b : v;
          if ((*rule.criteria)(x).truthy()) {
            keep[i] = false;
            ++dropped;
            clean = false;
          }
        }
      }
      if (std::isnan(b)) continue;
      VIGIL_RETURN_IF_ERROR(finite(col, b));
      out.baseline[table.metrics()[col]] = b;
      out.dropped[table.metrics()[col]] = dropped;
    }
  }
  return out;
}

std::string FormatBaseline(const Baseline& baseline, int digits) {
  std::string out = "{";
  bool first = true;
  for (const auto& [metric, v] : baseline) {
    out += first ? "\n" : ",\n";
    first = false;
    std::string number;
    if (v == std::trunc(v) && std::fabs(v) < 1e15) {
      number = fmt::format("{}", static_cast<int64_t>(v));
    } else if (std::fabs(v) < 1) {
      number = fmt::format("{:.{}g}", v, digits);
    } else {
      number = fmt::format("{:.{}f}", v, digits);
    }
    out += fmt::format("  {}: {}", DumpJson(Json(metric)), number);
  }
  out += first ? "}\n" : "\n}\n";
  return out;
}

}  // namespace vigil::superbench
