#include "vigil/learned/criteria.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <utility>

#include "vigil/core/bounds.h"
#include "vigil/core/text.h"

namespace vigil::learned {

namespace {
// In the order of Pooling's values.
constexpr std::array<std::pair<Pooling, std::string_view>, 3> kPoolingNames{{
    {Pooling::kTrimmedOrHeld, "trimmed_or_held"},
    {Pooling::kMean, "mean"},
    {Pooling::kButWorst, "but_worst"},
}};
}  // namespace

std::string_view PoolingName(Pooling p) { return kPoolingNames[static_cast<size_t>(p)].second; }

std::optional<Pooling> PoolingFromName(std::string_view name) {
  for (const auto& [way, n] : kPoolingNames) {
    if (n == name) return way;
  }
  return std::nullopt;
}

Json CriteriaToJson(const LearnedCriteria& c) {
  Json classes = Json::array();
  for (const ClassModel& cm : c.classes) {
    Json families = Json::array();
    for (const FamilyModel& f : cm.families) {
      Json modes = Json::array();
      for (const Mode& m : f.modes) {
        modes.push_back(Json{{"centre", m.centre},
                             {"spread", m.spread},
                             {"node_centre", m.node_centre},
                             {"node_spread", m.node_spread},
                             {"nodes", m.nodes}});
      }
      Json j = {{"family", f.family},  {"direction", DirectionName(f.direction)},
                {"modes", modes},      {"quantum", f.quantum},
                {"limit", f.limit},    {"samples", f.samples},
                {"members", f.members}};
      if (!f.factors.empty()) j["factors"] = f.factors;
      if (f.balanced) {
        j["balance_centre"] = f.balance_centre;
        j["balance_spread"] = f.balance_spread;
        j["balance_limit"] = f.balance_limit;
      }
      families.push_back(std::move(j));
    }
    Json components = Json::array();
    for (const ComponentModel& cv : cm.components) {
      Json j{{"benchmark", cv.benchmark},
             {"centre", cv.centre},
             {"spread", cv.spread},
             {"limit", cv.limit},
             {"samples", cv.samples}};
      if (!cv.part.empty()) j["part"] = cv.part;
      j["pooling"] = PoolingName(cv.pooling);
      components.push_back(std::move(j));
    }
    classes.push_back(Json{{"hardware", cm.hardware},
                           {"nodes", cm.nodes},
                           {"families", std::move(families)},
                           {"components", std::move(components)}});
  }
  return Json{{"schema", kCriteriaSchema},
              {"budget", c.budget},
              {"resolution", c.resolution},
              {"classes", std::move(classes)}};
}

namespace {

// Ranges of the numbers (docs/formats.md, "Ranges"): those `vigil learn` writes, and no more.
constexpr Bounds kBudgetBounds{.lo = 0, .hi = 1, .lo_open = true};  // as learn --budget
constexpr Bounds kResolutionBounds{.lo = 0, .hi = 1};
constexpr Bounds kCountBounds{.lo = 0, .hi = 1099511627776.0};  // 2^40 nodes or samples
constexpr Bounds kSpreadBounds{.lo = 0, .hi = kMetricValueBounds.hi, .lo_open = true};
constexpr Bounds kQuantumBounds{.lo = 0, .hi = kMetricValueBounds.hi};
constexpr Bounds kLimitBounds{.lo = 0, .hi = kMaxLimit};  // robust sigmas, as Learn writes them
constexpr Bounds kFactorBounds{.lo = kMinFactor, .hi = kMaxFactor};

// Reads a criteria file's parts, naming in each error the file and the part it is in. nlohmann's
// typed getters throw on a wrong type or a missing field (CriteriaFromJson reports it).
class CriteriaReader {
 public:
  explicit CriteriaReader(std::string_view source) : source_(source) {}

  // InvalidArgument "<source>: <what>".
  Status Bad(std::string_view what) const {
    return Status::InvalidArgument(fmt::format("{}: {}", source_, what));
  }

  // The file's schema checked, then its numbers and classes.
  Result<LearnedCriteria> Read(const Json& j) {
    if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string()) {
      return Bad("not a criteria file (no \"schema\")");
    }
    if (j["schema"] != kCriteriaSchema) {
      return Bad(fmt::format("criteria of schema {}; this vigil reads {} (learn them again)",
                             Quote(j["schema"].get<std::string>()), kCriteriaSchema));
    }
    LearnedCriteria c;
    VIGIL_ASSIGN_OR_RETURN(c.budget, Number(j, "budget", kBudgetBounds));
    VIGIL_ASSIGN_OR_RETURN(c.resolution, Number(j, "resolution", kResolutionBounds));
    for (const Json& cj : j.at("classes")) {
      VIGIL_ASSIGN_OR_RETURN(ClassModel cm, ReadClass(cj));
      c.classes.push_back(std::move(cm));
    }
    if (c.classes.empty()) return Bad("no hardware classes");
    return c;
  }

