#include "vigil/learned/judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "vigil/core/parallel.h"
#include "vigil/core/text.h"
#include "vigil/learned/health.h"
#include "vigil/learned/measures.h"

namespace vigil::learned {
namespace {

constexpr size_t kNodesPerThread = 64;  // below that a second thread does not pay

// A finding's severity from its deviation from the fleet's centre (docs/validate.md, "Findings"):
// critical at half the value off or more, major at a tenth.
constexpr double kCriticalDeviation = 0.5;
constexpr double kMajorDeviation = 0.1;

Severity SeverityOf(double deviation) {
  const double a = std::fabs(deviation);
  if (a >= kCriticalDeviation) return Severity::kCritical;
  if (a >= kMajorDeviation) return Severity::kMajor;
  return Severity::kMinor;
}

}  // namespace

namespace {

constexpr std::pair<FindingTest, std::string_view> kFindingTests[] = {
    {FindingTest::kFleet, "fleet"},         {FindingTest::kBalance, "balance"},
    {FindingTest::kComponent, "component"}, {FindingTest::kReturnCode, "return_code"},
    {FindingTest::kMissing, "missing"},     {FindingTest::kClass, "class"},
    {FindingTest::kHealth, "health"}};

}  // namespace

std::string_view FindingTestName(FindingTest test) {
  for (const auto& [t, name] : kFindingTests) {
    if (t == test) return name;
  }
  return "fleet";  // not reached: every enumerator is in kFindingTests
}

Result<FindingTest> ParseFindingTest(std::string_view text) {
  for (const auto& [t, name] : kFindingTests) {
    if (name == text) return t;
  }
  return Status::InvalidArgument(fmt::format(
      "expected fleet, balance, component, return_code, missing, class or health, got {}",
      Quote(text)));
}

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kMinor:
      return "minor";
    case Severity::kMajor:
      return "major";
    case Severity::kCritical:
      return "critical";
  }
  return "minor";
}

namespace {

// One class's models, by family id and by benchmark.
struct ClassIndex {
  const ClassModel* model = nullptr;
  std::vector<const FamilyModel*> families;
  std::vector<double> divisor;  // by column: its member's factor, 1 where none (Scaled)
  // By pool (part, benchmark): its models, by Pooling (null where none was learned).
  std::map<std::pair<std::string_view, std::string_view>, std::array<const ComponentModel*, 3>>
      components;
};

// What judging node i against one class reads, made once per node: its values divided by their
// members' factors, its centres over them, and how much its own noise widens its limits.
struct NodeView {
  NodeView(const FleetTable& table, size_t node, const Columns& columns, const ClassIndex& index)
      : t(table), i(node), cols(columns), ix(index) {
    std::vector<double> scratch;
    centres = NodeCentresOf(v, i, cols, scratch);
    widen = NodeNoise(v, i, cols, ix.families, centres);
  }

