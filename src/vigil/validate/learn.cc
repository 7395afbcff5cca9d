#include "vigil/validate/learn.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "vigil/core/bounds.h"
#include "vigil/core/parallel.h"
#include "vigil/core/stats.h"
#include "vigil/core/text.h"
#include "vigil/validate/health.h"

namespace vigil::validate {
namespace {

using stats::kMadToSigma;
using stats::Mad;
using stats::Median;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kMinNoiseSamples = 16;  // values needed to estimate one node's own noise
constexpr size_t kNodesPerThread = 64;   // below that a second thread does not pay

// How far beyond the centre a value lies in the worse direction, in spreads.
double WorseSigmas(Direction d, double v, double centre, double spread) {
  switch (d) {
    case Direction::kHigher:
      return (centre - v) / spread;
    case Direction::kLower:
      return (v - centre) / spread;
    case Direction::kEither:
      return std::fabs(v - centre) / spread;
    case Direction::kZero:
    case Direction::kClear:
      return v != 0 ? kInf : 0;
    case Direction::kInfo:
      return 0;
  }
  return 0;
}

struct Robust {
  double centre = 0, spread = 0;
};

Robust RobustOf(std::vector<double>& xs, double floor) {
  Robust r;
  if (xs.empty()) return r;
  r.centre = Median(xs);
  r.spread = std::max(Mad(xs) * kMadToSigma, floor);
  if (!(r.spread > 0)) r.spread = std::numeric_limits<double>::min();
  return r;
}

// The table's columns, parsed once and grouped: by family (one population) and by benchmark
// (the metrics the fleet's distribution judges only), with small integer ids so that the per-node
// loops do no string work.
struct Columns {
  std::vector<MetricAnatomy> anatomy;
  std::vector<int> family_of;                    // column -> family id
  std::vector<std::string> families;             // family id -> name
  std::vector<std::vector<size_t>> family_cols;  // family id -> columns
  std::map<std::string, std::vector<size_t>> benchmark_cols;

  explicit Columns(const std::vector<std::string>& metrics) {
    std::unordered_map<std::string, int> ids;
    for (size_t j = 0; j < metrics.size(); ++j) {
      anatomy.push_back(Anatomize(metrics[j]));
      const MetricAnatomy& a = anatomy.back();
      auto [it, added] = ids.try_emplace(a.family, static_cast<int>(families.size()));
      if (added) {
        families.push_back(a.family);
        family_cols.emplace_back();
      }
      family_of.push_back(it->second);
      family_cols[static_cast<size_t>(it->second)].push_back(j);
      if (IsLearned(a.direction)) benchmark_cols[BenchmarkOfKey(a.family)].push_back(j);
    }
  }
};

// The median of node i's values in `cols`; NaN with fewer than two.
double NodeMedian(const FleetTable& t, size_t i, const std::vector<size_t>& cols,
                  std::vector<double>& scratch) {
  scratch.clear();
  for (size_t j : cols) {
    if (!std::isnan(t.at(i, j))) scratch.push_back(t.at(i, j));
  }
  return scratch.size() < 2 ? std::nan("") : Median(scratch);
}

// Node i's median of every family that can be balanced (two or more columns the fleet's
// distribution judges), NaN elsewhere, by family id: the reference of the balance inside the node.
std::vector<double> NodeMedians(const FleetTable& t, size_t i, const Columns& c,
                                std::vector<double>& scratch) {
  std::vector<double> m(c.families.size(), std::nan(""));
  for (size_t f = 0; f < c.families.size(); ++f) {
    const std::vector<size_t>& cols = c.family_cols[f];
    if (cols.size() >= 2 && IsLearned(c.anatomy[cols[0]].direction)) {
      m[f] = NodeMedian(t, i, cols, scratch);
    }
  }
  return m;
}

// How far node i's value in column j lies beyond healthy, in robust sigmas: from the node's
// balance where the family has one (it leaves the node's own offset out), else from the fleet.
double ComponentSigmas(const FleetTable& t, size_t i, size_t j, const FamilyModel& f,
                       double node_median) {
  const double v = t.at(i, j);
  if (f.balanced && !std::isnan(node_median) && node_median != 0) {
    return WorseSigmas(f.direction, v / node_median - 1, f.balance_centre, f.balance_spread);
  }
  return WorseSigmas(f.direction, v, f.centre, f.spread);
}

// For each component of node i: the sum and count of its metrics' sigmas within one benchmark
// (index -> {sum, count}). Over a sweep this is the distance of the component's curve from the
// fleet's.
std::map<std::string_view, std::pair<double, int>> ComponentDistances(
    const FleetTable& t, size_t i, const std::vector<size_t>& cols, const Columns& c,
    const std::vector<const FamilyModel*>& models, const std::vector<double>& medians) {
  std::map<std::string_view, std::pair<double, int>> d;
  for (size_t j : cols) {
    const auto f = static_cast<size_t>(c.family_of[j]);
    if (std::isnan(t.at(i, j)) || models[f] == nullptr) continue;
    auto& [sum, n] = d[c.anatomy[j].index];
    sum += ComponentSigmas(t, i, j, *models[f], medians[f]);
    ++n;
  }
  return d;
}

// Family models by family id, for one class (null where the class learned none).
std::vector<const FamilyModel*> ModelsById(const Columns& c, const ClassModel& cm) {
  std::unordered_map<std::string_view, const FamilyModel*> by_name;
  for (const FamilyModel& f : cm.families) by_name[f.family] = &f;
  std::vector<const FamilyModel*> out(c.families.size(), nullptr);
  for (size_t f = 0; f < c.families.size(); ++f) {
    auto it = by_name.find(c.families[f]);
    if (it != by_name.end()) out[f] = it->second;
  }
  return out;
}

Severity SeverityOf(double deviation) {
  const double a = std::fabs(deviation);
  if (a >= 0.5) return Severity::kCritical;
  if (a >= 0.1) return Severity::kMajor;
  return Severity::kMinor;
}

}  // namespace

std::vector<std::pair<std::string, std::vector<size_t>>> NodesByHardware(const FleetTable& t) {
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < t.node_count(); ++i) {
    auto [it, added] = at.try_emplace(t.hardware(i), out.size());
    if (added) out.push_back({t.hardware(i), {}});
    out[it->second].second.push_back(i);
  }
  return out;
}

