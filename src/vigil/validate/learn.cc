#include "vigil/validate/learn.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "vigil/core/stats.h"
#include "vigil/core/text.h"

namespace vigil::validate {
namespace {

using stats::kMadToSigma;
using stats::Mad;
using stats::Median;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPresence = 0.9;  // an index is expected when this share of nodes reports it
constexpr size_t kMinNoiseSamples = 16;  // values needed to estimate one node's own noise

// The table's columns, parsed once.
struct Columns {
  std::vector<MetricAnatomy> anatomy;
  explicit Columns(const FleetTable& t) {
    for (const std::string& key : t.metrics()) anatomy.push_back(Anatomize(key));
  }
};

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
      return v != 0 ? kInf : 0;
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

// Nodes grouped by hardware class, in first-appearance order.
std::vector<std::pair<std::string, std::vector<size_t>>> Classes(const FleetTable& t) {
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < t.node_count(); ++i) {
    auto [it, added] = at.try_emplace(t.hardware(i), out.size());
    if (added) out.push_back({t.hardware(i), {}});
    out[it->second].second.push_back(i);
  }
  return out;
}

// "gpt_models/pytorch-gpt2-large/return_code" -> "gpt_models/pytorch-gpt2-large".
std::string BenchmarkOfKey(std::string_view key) {
  return std::string(key.substr(0, key.rfind('/')));
}

// Column indices by family, and by benchmark (return codes aside), for one table.
struct Groups {
  std::map<std::string, std::vector<size_t>> family_columns;
  std::map<std::string, std::vector<size_t>> benchmark_columns;
  explicit Groups(const Columns& c) {
    for (size_t j = 0; j < c.anatomy.size(); ++j) {
      family_columns[c.anatomy[j].family].push_back(j);
      if (c.anatomy[j].direction != Direction::kZero) {
        benchmark_columns[BenchmarkOfKey(c.anatomy[j].family)].push_back(j);
      }
    }
  }
};

// The values of node i for a family's columns, with their columns.
double NodeMedian(const FleetTable& t, size_t i, const std::vector<size_t>& cols,
                  std::vector<double>& scratch) {
  scratch.clear();
  for (size_t j : cols) {
    if (!std::isnan(t.at(i, j))) scratch.push_back(t.at(i, j));
  }
  return scratch.size() < 2 ? std::nan("") : Median(scratch);
}

// For each component of node i: the sum and count of its metrics' worse-direction sigmas within
// one benchmark (index -> {sum, count}). Balance sigmas where the family has them (they leave the
// node's own offset out), fleet sigmas otherwise. Over a sweep this is the distance of the
// component's curve from the fleet's.
std::map<std::string, std::pair<double, int>> ComponentDistances(
    const FleetTable& t, size_t i, const std::vector<size_t>& cols, const Columns& c,
    const std::unordered_map<std::string, const FamilyModel*>& families,
    std::vector<double>& scratch) {
  std::map<std::string, std::pair<double, int>> d;
  std::map<std::string_view, double> medians;
  for (size_t j : cols) {
    const double v = t.at(i, j);
    auto it = families.find(c.anatomy[j].family);
    if (std::isnan(v) || it == families.end()) continue;
    const FamilyModel& f = *it->second;
    double z = WorseSigmas(f.direction, v, f.centre, f.spread);
    if (f.balanced) {
      auto [mit, added] = medians.try_emplace(f.family, 0.0);
      if (added) {
        std::vector<size_t> fcols;
        for (size_t k : cols) {
          if (c.anatomy[k].family == f.family) fcols.push_back(k);
        }
        mit->second = NodeMedian(t, i, fcols, scratch);
      }
      if (!std::isnan(mit->second) && mit->second != 0) {
        z = WorseSigmas(f.direction, v / mit->second - 1, f.balance_centre, f.balance_spread);
      }
    }
    auto& [sum, n] = d[c.anatomy[j].index];
    sum += z;
    ++n;
  }
  return d;
}

Severity SeverityOf(double deviation) {
  const double a = std::fabs(deviation);
  if (a >= 0.5) return Severity::kCritical;
  if (a >= 0.1) return Severity::kMajor;
  return Severity::kMinor;
}

}  // namespace