  const FleetTable& t;
  const size_t i;
  const Columns& cols;
  const ClassIndex& ix;
  const Scaled v{t, ix.divisor};
  NodeCentres centres;
  double widen = 1;  // NodeNoise
};

// Families judged by the fleet's distribution, and those of them with a value off its mode either
// way (a node of another class may be better as well as worse): how a stranger is told.
struct Strangeness {
  size_t judged = 0, strange = 0;
};

// The findings of each value the node reports: a return code not 0, or a value beyond its
// family's healthy range over the fleet or out of balance with the node's other parts.
Strangeness JudgeValues(const NodeView& n, std::vector<Finding>& out) {
  Strangeness s;
  const std::vector<const FamilyModel*>& models = n.ix.families;
  for (size_t fid = 0; fid < n.cols.families.size(); ++fid) {
    // Nothing learned, nothing to judge by (records are never judged; criteria written by hand
    // may give them no mode).
    if (models[fid] == nullptr || models[fid]->modes.empty()) continue;
    const FamilyModel& f = *models[fid];
    const Mode& mode = NearestMode(f, n.centres.level[fid]);
    bool off = false;
    for (size_t j : n.cols.family_cols[fid]) {
      const double x = n.v.at(n.i, j), factor = n.ix.divisor[j];
      if (std::isnan(x)) continue;  // judged by MissingFindings, from the expected members
      Finding fd;
      fd.component = ParseComponent(n.cols.anatomy[j].component);
      fd.metric = n.t.metrics()[j];
      fd.value = n.t.at(n.i, j);
      if (!IsLearned(f.direction)) {  // a return code; health readings are HealthRules'
        if (x == 0 || f.direction != Direction::kZero) continue;
        fd.test = FindingTest::kReturnCode;
        fd.sigmas = kInf;
        fd.severity = Severity::kCritical;
        out.push_back(std::move(fd));
        continue;
      }
      const double z_fleet = WorseSigmas(f.direction, x, mode.centre, mode.spread) / n.widen;
      // A node with too few of the family's parts to balance is judged by the fleet alone.
      const double z_balance = BalanceSigmas(x, f, n.centres, fid) / n.widen;
      const bool fleet = z_fleet > f.limit, balance = z_balance > f.balance_limit;  // NaN: false
      off |= std::fabs(x - mode.centre) / mode.spread / n.widen > f.limit;
      if (!fleet && !balance) continue;
      fd.test = fleet ? FindingTest::kFleet : FindingTest::kBalance;
      fd.sigmas = fleet ? z_fleet : z_balance;
      const bool low = f.direction == Direction::kHigher || f.direction == Direction::kEither;
      const bool high = f.direction == Direction::kLower || f.direction == Direction::kEither;
      fd.expected_low = low ? (mode.centre - f.limit * mode.spread) * factor : -kInf;
      fd.expected_high = high ? (mode.centre + f.limit * mode.spread) * factor : kInf;
      fd.deviation = mode.centre != 0 ? x / mode.centre - 1 : 0;
      fd.severity = SeverityOf(fd.deviation);
      out.push_back(std::move(fd));
    }
    if (IsLearned(f.direction)) {
      ++s.judged;
      s.strange += off;
    }
  }
  return s;
}

// Expected components that reported nothing, whether or not the table has their column; those
// of a benchmark that is down are its return code's finding instead.
void MissingFindings(const NodeView& n, const std::set<std::string>& down,
                     std::vector<Finding>& out) {
  for (const FamilyModel& f : n.ix.model->families) {
    if (f.direction == Direction::kInfo) continue;  // never judged, even when absent
    if (down.contains(BenchmarkOfKey(f.family)) && f.direction != Direction::kZero) continue;
    for (size_t m = 0; m < f.members.size(); ++m) {
      const std::string& key = f.members[m];
      const long j = n.t.column(key);
      if (j >= 0 && !std::isnan(n.t.at(n.i, static_cast<size_t>(j)))) continue;
      const double centre = f.modes.empty()
                                ? std::nan("")
                                : f.modes.front().centre * (f.factors.empty() ? 1.0 : f.factors[m]);
      out.push_back(Finding{ParseComponent(Anatomize(key).component), key, FindingTest::kMissing,
                            std::nan(""), centre, centre, -1, kInf, Severity::kCritical});
    }
  }
}

// How many sigmas, on average, a component's metrics other than its worst must lie the worse way
// for the plain mean to name it where its worst metric alone would (PlainMean).
constexpr double kOthersAgree = 1;

// The plain mean of component d's metrics as the model `cv` (Pooling::kMean) judges it: where its
// worst metric, within the limit of the test of single values (ComponentDistance::worst_limit),
// would alone carry the mean past cv's limit, that metric counts for no more than leaves the mean
// at its limit unless the others lie kOthersAgree sigmas the worse way on average. So one metric
// that its own test calls healthy never names the component, and the mean still rises with each
// of its metrics (a component that gets worse is never named less).
double PlainMean(const ComponentDistance& d, const ComponentModel& cv) {
  if (cv.pooling != Pooling::kMean) return d.mean;
  const auto m = static_cast<double>(d.metrics);
  const double cap = m * (cv.centre + cv.limit * cv.spread) - (m - 1) * kOthersAgree;
  if (!(d.worst <= d.worst_limit) || !(d.worst > cap)) return d.mean;
  return d.mean - (d.worst - cap) / m;
}

// Components whose metrics in one pool lie together beyond healthy (ComponentModel), in the pools
// whose benchmarks all ran.
void ComponentFindings(const NodeView& n, const std::set<std::string>& down,
                       std::vector<Finding>& out) {
  for (const Pool& pool : n.cols.pools) {
    auto it = n.ix.components.find({pool.part, pool.benchmark});
    if (it == n.ix.components.end() || AnyDown(pool, down)) continue;
    const auto& [many, mean, but_worst] = it->second;
    for (const auto& [component, d] :
         ComponentDistances(n.v, n.i, pool.cols, n.cols, n.ix.families, n.centres, n.widen)) {
      // The way that lies further beyond its limit, of those that apply.
      const ComponentModel* worst = nullptr;
      double value = 0, z = 0;
      const bool few = d.metrics <= kFewMetrics;
      for (const ComponentModel* cv : {few ? mean : many, few ? but_worst : nullptr}) {
        if (cv == nullptr) continue;
        const double distance = cv->pooling == Pooling::kButWorst ? d.but_worst : PlainMean(d, *cv);
        const double zv = (distance - cv->centre) / cv->spread;
        if (zv > cv->limit && (worst == nullptr || zv / cv->limit > z / worst->limit)) {
          worst = cv;
          value = distance;
          z = zv;
        }
      }
      if (worst == nullptr) continue;
      // fmt, not ":" + string: gcc 12's -Wrestrict misreads that at -O3 (bug 105329).
      const bool indexed = !d.index.empty() && pool.part.empty();
      const std::string key = indexed ? fmt::format("{}/*:{}", pool.benchmark, d.index)
                                      : fmt::format("{}/*", pool.benchmark);
      out.push_back(Finding{ParseComponent(component), key, FindingTest::kComponent, value, -kInf,
                            worst->centre + worst->limit * worst->spread, 0, z, Severity::kMinor});
    }
  }
}

// A node whose values leave the modes of more than this share of its families (and at least
// kMinClassFamilies) belongs to no class learned: one finding says so, not one per value.
constexpr double kStrangerShare = 0.5;
constexpr size_t kMinClassFamilies = 3;

// When the node is a stranger to the class (Strangeness), its findings of the fleet's tests are
// replaced by one "class" finding.
void JudgeStranger(const Strangeness& s, std::vector<Finding>& findings) {
  if (s.judged < kMinClassFamilies ||
      !(static_cast<double>(s.strange) > kStrangerShare * static_cast<double>(s.judged))) {
    return;
  }
  std::erase_if(findings, [](const Finding& f) {
    return f.test == FindingTest::kFleet || f.test == FindingTest::kBalance ||
           f.test == FindingTest::kComponent;
  });
  findings.push_back(Finding{ComponentId{"node", std::nullopt},
                             fmt::format("{} of {} families", s.strange, s.judged),
                             FindingTest::kClass, static_cast<double>(s.strange) / s.judged, 0, 0,
                             0, kInf, Severity::kCritical});
}

// Judges node i against one class's models.
NodeFindings JudgeByClass(const FleetTable& t, size_t i, const Columns& cols,
                          const ClassIndex& ix) {
  const NodeView n(t, i, cols, ix);
  const std::set<std::string> down = DownBenchmarks(n.t, n.i, n.cols, *n.ix.model);
  NodeFindings nf;
  const Strangeness strangeness = JudgeValues(n, nf.findings);
  MissingFindings(n, down, nf.findings);
  ComponentFindings(n, down, nf.findings);
  JudgeStranger(strangeness, nf.findings);
  nf.defective = !nf.findings.empty();
  return nf;
}

}  // namespace