Result<LearnedCriteria> Learn(const FleetTable& t, const LearnOptions& o,
                              std::vector<LeftOutClass>* left_out) {
  const size_t left_before = left_out != nullptr ? left_out->size() : 0;
  LearnedCriteria out;
  out.threshold = o.threshold;
  out.resolution = o.resolution;
  const Columns cols(t.metrics());
  std::vector<double> xs, scratch;
  for (const auto& [hardware, nodes] : NodesByHardware(t)) {
    if (nodes.size() < o.min_nodes) {
      std::string reason = fmt::format("{} node{}, fewer than the {} needed to learn from",
                                       nodes.size(), nodes.size() == 1 ? "" : "s", o.min_nodes);
      if (left_out == nullptr) {
        return Status::InvalidArgument(
            fmt::format("hardware class {} has {}", Quote(hardware), reason));
      }
      LeftOutClass& l = left_out->emplace_back();
      l.hardware = hardware;
      for (size_t i : nodes) l.nodes.push_back(t.node(i));
      l.reason = std::move(reason);
      continue;
    }
    ClassModel cm;
    cm.hardware = hardware;
    cm.nodes = nodes.size();
    std::vector<std::vector<double>> medians;  // by position in `nodes`, then family id
    for (size_t i : nodes) medians.push_back(NodeMedians(t, i, cols, scratch));
    for (size_t fid = 0; fid < cols.families.size(); ++fid) {
      const std::vector<size_t>& fcols = cols.family_cols[fid];
      FamilyModel f;
      f.family = cols.families[fid];
      f.direction = cols.anatomy[fcols[0]].direction;
      if (f.direction == Direction::kInfo) continue;  // never judged: nothing to learn
      xs.clear();
      for (size_t j : fcols) {
        size_t present = 0;
        for (size_t i : nodes) {
          const double v = t.at(i, j);
          if (std::isnan(v)) continue;
          xs.push_back(v);
          ++present;
        }
        if (static_cast<double>(present) >= kExpectedShare * static_cast<double>(nodes.size())) {
          f.indexes.push_back(cols.anatomy[j].index);
        }
      }
      if (xs.empty()) continue;  // this class never reports it
      f.samples = xs.size();
      Robust r = RobustOf(xs, 0);
      f.centre = r.centre;
      f.spread = std::max(r.spread, o.resolution * std::fabs(r.centre));
      if (fcols.size() >= 2 && IsLearned(f.direction)) {
        xs.clear();
        for (size_t k = 0; k < nodes.size(); ++k) {
          const size_t i = nodes[k];
          const double m = medians[k][fid];
          if (std::isnan(m) || m == 0) continue;
          for (size_t j : fcols) {
            if (!std::isnan(t.at(i, j))) xs.push_back(t.at(i, j) / m - 1);
          }
        }
        if (!xs.empty()) {
          const Robust b = RobustOf(xs, o.resolution);
          f.balanced = true;
          f.balance_centre = b.centre;
          f.balance_spread = b.spread;
        }
      }
      cm.families.push_back(std::move(f));
    }
    const std::vector<const FamilyModel*> models = ModelsById(cols, cm);
    std::vector<std::vector<double>> distances(cols.benchmark_cols.size());
    for (size_t k = 0; k < nodes.size(); ++k) {
      size_t b = 0;
      for (const auto& [benchmark, bcols] : cols.benchmark_cols) {
        for (const auto& [index, d] :
             ComponentDistances(t, nodes[k], bcols, cols, models, medians[k])) {
          if (d.second >= 2) distances[b].push_back(d.first / d.second);
        }
        ++b;
      }
    }
    size_t b = 0;
    for (const auto& [benchmark, bcols] : cols.benchmark_cols) {
      std::vector<double>& ds = distances[b++];
      if (ds.empty()) continue;
      ComponentModel c;
      c.benchmark = benchmark;
      c.samples = ds.size();
      const Robust r = RobustOf(ds, 0.05);  // a twentieth of a sigma: the resolution of a mean
      c.centre = r.centre;
      c.spread = r.spread;
      cm.components.push_back(std::move(c));
    }
    out.classes.push_back(std::move(cm));
  }
  if (out.classes.empty()) {
    if (left_out == nullptr || left_out->size() == left_before) {
      return Status::InvalidArgument("no nodes to learn from");
    }
    std::vector<std::string> classes;
    for (size_t k = left_before; k < left_out->size(); ++k) {
      classes.push_back(
          fmt::format("{} ({})", Quote((*left_out)[k].hardware), (*left_out)[k].nodes.size()));
    }
    return Status::InvalidArgument(
        fmt::format("no hardware class has the {} nodes needed to learn from: {}", o.min_nodes,
                    fmt::join(classes, ", ")));
  }
  return out;
}