Result<LearnedCriteria> Learn(const FleetTable& t, const LearnOptions& o) {
  LearnedCriteria out;
  out.threshold = o.threshold;
  out.resolution = o.resolution;
  const Columns cols(t);
  const Groups groups(cols);
  std::vector<double> xs, scratch;
  for (const auto& [hardware, nodes] : Classes(t)) {
    if (nodes.size() < o.min_nodes) {
      return Status::InvalidArgument(fmt::format(
          "hardware class {} has {} node{}, fewer than the {} needed to learn from",
          Quote(hardware), nodes.size(), nodes.size() == 1 ? "" : "s", o.min_nodes));
    }
    ClassModel cm;
    cm.hardware = hardware;
    cm.nodes = nodes.size();
    std::unordered_map<std::string, const FamilyModel*> by_family;
    for (const auto& [family, fcols] : groups.family_columns) {
      FamilyModel f;
      f.family = family;
      f.direction = cols.anatomy[fcols[0]].direction;
      xs.clear();
      for (size_t j : fcols) {
        size_t present = 0;
        for (size_t i : nodes) {
          const double v = t.at(i, j);
          if (std::isnan(v)) continue;
          xs.push_back(v);
          ++present;
        }
        if (static_cast<double>(present) >= kPresence * static_cast<double>(nodes.size())) {
          f.indexes.push_back(cols.anatomy[j].index);
        }
      }
      if (xs.empty()) continue;  // this class never reports it
      f.samples = xs.size();
      Robust r = RobustOf(xs, 0);
      r.spread = std::max(r.spread, o.resolution * std::fabs(r.centre));
      f.centre = r.centre;
      f.spread = r.spread;
      if (fcols.size() >= 2 && f.direction != Direction::kZero) {
        xs.clear();
        for (size_t i : nodes) {
          const double m = NodeMedian(t, i, fcols, scratch);
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
    for (const FamilyModel& f : cm.families) by_family[f.family] = &f;
    for (const auto& [benchmark, ccols] : groups.benchmark_columns) {
      xs.clear();
      for (size_t i : nodes) {
        for (const auto& [index, d] : ComponentDistances(t, i, ccols, cols, by_family, scratch)) {
          if (d.second >= 2) xs.push_back(d.first / d.second);
        }
      }
      if (xs.empty()) continue;
      ComponentModel c;
      c.benchmark = benchmark;
      c.samples = xs.size();
      const Robust r = RobustOf(xs, 0.05);  // a twentieth of a sigma: the resolution of a mean
      c.centre = r.centre;
      c.spread = r.spread;
      cm.components.push_back(std::move(c));
    }
    out.classes.push_back(std::move(cm));
  }
  if (out.classes.empty()) return Status::InvalidArgument("no nodes to learn from");
  return out;
}

Json CriteriaToJson(const LearnedCriteria& c) {
  Json classes = Json::array();
  for (const ClassModel& cm : c.classes) {
    Json families = Json::array();
    for (const FamilyModel& f : cm.families) {
      Json j = {{"family", f.family},          {"direction", DirectionName(f.direction)},
                {"centre", f.centre},          {"spread", f.spread},
                {"samples", f.samples},        {"indexes", f.indexes}};
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
  // nlohmann's typed getters throw on a wrong type; this reader reports it instead.
  try {
    LearnedCriteria c;
    c.threshold = j.at("threshold_sigmas").get<double>();
    c.resolution = j.at("resolution").get<double>();
    if (!(c.threshold > 0) || !(c.resolution >= 0)) return bad("threshold_sigmas must be > 0");
    for (const Json& cj : j.at("classes")) {
      ClassModel cm;
      cm.hardware = cj.at("hardware").get<std::string>();
      cm.nodes = cj.at("nodes").get<size_t>();
      for (const Json& fj : cj.at("families")) {
        FamilyModel f;
        f.family = fj.at("family").get<std::string>();
        const std::string dir = fj.at("direction").get<std::string>();
        const Direction all[] = {Direction::kHigher, Direction::kLower, Direction::kZero,
                                 Direction::kEither};
        auto d = std::find_if(std::begin(all), std::end(all),
                              [&](Direction x) { return DirectionName(x) == dir; });
        if (d == std::end(all)) return bad(fmt::format("family {}: bad direction", f.family));
        f.direction = *d;
        f.centre = fj.at("centre").get<double>();
        f.spread = fj.at("spread").get<double>();
        f.samples = fj.at("samples").get<size_t>();
        f.indexes = fj.at("indexes").get<std::vector<std::string>>();
        if (fj.contains("balance_centre")) {
          f.balanced = true;
          f.balance_centre = fj.at("balance_centre").get<double>();
          f.balance_spread = fj.at("balance_spread").get<double>();
        }
        if (!(f.spread > 0) || (f.balanced && !(f.balance_spread > 0))) {
          return bad(fmt::format("family {}: spreads must be > 0", f.family));
        }
        cm.families.push_back(std::move(f));
      }
      for (const Json& vj : cj.at("components")) {
        ComponentModel cv;
        cv.benchmark = vj.at("benchmark").get<std::string>();
        cv.centre = vj.at("centre").get<double>();
        cv.spread = vj.at("spread").get<double>();
        cv.samples = vj.at("samples").get<size_t>();
        if (!(cv.spread > 0)) return bad(fmt::format("component model {}: spread must be > 0", cv.benchmark));
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

std::vector<NodeFindings> Judge(const FleetTable& t, const LearnedCriteria& c) {
  const Columns cols(t);
  const Groups groups(cols);
  const double k = c.threshold;
  std::vector<NodeFindings> out(t.node_count());
  std::map<std::string, const ClassModel*> classes;
  for (const ClassModel& cm : c.classes) classes[cm.hardware] = &cm;
  // Per class: family and component models by name.
  struct Index {
    std::unordered_map<std::string, const FamilyModel*> families;
    std::unordered_map<std::string, const ComponentModel*> components;
  };
  std::map<const ClassModel*, Index> index;
  for (const ClassModel& cm : c.classes) {
    for (const FamilyModel& f : cm.families) index[&cm].families[f.family] = &f;
    for (const ComponentModel& cv : cm.components) index[&cm].components[cv.benchmark] = &cv;
  }
  std::vector<double> scratch;
  for (size_t i = 0; i < t.node_count(); ++i) {
    NodeFindings& nf = out[i];
    auto cit = classes.find(t.hardware(i));
    const ClassModel* cm = cit != classes.end()           ? cit->second
                           : c.classes.size() == 1 ? &c.classes[0]
                                                   : nullptr;
    if (cm == nullptr) {
      nf.findings.push_back(Finding{"node", t.hardware(i), "class", 0, 0, 0, 0, 0,
                                    Severity::kCritical});
      nf.defective = true;
      continue;
    }
    const Index& ix = index[cm];
    // Benchmarks that failed or did not run: one finding each, from their return code, not one
    // per metric they did not produce.
    std::set<std::string> down;
    for (const auto& [family, f] : ix.families) {
      if (f->direction != Direction::kZero) continue;
      const long j = t.column(family);
      if (j < 0 || std::isnan(t.at(i, static_cast<size_t>(j))) ||
          t.at(i, static_cast<size_t>(j)) != 0) {
        down.insert(BenchmarkOfKey(family));
      }
    }
    // A node's own noise: the robust spread of its balance deviations, pooled over all its
    // families. A node that is noisy everywhere (healthy, but jittery) gets its thresholds
    // widened by that factor; one bad component among many does not move it.
    std::vector<double> own;
    std::unordered_map<std::string, double> node_median;
    for (const auto& [family, fcols] : groups.family_columns) {
      auto fit = ix.families.find(family);
      if (fit == ix.families.end() || !fit->second->balanced) continue;
      const FamilyModel& f = *fit->second;
      const double m = NodeMedian(t, i, fcols, scratch);
      node_median[family] = m;
      if (std::isnan(m) || m == 0) continue;
      for (size_t j : fcols) {
        const double v = t.at(i, j);
        if (!std::isnan(v)) own.push_back((v / m - 1 - f.balance_centre) / f.balance_spread);
      }
    }
    const double widen =
        own.size() >= kMinNoiseSamples ? std::max(1.0, Mad(own) * kMadToSigma) : 1.0;
    for (const auto& [family, fcols] : groups.family_columns) {
      auto fit = ix.families.find(family);
      if (fit == ix.families.end()) continue;  // nothing learned: nothing to judge by
      const FamilyModel& f = *fit->second;
      auto mit = node_median.find(family);
      const double median = mit == node_median.end() ? std::nan("") : mit->second;
      for (size_t j : fcols) {
        const double v = t.at(i, j);
        const MetricAnatomy& a = cols.anatomy[j];
        if (std::isnan(v)) continue;  // judged below, from the expected indexes
        Finding fd;
        fd.component = a.component;
        fd.metric = t.metrics()[j];
        fd.value = v;
        if (f.direction == Direction::kZero) {
          if (v == 0) continue;
          fd.test = "return_code";
          fd.expected_low = fd.expected_high = 0;
          fd.sigmas = kInf;
          fd.severity = Severity::kCritical;
          nf.findings.push_back(std::move(fd));
          continue;
        }
        const double z_fleet = WorseSigmas(f.direction, v, f.centre, f.spread) / widen;
        double z_balance = 0;
        if (f.balanced && !std::isnan(median) && median != 0) {
          z_balance =
              WorseSigmas(f.direction, v / median - 1, f.balance_centre, f.balance_spread) / widen;
        }
        if (z_fleet <= k && z_balance <= k) continue;
        fd.test = z_fleet > k ? "fleet" : "balance";
        fd.sigmas = std::max(z_fleet, z_balance);
        fd.expected_low = f.direction == Direction::kHigher || f.direction == Direction::kEither
                              ? f.centre - k * f.spread
                              : -kInf;
        fd.expected_high = f.direction == Direction::kLower || f.direction == Direction::kEither
                               ? f.centre + k * f.spread
                               : kInf;
        fd.deviation = f.centre != 0 ? v / f.centre - 1 : 0;
        fd.severity = SeverityOf(fd.deviation);
        nf.findings.push_back(std::move(fd));
      }
      // Expected components that reported nothing.
      const bool benchmark_down = down.contains(BenchmarkOfKey(family));
      for (const std::string& idx : f.indexes) {
        if (benchmark_down && f.direction != Direction::kZero) continue;
        const std::string key = idx.empty() ? family : family + ":" + idx;
        const long j = t.column(key);
        if (j >= 0 && !std::isnan(t.at(i, static_cast<size_t>(j)))) continue;
        const MetricAnatomy a = Anatomize(key);
        nf.findings.push_back(Finding{a.component, key, "missing", std::nan(""), f.centre,
                                      f.centre, -1, kInf, Severity::kCritical});
      }
    }
    for (const auto& [benchmark, ccols] : groups.benchmark_columns) {
      auto vit = ix.components.find(benchmark);
      if (vit == ix.components.end()) continue;
      const ComponentModel& cv = *vit->second;
      for (const auto& [idx, d] : ComponentDistances(t, i, ccols, cols, ix.families, scratch)) {
        if (d.second < 2) continue;
        const double dist = d.first / d.second;
        const double z = (dist / widen - cv.centre) / cv.spread;
        if (z <= k) continue;
        const std::string key = benchmark + "/*" + (idx.empty() ? "" : ":" + idx);
        if (down.contains(benchmark)) continue;
        nf.findings.push_back(Finding{Anatomize(key).component, key, "component", dist, -kInf,
                                      cv.centre + k * cv.spread, 0, z, Severity::kMinor});
      }
    }
    nf.defective = !nf.findings.empty();
  }
  return out;
}

}  // namespace vigil::validate
