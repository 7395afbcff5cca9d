#include "vigil/learned/reach.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "vigil/core/text_table.h"
#include "vigil/results/anatomy.h"
#include "vigil/results/component.h"
#include "vigil/results/summary.h"

namespace vigil::learned {
namespace {

// The slowdowns tried first: none, every percent up to a fifth, then every 5% up to
// kMostSlowdown. Between a step not named and the next one named, the slowdown is then halved down
// until the two lie within kResolution of each other.
std::vector<double> Steps() {
  std::vector<double> steps;
  for (int p = 0; p <= 20; ++p) steps.push_back(p / 100.0);
  for (int p = 25; p <= 95; p += 5) steps.push_back(p / 100.0);
  return steps;
}
constexpr double kResolution = 0.0005;

// One of a part's metrics that a slowdown moves: its position in the centre row, and its factor
// per unit of slowdown (-1: better higher, +1: better lower).
struct Moved {
  size_t at;
  double way;
};

// One part slowed.
struct Unit {
  std::string benchmark;  // "" for all
  std::string part;
  std::vector<Moved> moved;
};

const Mode* MostPopulous(const FamilyModel& f) {
  const Mode* best = nullptr;
  for (const Mode& m : f.modes) {
    if (best == nullptr || m.nodes > best->nodes) best = &m;
  }
  return best;
}

// The class's healthy node: every member of its families at the centre of the family's most
// populous mode times the member's factor; return codes and health counters 0. Readings kept for
// people are left out, and a key only once.
FleetRow CentreRow(const ClassModel& cm) {
  FleetRow row;
  row.node = "centre";
  row.hardware = cm.hardware;
  std::set<std::string> keys;
  for (const FamilyModel& f : cm.families) {
    if (f.direction == Direction::kInfo) continue;
    const Mode* mode = MostPopulous(f);
    for (const std::string& key : f.members) {
      if (!keys.insert(key).second) continue;  // criteria written by hand may list it twice
      const bool centred = IsLearned(f.direction) && mode != nullptr;
      row.values.emplace_back(key, centred ? mode->centre * MemberFactor(f, key) : 0.0);
    }
  }
  return row;
}

bool Slows(Direction d) { return d == Direction::kHigher || d == Direction::kLower; }

// The parts to slow (ReachOf): per benchmark, the first of the parts it measures by one set of
// families (its GPUs, its disks); then per kind of part a node has several of (GPU, HBM, NIC...),
// the first of its parts that two or more benchmarks measure, across them.
std::vector<Unit> UnitsOf(const FleetRow& row) {
  struct Key {
    std::string benchmark, family, part;
    Direction direction;
    bool slows = false;
  };
  std::vector<Key> keys;
  // Per benchmark and part, the families of its metrics that a slowdown moves, in row order.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> families;
  std::vector<std::pair<std::string, std::string>> parts;    // (benchmark, part), as first seen
  std::vector<std::pair<std::string, std::string>> indexed;  // (kind, part), as first seen
  for (const auto& [key, value] : row.values) {
    const MetricAnatomy a = Anatomize(key);
    Key& k = keys.emplace_back(
        Key{BenchmarkOfKey(a.family), a.family, a.component, a.direction, Slows(a.direction)});
    if (!k.slows) continue;
    auto [it, added] = families.try_emplace({k.benchmark, k.part});
    if (added) parts.emplace_back(k.benchmark, k.part);
    it->second.push_back(k.family);
    const ComponentId id = ParseComponent(a.component);
    if (id.index && added) indexed.emplace_back(id.kind, k.part);
  }
  const auto moved = [&](const std::string& benchmark, const std::string& part) {
    std::vector<Moved> out;
    for (size_t j = 0; j < keys.size(); ++j) {
      if (keys[j].slows && keys[j].part == part &&
          (benchmark.empty() || keys[j].benchmark == benchmark)) {
        out.push_back(Moved{j, keys[j].direction == Direction::kHigher ? -1.0 : 1.0});
      }
    }
    return out;
  };
  std::vector<Unit> units;
  std::set<std::pair<std::string, std::vector<std::string>>> seen;  // (benchmark, families)
  std::map<std::string, size_t> benchmarks_of;                      // part -> benchmarks
  for (const auto& [benchmark, part] : parts) {
    ++benchmarks_of[part];
    if (seen.emplace(benchmark, families[{benchmark, part}]).second) {
      units.push_back(Unit{benchmark, part, moved(benchmark, part)});
    }
  }
  std::set<std::string> kinds;  // those that have their row across benchmarks
  for (const auto& [kind, part] : indexed) {
    if (benchmarks_of[part] >= 2 && kinds.insert(kind).second) {
      units.push_back(Unit{"", part, moved("", part)});
    }
  }
  return units;
}

// The centre row with unit's metrics slowed by s.
FleetRow Slowed(const FleetRow& centre, const Unit& unit, double s) {
  FleetRow row = centre;
  for (const Moved& m : unit.moved) row.values[m.at].second *= 1 + m.way * s;
  return row;
}

std::vector<Reach> ReachOfClass(const LearnedCriteria& criteria, const ClassModel& cm,
                                int threads) {
  const FleetRow centre = CentreRow(cm);
  const std::vector<Unit> units = UnitsOf(centre);
  if (units.empty()) return {};
  std::vector<std::string> metrics;
  for (const auto& [key, value] : centre.values) metrics.push_back(key);
  const Judgement judgement(metrics, criteria);
  // Each (unit, slowdown) judged: the test of the first finding that names the unit's part, or of
  // the one that says the node is not of its class (a part whose metrics are most of the node's
  // families takes the node out of every mode); none where the node passes.
  using Try = std::pair<size_t, double>;
  const auto judge = [&](const std::vector<Try>& tries) {
    std::vector<FleetRow> rows;
    rows.reserve(tries.size());
    for (const auto& [u, s] : tries) rows.push_back(Slowed(centre, units[u], s));
    const std::vector<NodeFindings> judged = judgement.Judge(TableOfRows(rows, "reach"), threads);
    std::vector<std::optional<FindingTest>> out(tries.size());
    for (size_t i = 0; i < tries.size(); ++i) {
      for (const Finding& f : judged[i].findings) {
        if (f.test == FindingTest::kClass ||
            ComponentName(f.component) == units[tries[i].first].part) {
          out[i] = f.test;
          break;
        }
      }
    }
    return out;
  };
  const std::vector<double> steps = Steps();
  std::vector<Try> tries;
  for (size_t u = 0; u < units.size(); ++u) {
    for (double s : steps) tries.emplace_back(u, s);
  }
  const std::vector<std::optional<FindingTest>> grid = judge(tries);
  // Per unit, the two slowdowns sought, each bracketed: not named at `lo`, named at `hi` (both 0
  // where a part is named unslowed).
  struct Bracket {
    size_t unit;
    double lo, hi;
    FindingTest test;
    bool always;  // the one from which on every step is named; else the first named
  };
  std::vector<Bracket> brackets;
  for (size_t u = 0; u < units.size(); ++u) {
    const auto named = [&](size_t g) { return grid[u * steps.size() + g]; };
    size_t first = 0, always = steps.size();
    while (first < steps.size() && !named(first)) ++first;
    while (always > 0 && named(always - 1)) --always;
    for (const auto& [g, is_always] : {std::pair{first, false}, std::pair{always, true}}) {
      if (g == steps.size()) continue;
      brackets.push_back(
          Bracket{u, g > 0 ? steps[g - 1] : steps[0], steps[g], *named(g), is_always});
    }
  }
  for (;;) {
    tries.clear();
    std::vector<size_t> narrowed;
    for (size_t b = 0; b < brackets.size(); ++b) {
      if (brackets[b].hi - brackets[b].lo <= kResolution) continue;
      tries.emplace_back(brackets[b].unit, (brackets[b].lo + brackets[b].hi) / 2);
      narrowed.push_back(b);
    }
    if (tries.empty()) break;
    const std::vector<std::optional<FindingTest>> found = judge(tries);
    for (size_t i = 0; i < tries.size(); ++i) {
      Bracket& b = brackets[narrowed[i]];
      if (found[i]) {
        b.hi = tries[i].second;
        b.test = *found[i];
      } else {
        b.lo = tries[i].second;
      }
    }
  }
  std::vector<Reach> out(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    out[u].hardware = cm.hardware;
    out[u].benchmark = units[u].benchmark;
    out[u].part = units[u].part;
    out[u].metrics = units[u].moved.size();
  }
  for (const Bracket& b : brackets) {
    Reach& r = out[b.unit];
    (b.always ? r.slowdown : r.first) = b.hi;
    if (b.always || std::isnan(r.slowdown)) r.test = b.test;
  }
  return out;
}

std::string HardwareName(const std::string& hardware) {
  return hardware.empty() ? "(unspecified)" : hardware;
}

}  // namespace

std::vector<Reach> ReachOf(const LearnedCriteria& criteria, int threads) {
  std::vector<Reach> out;
  std::set<std::string> classes;
  for (const ClassModel& cm : criteria.classes) {
    if (!classes.insert(cm.hardware).second) continue;  // the first judges, as ClassFor says
    for (Reach& r : ReachOfClass(criteria, cm, threads)) out.push_back(std::move(r));
  }
  return out;
}

namespace {

// Whether no slowdown tried flags the part: neither from some slowdown on nor in a gap.
bool FlagsNothing(const Reach& r) { return std::isnan(r.slowdown) && std::isnan(r.first); }

}  // namespace

std::string RenderReach(const std::vector<Reach>& reach) {
  const auto percent = [](double s) { return fmt::format("{:.1f}%", 100 * s); };
  Table t({"HARDWARE", "BENCHMARK", "PART", "METRICS", "FLAGGED FROM", "TEST", "FIRST FLAGGED"});
  for (const Reach& r : reach) {
    const bool none = FlagsNothing(r);
    const bool gap = !std::isnan(r.first) && !(r.first >= r.slowdown);  // NaN slowdown: a gap
    t.Add({HardwareName(r.hardware), r.benchmark.empty() ? "(all)" : r.benchmark, r.part,
           std::to_string(r.metrics),
           std::isnan(r.slowdown) ? fmt::format("not up to {:.0f}%", 100 * kMostSlowdown)
                                  : percent(r.slowdown),
           none ? "-" : std::string(FindingTestName(r.test)), gap ? percent(r.first) : "-"});
  }
  return t.ToString();
}

std::string RenderBlindReach(const std::vector<Reach>& reach) {
  std::vector<std::string> blind;
  for (const Reach& r : reach) {
    if (!FlagsNothing(r)) continue;
    blind.push_back(fmt::format("{}{} {}", r.hardware.empty() ? "" : r.hardware + ": ",
                                r.benchmark.empty() ? "(all)" : r.benchmark, r.part));
  }
  if (blind.empty()) return "";
  return fmt::format(
      "{} flagged by no slowdown up to {:.0f}% ({}): a part that slow passes {} tests. "
      "Either the healthy values spread that far (heavy tails, noisy nodes), or the "
      "results learned from hold defective parts that the tail was read from: learn again "
      "without nodes known to be bad, or from more runs. A benchmark that fails is still a "
      "finding.\n",
      blind.size() == 1 ? "One kind of part is" : fmt::format("{} kinds of part are", blind.size()),
      100 * kMostSlowdown, fmt::join(blind, ", "), blind.size() == 1 ? "its" : "their");
}

Json ReachToJson(const std::vector<Reach>& reach) {
  const auto number = [](double v) { return std::isnan(v) ? Json(nullptr) : Json(v); };
  Json out = Json::array();
  for (const Reach& r : reach) {
    const bool none = FlagsNothing(r);
    out.push_back(Json{{"hardware", r.hardware},
                       {"benchmark", r.benchmark},
                       {"part", r.part},
                       {"metrics", r.metrics},
                       {"slowdown", number(r.slowdown)},
                       {"first", number(r.first)},
                       {"test", none ? Json(nullptr) : Json(FindingTestName(r.test))}});
  }
  return out;
}

}  // namespace vigil::learned