Json FindingToJson(const Finding& f) {
  const auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return Json{{"component", ComponentName(f.component)}, {"metric", f.metric},
              {"test", FindingTestName(f.test)},         {"value", number(f.value)},
              {"expected_low", number(f.expected_low)},  {"expected_high", number(f.expected_high)},
              {"deviation", number(f.deviation)},        {"sigmas", number(f.sigmas)},
              {"severity", SeverityName(f.severity)}};
}

struct Judgement::Prepared {
  Prepared(const std::vector<std::string>& metrics, const LearnedCriteria& c)
      : criteria(c), cols(metrics), health(cols.anatomy) {
    std::unordered_map<std::string_view, size_t> column;
    for (size_t j = 0; j < metrics.size(); ++j) column.emplace(metrics[j], j);
    for (const ClassModel& cm : c.classes) {
      auto [slot, fresh] = classes.try_emplace(cm.hardware);
      if (!fresh) continue;  // a class listed twice: the first judges, as ClassFor says
      ClassIndex& ix = slot->second;
      ix.model = &cm;
      ix.families = ModelsById(cols, cm);
      ix.divisor.assign(metrics.size(), 1.0);
      for (const FamilyModel& f : cm.families) {
        for (size_t m = 0; m < f.factors.size(); ++m) {
          if (auto it = column.find(f.members[m]); it != column.end()) {
            ix.divisor[it->second] = f.factors[m];
          }
        }
      }
      for (const ComponentModel& cv : cm.components) {
        ix.components[{cv.part, cv.benchmark}][static_cast<size_t>(cv.pooling)] = &cv;
      }
    }
  }