Json CriteriaToJson(const LearnedCriteria& c) {
  Json classes = Json::array();
  for (const ClassModel& cm : c.classes) {
    Json families = Json::array();
    for (const FamilyModel& f : cm.families) {
      Json j = {{"family", f.family},   {"direction", DirectionName(f.direction)},
                {"centre", f.centre},   {"spread", f.spread},
                {"samples", f.samples}, {"indexes", f.indexes}};
      if (f.balanced) {
        j["balance_centre"] = f.balance_centre;
        j["balance_spread"] = f.balance_spread;
      }
      families.push_back(std::move(j));
    }
    Json components = Json::array();
    for (const ComponentModel& cv : cm.components) {
      components.push_back(Json{{"benchmark", cv.benchmark},
                                {"centre", cv.centre},
                                {"spread", cv.spread},
                                {"samples", cv.samples}});
    }
    classes.push_back(Json{{"hardware", cm.hardware},
                           {"nodes", cm.nodes},
                           {"families", std::move(families)},
                           {"components", std::move(components)}});
  }
  return Json{{"schema", kCriteriaSchema},
              {"threshold_sigmas", c.threshold},
              {"resolution", c.resolution},
              {"classes", std::move(classes)}};
}

Result<LearnedCriteria> CriteriaFromJson(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(Json j, ParseJson(text, source));
  const auto bad = [&](std::string_view what) {
    return Status::InvalidArgument(fmt::format("{}: {}", source, what));
  };
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string()) {
    return bad("not a criteria file (no \"schema\")");
  }
  if (j["schema"] != kCriteriaSchema) {
    return bad(fmt::format("criteria of schema {}; this vigil reads {} (learn them again)",
                           Quote(j["schema"].get<std::string>()), kCriteriaSchema));
  }
  // Ranges of the numbers (docs/formats.md, "Ranges"): those `vigil learn` writes, and no more.
  constexpr Bounds kThresholdBounds{.lo = 0.1, .hi = 1e6};  // as learn --threshold
  constexpr Bounds kResolutionBounds{.lo = 0, .hi = 1};
  constexpr Bounds kCountBounds{.lo = 0, .hi = 1099511627776.0};  // 2^40 nodes or samples
  constexpr Bounds kSpreadBounds{.lo = 0, .hi = kMetricValueBounds.hi, .lo_open = true};
  // A number within `bounds` (a count: also whole), the field named after `where` in errors.
  std::string where;
  const auto number = [&](const Json& obj, const char* field,
                          const Bounds& bounds) -> Result<double> {
    const Json& v = obj.at(field);  // throws when missing, as the getters below do
    if (!v.is_number()) return bad(fmt::format("{}{}: expected a number", where, field));
    const double d = v.get<double>();
    if (!bounds.Contains(d)) {
      return bad(fmt::format("{}{}: {}", where, field, DescribeOutside(d, bounds)));
    }
    return d;
  };
  const auto count = [&](const Json& obj, const char* field) -> Result<size_t> {
    VIGIL_ASSIGN_OR_RETURN(const double d, number(obj, field, kCountBounds));
    if (d != std::floor(d)) return bad(fmt::format("{}{}: expected a whole number", where, field));
    return static_cast<size_t>(d);
  };
  // nlohmann's typed getters throw on a wrong type; this reader reports it instead.
  try {
    LearnedCriteria c;
    VIGIL_ASSIGN_OR_RETURN(c.threshold, number(j, "threshold_sigmas", kThresholdBounds));
    VIGIL_ASSIGN_OR_RETURN(c.resolution, number(j, "resolution", kResolutionBounds));
    for (const Json& cj : j.at("classes")) {
      ClassModel cm;
      cm.hardware = cj.at("hardware").get<std::string>();
      where = fmt::format("class {}: ", Quote(cm.hardware));
      VIGIL_ASSIGN_OR_RETURN(cm.nodes, count(cj, "nodes"));
      for (const Json& fj : cj.at("families")) {
        FamilyModel f;
        f.family = fj.at("family").get<std::string>();
        const std::string dir = fj.at("direction").get<std::string>();
        const Direction all[] = {Direction::kHigher, Direction::kLower, Direction::kZero,
                                 Direction::kEither, Direction::kClear, Direction::kInfo};
        auto d = std::find_if(std::begin(all), std::end(all),
                              [&](Direction x) { return DirectionName(x) == dir; });
        if (d == std::end(all)) return bad(fmt::format("family {}: bad direction", f.family));
        f.direction = *d;
        where = fmt::format("family {}: ", f.family);
        VIGIL_ASSIGN_OR_RETURN(f.centre, number(fj, "centre", kMetricValueBounds));
        VIGIL_ASSIGN_OR_RETURN(f.spread, number(fj, "spread", kSpreadBounds));
        VIGIL_ASSIGN_OR_RETURN(f.samples, count(fj, "samples"));
        f.indexes = fj.at("indexes").get<std::vector<std::string>>();
        if (fj.contains("balance_centre")) {
          f.balanced = true;
          VIGIL_ASSIGN_OR_RETURN(f.balance_centre,
                                 number(fj, "balance_centre", kMetricValueBounds));
          VIGIL_ASSIGN_OR_RETURN(f.balance_spread, number(fj, "balance_spread", kSpreadBounds));
        }
        cm.families.push_back(std::move(f));
      }
      for (const Json& vj : cj.at("components")) {
        ComponentModel cv;
        cv.benchmark = vj.at("benchmark").get<std::string>();
        where = fmt::format("component model {}: ", cv.benchmark);
        VIGIL_ASSIGN_OR_RETURN(cv.centre, number(vj, "centre", kMetricValueBounds));
        VIGIL_ASSIGN_OR_RETURN(cv.spread, number(vj, "spread", kSpreadBounds));
        VIGIL_ASSIGN_OR_RETURN(cv.samples, count(vj, "samples"));
        cm.components.push_back(std::move(cv));
      }
      c.classes.push_back(std::move(cm));
    }
    if (c.classes.empty()) return bad("no hardware classes");
    return c;
  } catch (const Json::exception& e) {
    return bad(fmt::format("malformed criteria: {}", e.what()));
  }
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

