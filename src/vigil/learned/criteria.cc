#include "vigil/learned/criteria.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "vigil/core/bounds.h"
#include "vigil/core/text.h"

namespace vigil::learned {

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
      if (cv.but_worst) j["but_worst"] = true;
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
  constexpr Bounds kBudgetBounds{.lo = 0, .hi = 1, .lo_open = true};  // as learn --budget
  constexpr Bounds kResolutionBounds{.lo = 0, .hi = 1};
  constexpr Bounds kCountBounds{.lo = 0, .hi = 1099511627776.0};  // 2^40 nodes or samples
  constexpr Bounds kSpreadBounds{.lo = 0, .hi = kMetricValueBounds.hi, .lo_open = true};
  constexpr Bounds kQuantumBounds{.lo = 0, .hi = kMetricValueBounds.hi};
  constexpr Bounds kLimitBounds{.lo = 0, .hi = kMaxLimit};  // robust sigmas, as Learn writes them
  constexpr Bounds kFactorBounds{.lo = 1e-9, .hi = 1e9};    // a member's ratio to its family
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
    VIGIL_ASSIGN_OR_RETURN(c.budget, number(j, "budget", kBudgetBounds));
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
        for (const Json& mj : fj.at("modes")) {
          Mode& m = f.modes.emplace_back();
          VIGIL_ASSIGN_OR_RETURN(m.centre, number(mj, "centre", kMetricValueBounds));
          VIGIL_ASSIGN_OR_RETURN(m.spread, number(mj, "spread", kSpreadBounds));
          VIGIL_ASSIGN_OR_RETURN(m.node_centre, number(mj, "node_centre", kMetricValueBounds));
          VIGIL_ASSIGN_OR_RETURN(m.node_spread, number(mj, "node_spread", kSpreadBounds));
          VIGIL_ASSIGN_OR_RETURN(m.nodes, count(mj, "nodes"));
        }
        if (f.modes.empty()) return bad(fmt::format("{}modes: none", where));
        VIGIL_ASSIGN_OR_RETURN(f.quantum, number(fj, "quantum", kQuantumBounds));
        VIGIL_ASSIGN_OR_RETURN(f.limit, number(fj, "limit", kLimitBounds));
        VIGIL_ASSIGN_OR_RETURN(f.samples, count(fj, "samples"));
        f.members = fj.at("members").get<std::vector<std::string>>();
        if (fj.contains("factors")) {
          for (const Json& x : fj.at("factors")) {
            if (!x.is_number()) return bad(fmt::format("{}factors: expected numbers", where));
            if (!kFactorBounds.Contains(x.get<double>())) {
              return bad(fmt::format("{}factors: {}", where,
                                     DescribeOutside(x.get<double>(), kFactorBounds)));
            }
            f.factors.push_back(x.get<double>());
          }
          if (f.factors.size() != f.members.size()) {
            return bad(fmt::format("{}factors: {} for {} members", where, f.factors.size(),
                                   f.members.size()));
          }
        }
        if (fj.contains("balance_centre")) {
          f.balanced = true;
          VIGIL_ASSIGN_OR_RETURN(f.balance_centre,
                                 number(fj, "balance_centre", kMetricValueBounds));
          VIGIL_ASSIGN_OR_RETURN(f.balance_spread, number(fj, "balance_spread", kSpreadBounds));
          VIGIL_ASSIGN_OR_RETURN(f.balance_limit, number(fj, "balance_limit", kLimitBounds));
        }
        cm.families.push_back(std::move(f));
      }
      for (const Json& vj : cj.at("components")) {
        ComponentModel cv;
        cv.benchmark = vj.at("benchmark").get<std::string>();
        if (vj.contains("part")) cv.part = vj.at("part").get<std::string>();
        if (vj.contains("but_worst")) cv.but_worst = vj.at("but_worst").get<bool>();
        where = fmt::format("component model {}: ", cv.benchmark);
        VIGIL_ASSIGN_OR_RETURN(cv.centre, number(vj, "centre", kMetricValueBounds));
        VIGIL_ASSIGN_OR_RETURN(cv.spread, number(vj, "spread", kSpreadBounds));
        VIGIL_ASSIGN_OR_RETURN(cv.limit, number(vj, "limit", kLimitBounds));
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