  const LearnedCriteria& criteria;
  const Columns cols;
  const HealthRules health;
  std::map<std::string, ClassIndex, std::less<>> classes;  // every class's models, indexed
};

Judgement::Judgement(const std::vector<std::string>& metrics, const LearnedCriteria& criteria)
    : prepared_(std::make_unique<const Prepared>(metrics, criteria)) {}

Judgement::~Judgement() = default;

std::vector<NodeFindings> Judgement::Judge(const FleetTable& t, int threads) const {
  const Prepared& p = *prepared_;
  std::vector<NodeFindings> out(t.node_count());
  const size_t n = t.node_count();
  const size_t workers = WorkerCount(n, kNodesPerThread, threads);
  RunWorkers(workers, [&](size_t w) {
    const auto [begin, end] = ShareOf(n, w, workers);
    for (size_t i = begin; i < end; ++i) {
      const ClassModel* cm = ClassFor(p.criteria, t.hardware(i));
      if (cm == nullptr) {
        out[i].findings.push_back(Finding{ComponentId{"node", std::nullopt}, t.hardware(i),
                                          FindingTest::kClass, 0, 0, 0, 0, 0, Severity::kCritical});
      } else {
        out[i] = JudgeByClass(t, i, p.cols, p.classes.find(cm->hardware)->second);
      }
      for (Finding& f : p.health.Findings(t, i)) out[i].findings.push_back(std::move(f));
      out[i].defective = !out[i].findings.empty();
    }
  });
  return out;
}

std::vector<NodeFindings> Judge(const FleetTable& t, const LearnedCriteria& c, int threads) {
  return Judgement(t.metrics(), c).Judge(t, threads);
}

NodeJudgement JudgeNode(const FleetTable& node, const Judgement* criteria) {
  NodeJudgement out;
  // One thread: a node alone, and the server already judges one request per thread.
  out.findings = criteria != nullptr ? criteria->Judge(node, 1)[0] : JudgeHealth(node);
  if (out.findings.defective) {
    out.verdict = Verdict::kDefective;
  } else {
    out.verdict = criteria != nullptr ? Verdict::kHealthy : Verdict::kUnjudged;
  }
  return out;
}

NodeJudgement JudgeNode(const FleetTable& node, const LearnedCriteria* criteria) {
  if (criteria == nullptr) return JudgeNode(node, static_cast<const Judgement*>(nullptr));
  const Judgement prepared(node.metrics(), *criteria);
  return JudgeNode(node, &prepared);
}

}  // namespace vigil::learned