 private:
  Result<ClassModel> ReadClass(const Json& cj) {
    ClassModel cm;
    cm.hardware = cj.at("hardware").get<std::string>();
    where_ = fmt::format("class {}: ", Quote(cm.hardware));
    VIGIL_ASSIGN_OR_RETURN(cm.nodes, Count(cj, "nodes"));
    for (const Json& fj : cj.at("families")) {
      VIGIL_ASSIGN_OR_RETURN(FamilyModel f, ReadFamily(fj));
      cm.families.push_back(std::move(f));
    }
    for (const Json& vj : cj.at("components")) {
      VIGIL_ASSIGN_OR_RETURN(ComponentModel cv, ReadComponentModel(vj));
      cm.components.push_back(std::move(cv));
    }
    return cm;
  }

  Result<FamilyModel> ReadFamily(const Json& fj) {
    FamilyModel f;
    f.family = fj.at("family").get<std::string>();
    const std::string dir = fj.at("direction").get<std::string>();
    const Direction all[] = {Direction::kHigher, Direction::kLower, Direction::kZero,
                             Direction::kEither, Direction::kClear, Direction::kInfo};
    auto d = std::find_if(std::begin(all), std::end(all),
                          [&](Direction x) { return DirectionName(x) == dir; });
    if (d == std::end(all)) return Bad(fmt::format("family {}: bad direction", f.family));
    f.direction = *d;
    where_ = fmt::format("family {}: ", f.family);
    for (const Json& mj : fj.at("modes")) {
      VIGIL_ASSIGN_OR_RETURN(Mode m, ReadMode(mj));
      f.modes.push_back(m);
    }
    if (f.modes.empty()) return Bad(fmt::format("{}modes: none", where_));
    VIGIL_ASSIGN_OR_RETURN(f.quantum, Number(fj, "quantum", kQuantumBounds));
    VIGIL_ASSIGN_OR_RETURN(f.limit, Number(fj, "limit", kLimitBounds));
    VIGIL_ASSIGN_OR_RETURN(f.samples, Count(fj, "samples"));
    f.members = fj.at("members").get<std::vector<std::string>>();
    if (fj.contains("factors")) {
      VIGIL_ASSIGN_OR_RETURN(f.factors, ReadFactors(fj, f.members));
    }
    if (fj.contains("balance_centre")) {
      f.balanced = true;
      VIGIL_ASSIGN_OR_RETURN(f.balance_centre, Number(fj, "balance_centre", kMetricValueBounds));
      VIGIL_ASSIGN_OR_RETURN(f.balance_spread, Number(fj, "balance_spread", kSpreadBounds));
      VIGIL_ASSIGN_OR_RETURN(f.balance_limit, Number(fj, "balance_limit", kLimitBounds));
    }
    return f;
  }

  Result<Mode> ReadMode(const Json& mj) {
    Mode m;
    VIGIL_ASSIGN_OR_RETURN(m.centre, Number(mj, "centre", kMetricValueBounds));
    VIGIL_ASSIGN_OR_RETURN(m.spread, Number(mj, "spread", kSpreadBounds));
    VIGIL_ASSIGN_OR_RETURN(m.node_centre, Number(mj, "node_centre", kMetricValueBounds));
    VIGIL_ASSIGN_OR_RETURN(m.node_spread, Number(mj, "node_spread", kSpreadBounds));
    VIGIL_ASSIGN_OR_RETURN(m.nodes, Count(mj, "nodes"));
    return m;
  }

  // A family's factors: numbers within kFactorBounds, one per member.
  Result<std::vector<double>> ReadFactors(const Json& fj, const std::vector<std::string>& members) {
    std::vector<double> factors;
    for (const Json& x : fj.at("factors")) {
      if (!x.is_number()) return Bad(fmt::format("{}factors: expected numbers", where_));
      if (!kFactorBounds.Contains(x.get<double>())) {
        return Bad(
            fmt::format("{}factors: {}", where_, DescribeOutside(x.get<double>(), kFactorBounds)));
      }
      factors.push_back(x.get<double>());
    }
    if (factors.size() != members.size()) {
      return Bad(
          fmt::format("{}factors: {} for {} members", where_, factors.size(), members.size()));
    }
    return factors;
  }