// A single metric a little beyond the threshold, alone among its component's metrics in one
// benchmark (the other GEMM types of the GPU, the other direction of the PCIe link) and without
// the component's mean deviating, is more likely a noisy measurement than a damaged part: with
// hundreds of thousands of values a fleet, a few such lone outliers appear on healthy nodes. A
// part that is really slow moves its other metrics too, or moves this one far (beyond k + 2).
void DropLoneOutliers(const FleetTable& t, size_t i, const Columns& cols, double k,
                      std::vector<Finding>& findings) {
  using Group = std::pair<std::string, std::string>;  // (benchmark, component)
  std::map<Group, int> per_group;
  std::set<Group> corroborated;
  for (const Finding& f : findings) {
    const Group g = {BenchmarkOfKey(f.metric), f.component};
    if (f.test == "fleet" || f.test == "balance") ++per_group[g];
    if (f.test == "component") corroborated.insert(g);
  }
  // How many metrics the node has for a group: counted only for the few findings in question.
  const auto metrics = [&](const Group& g) {
    auto it = cols.benchmark_cols.find(g.first);
    if (it == cols.benchmark_cols.end()) return 0;
    int n = 0;
    for (size_t j : it->second)
      n += !std::isnan(t.at(i, j)) && cols.anatomy[j].component == g.second;
    return n;
  };
  std::erase_if(findings, [&](const Finding& f) {
    if ((f.test != "fleet" && f.test != "balance") || f.sigmas >= k + 2) return false;
    const Group g = {BenchmarkOfKey(f.metric), f.component};
    return per_group[g] == 1 && !corroborated.contains(g) && metrics(g) >= 2;
  });
}

// One class's models, by family id and by benchmark.
struct ClassIndex {
  const ClassModel* model = nullptr;
  std::vector<const FamilyModel*> families;
  std::map<std::string_view, const ComponentModel*> components;
};

// Judges node i against one class's models.
NodeFindings JudgeNode(const FleetTable& t, size_t i, const Columns& cols, const ClassIndex& ix,
                       double k) {
  const ClassModel& cm = *ix.model;
  const std::vector<const FamilyModel*>& models = ix.families;
  const std::map<std::string_view, const ComponentModel*>& components = ix.components;
  NodeFindings nf;
  std::vector<double> scratch;
  const std::vector<double> medians = NodeMedians(t, i, cols, scratch);
  // Benchmarks that failed or did not run: one finding each, from their return code, not one
  // per metric they did not produce.
  std::set<std::string> down;
  for (const FamilyModel& f : cm.families) {
    if (f.direction != Direction::kZero) continue;
    const long j = t.column(f.family);
    if (j < 0 || std::isnan(t.at(i, static_cast<size_t>(j))) ||
        t.at(i, static_cast<size_t>(j)) != 0) {
      down.insert(BenchmarkOfKey(f.family));
    }
  }
  // The node's own noise: the robust spread of its balance deviations, pooled over all its
  // families. A node that is noisy everywhere (healthy, but jittery) gets its thresholds widened
  // by that factor; one bad component among many does not move it.
  std::vector<double> own;
  for (size_t f = 0; f < cols.families.size(); ++f) {
    const FamilyModel* m = models[f];
    if (m == nullptr || !m->balanced || std::isnan(medians[f]) || medians[f] == 0) continue;
    for (size_t j : cols.family_cols[f]) {
      const double v = t.at(i, j);
      if (!std::isnan(v))
        own.push_back((v / medians[f] - 1 - m->balance_centre) / m->balance_spread);
    }
  }
  const double widen = own.size() >= kMinNoiseSamples ? std::max(1.0, Mad(own) * kMadToSigma) : 1.0;

  for (size_t fid = 0; fid < cols.families.size(); ++fid) {
    if (models[fid] == nullptr) continue;  // nothing learned: nothing to judge by
    const FamilyModel& f = *models[fid];
    for (size_t j : cols.family_cols[fid]) {
      const double v = t.at(i, j);
      if (std::isnan(v)) continue;  // judged below, from the expected indexes
      Finding fd;
      fd.component = cols.anatomy[j].component;
      fd.metric = t.metrics()[j];
      fd.value = v;
      if (!IsLearned(f.direction)) {  // a return code; health readings are HealthRules'
        if (v == 0 || f.direction != Direction::kZero) continue;
        fd.test = "return_code";
        fd.sigmas = kInf;
        fd.severity = Severity::kCritical;
        nf.findings.push_back(std::move(fd));
        continue;
      }
      const double z_fleet = WorseSigmas(f.direction, v, f.centre, f.spread) / widen;
      const double z_balance = f.balanced ? ComponentSigmas(t, i, j, f, medians[fid]) / widen : 0.0;
      if (z_fleet <= k && z_balance <= k) continue;
      fd.test = z_fleet > k ? "fleet" : "balance";
      fd.sigmas = std::max(z_fleet, z_balance);
      const bool low = f.direction == Direction::kHigher || f.direction == Direction::kEither;
      const bool high = f.direction == Direction::kLower || f.direction == Direction::kEither;
      fd.expected_low = low ? f.centre - k * f.spread : -kInf;
      fd.expected_high = high ? f.centre + k * f.spread : kInf;
      fd.deviation = f.centre != 0 ? v / f.centre - 1 : 0;
      fd.severity = SeverityOf(fd.deviation);
      nf.findings.push_back(std::move(fd));
    }
  }
  // Expected components that reported nothing, whether or not the table has their column.
  for (const FamilyModel& f : cm.families) {
    if (f.direction == Direction::kInfo) continue;  // never judged, even when absent
    if (down.contains(BenchmarkOfKey(f.family)) && f.direction != Direction::kZero) continue;
    for (const std::string& idx : f.indexes) {
      const std::string key = idx.empty() ? f.family : f.family + ":" + idx;
      const long j = t.column(key);
      if (j >= 0 && !std::isnan(t.at(i, static_cast<size_t>(j)))) continue;
      nf.findings.push_back(Finding{Anatomize(key).component, key, "missing", std::nan(""),
                                    f.centre, f.centre, -1, kInf, Severity::kCritical});
    }
  }
  for (const auto& [benchmark, bcols] : cols.benchmark_cols) {
    auto it = components.find(benchmark);
    if (it == components.end() || down.contains(benchmark)) continue;
    const ComponentModel& cv = *it->second;
    for (const auto& [idx, d] : ComponentDistances(t, i, bcols, cols, models, medians)) {
      if (d.second < 2) continue;
      const double dist = d.first / d.second;
      const double z = (dist / widen - cv.centre) / cv.spread;
      if (z <= k) continue;
      const std::string key = benchmark + "/*" + (idx.empty() ? "" : ":" + std::string(idx));
      nf.findings.push_back(Finding{Anatomize(key).component, key, "component", dist, -kInf,
                                    cv.centre + k * cv.spread, 0, z, Severity::kMinor});
    }
  }
  DropLoneOutliers(t, i, cols, k, nf.findings);
  nf.defective = !nf.findings.empty();
  return nf;
}

}  // namespace