  Result<ComponentModel> ReadComponentModel(const Json& vj) {
    ComponentModel cv;
    cv.benchmark = vj.at("benchmark").get<std::string>();
    if (vj.contains("part")) cv.part = vj.at("part").get<std::string>();
    where_ = fmt::format("component model {}: ", cv.benchmark);
    const auto pooling = vj.find("pooling");
    if (pooling == vj.end() || !pooling->is_string()) {
      return Bad(fmt::format("{}pooling: expected trimmed_or_held, mean or but_worst", where_));
    }
    const std::optional<Pooling> way = PoolingFromName(pooling->get<std::string>());
    if (!way) {
      return Bad(fmt::format("{}pooling: {} is not trimmed_or_held, mean or but_worst", where_,
                             Quote(pooling->get<std::string>())));
    }
    cv.pooling = *way;
    VIGIL_ASSIGN_OR_RETURN(cv.centre, Number(vj, "centre", kMetricValueBounds));
    VIGIL_ASSIGN_OR_RETURN(cv.spread, Number(vj, "spread", kSpreadBounds));
    VIGIL_ASSIGN_OR_RETURN(cv.limit, Number(vj, "limit", kLimitBounds));
    VIGIL_ASSIGN_OR_RETURN(cv.samples, Count(vj, "samples"));
    return cv;
  }

  // A number within `bounds`, the field named after where_ in errors.
  Result<double> Number(const Json& obj, const char* field, const Bounds& bounds) const {
    const Json& v = obj.at(field);  // throws when missing, as the getters do
    if (!v.is_number()) return Bad(fmt::format("{}{}: expected a number", where_, field));
    const double d = v.get<double>();
    if (!bounds.Contains(d)) {
      return Bad(fmt::format("{}{}: {}", where_, field, DescribeOutside(d, bounds)));
    }
    return d;
  }

  // A whole number within kCountBounds.
  Result<size_t> Count(const Json& obj, const char* field) const {
    VIGIL_ASSIGN_OR_RETURN(const double d, Number(obj, field, kCountBounds));
    if (d != std::floor(d)) return Bad(fmt::format("{}{}: expected a whole number", where_, field));
    return static_cast<size_t>(d);
  }

  std::string_view source_;
  std::string where_;  // the part being read ("family gemm-flops/fp16: "), "" at the top
};

}  // namespace

Result<LearnedCriteria> CriteriaFromJson(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(Json j, ParseJson(text, source));
  CriteriaReader reader(source);
  try {
    return reader.Read(j);
  } catch (const Json::exception& e) {
    return reader.Bad(fmt::format("malformed criteria: {}", e.what()));
  }
}

Result<LearnedCriteria> ReadCriteria(const std::string& path, Env& env) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, env.ReadFile(path));
  return CriteriaFromJson(text, path);
}

LearnedCriteria RestrictToBenchmarks(LearnedCriteria c,
                                     const std::vector<std::string>& benchmarks) {
  const auto kept = [&](std::string_view benchmark) {
    return std::find(benchmarks.begin(), benchmarks.end(), benchmark) != benchmarks.end();
  };
  for (ClassModel& cm : c.classes) {
    std::erase_if(cm.families,
                  [&](const FamilyModel& f) { return !kept(BenchmarkOfKey(f.family)); });
    // A part's pool is kept only with every benchmark it pools: with fewer it is another test.
    std::erase_if(cm.components, [&](const ComponentModel& m) {
      for (std::string_view rest = m.benchmark;;) {
        const size_t plus = rest.find('+');
        if (!kept(rest.substr(0, plus))) return true;
        if (plus == std::string_view::npos) return false;
        rest.remove_prefix(plus + 1);
      }
    });
  }
  return c;
}

const Mode& NearestMode(const FamilyModel& f, double m) {
  const Mode* best = &f.modes.front();
  if (std::isnan(m)) return *best;
  for (const Mode& mode : f.modes) {
    if (std::fabs(m - mode.node_centre) / mode.node_spread <
        std::fabs(m - best->node_centre) / best->node_spread) {
      best = &mode;
    }
  }
  return *best;
}

double MemberFactor(const FamilyModel& f, std::string_view key) {
  for (size_t m = 0; m < f.factors.size(); ++m) {
    if (f.members[m] == key) return f.factors[m];
  }
  return 1;
}

const ClassModel* ClassFor(const LearnedCriteria& c, std::string_view hardware) {
  for (const ClassModel& cm : c.classes) {
    if (cm.hardware == hardware) return &cm;
  }
  return c.classes.size() == 1 ? &c.classes.front() : nullptr;
}

}  // namespace vigil::learned