LearnedCriteria RestrictToBenchmarks(LearnedCriteria c,
                                     const std::vector<std::string>& benchmarks) {
  const auto kept = [&](std::string_view benchmark) {
    return std::find(benchmarks.begin(), benchmarks.end(), benchmark) != benchmarks.end();
  };
  for (ClassModel& cm : c.classes) {
    std::erase_if(cm.families,
                  [&](const FamilyModel& f) { return !kept(BenchmarkOfKey(f.family)); });
    std::erase_if(cm.components, [&](const ComponentModel& m) { return !kept(m.benchmark); });
  }
  return c;
}

Json FindingToJson(const Finding& f) {
  const auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  return Json{{"component", f.component},
              {"metric", f.metric},
              {"test", f.test},
              {"value", number(f.value)},
              {"expected_low", number(f.expected_low)},
              {"expected_high", number(f.expected_high)},
              {"deviation", number(f.deviation)},
              {"sigmas", number(f.sigmas)},
              {"severity", SeverityName(f.severity)}};
}

const ClassModel* ClassFor(const LearnedCriteria& c, std::string_view hardware) {
  for (const ClassModel& cm : c.classes) {
    if (cm.hardware == hardware) return &cm;
  }
  return c.classes.size() == 1 ? &c.classes.front() : nullptr;
}

struct Judgement::Prepared {
  Prepared(const std::vector<std::string>& metrics, const LearnedCriteria& c)
      : criteria(c), cols(metrics), health(cols.anatomy) {
    for (const ClassModel& cm : c.classes) {
      auto [slot, fresh] = classes.try_emplace(cm.hardware);
      if (!fresh) continue;  // a class listed twice: the first judges, as ClassFor says
      ClassIndex& ix = slot->second;
      ix.model = &cm;
      ix.families = ModelsById(cols, cm);
      for (const ComponentModel& cv : cm.components) ix.components[cv.benchmark] = &cv;
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
        out[i].findings.push_back(
            Finding{"node", t.hardware(i), "class", 0, 0, 0, 0, 0, Severity::kCritical});
      } else {
        out[i] =
            JudgeNode(t, i, p.cols, p.classes.find(cm->hardware)->second, p.criteria.threshold);
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

}  // namespace vigil::validate
