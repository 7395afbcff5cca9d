#include "vigil/learned/reach.h"

#include <fmt/format.h>

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
// kMostSlowdown. Between the last one not flagged and the first from which on all are, the
// slowdown is then halved down kNarrowings times (to a thirtieth of a percent).
std::vector<double> Steps() {
  std::vector<double> steps;
  for (int p = 0; p <= 20; ++p) steps.push_back(p / 100.0);
  for (int p = 25; p <= 95; p += 5) steps.push_back(p / 100.0);
  return steps;
}
constexpr int kNarrowings = 5;

// One part slowed: the positions of its metrics in the centre row.
struct Unit {
  std::string benchmark;  // "" for all
  std::string part;
  std::vector<size_t> moved;
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
// people are left out.
FleetRow CentreRow(const ClassModel& cm) {
  FleetRow row;
  row.node = "centre";
  row.hardware = cm.hardware;
  for (const FamilyModel& f : cm.families) {
    if (f.direction == Direction::kInfo) continue;
    const Mode* mode = MostPopulous(f);
    for (const std::string& key : f.members) {
      const bool centred = IsLearned(f.direction) && mode != nullptr;
      row.values.emplace_back(key, centred ? mode->centre * MemberFactor(f, key) : 0.0);
    }
  }
  return row;
}

bool Slows(Direction d) { return d == Direction::kHigher || d == Direction::kLower; }

// The parts to slow (ReachOf): per benchmark, the first of the parts it measures by one set of
// families (its GPUs, its disks); then per kind of part a node has several of (GPU, HBM, NIC...)
// whose first part two or more benchmarks measure, that part across them.
std::vector<Unit> UnitsOf(const FleetRow& row) {
  struct Key {
    std::string benchmark, family, part;
    bool slows = false;
  };
  std::vector<Key> keys;
  // Per benchmark and part, the families of its metrics that a slowdown moves, in row order.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> families;
  std::vector<std::pair<std::string, std::string>> parts;  // (benchmark, part), as first seen
  std::map<std::string, std::string> first_of_kind;        // of kinds with an index
  for (const auto& [key, value] : row.values) {
    const MetricAnatomy a = Anatomize(key);
    Key& k =
        keys.emplace_back(Key{BenchmarkOfKey(a.family), a.family, a.component, Slows(a.direction)});
    if (!k.slows) continue;
    auto [it, added] = families.try_emplace({k.benchmark, k.part});
    if (added) parts.emplace_back(k.benchmark, k.part);
    it->second.push_back(k.family);
    const ComponentId id = ParseComponent(a.component);
    if (id.index) first_of_kind.try_emplace(id.kind, k.part);
  }
  const auto moved = [&](const std::string& benchmark, const std::string& part) {
    std::vector<size_t> out;
    for (size_t j = 0; j < keys.size(); ++j) {
      if (keys[j].slows && keys[j].part == part &&
          (benchmark.empty() || keys[j].benchmark == benchmark)) {
        out.push_back(j);
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
  for (const auto& [kind, first] : first_of_kind) {
    if (benchmarks_of[first] >= 2) units.push_back(Unit{"", first, moved("", first)});
  }
  return units;
}

// The centre row with unit's metrics slowed by s.
FleetRow Slowed(const FleetRow& centre, const Unit& unit, double s) {
  FleetRow row = centre;
  for (size_t j : unit.moved) {
    auto& [key, value] = row.values[j];
    value *= Anatomize(key).direction == Direction::kHigher ? 1 - s : 1 + s;
  }
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
  // Each (unit, slowdown) judged: the test of the first finding that names the unit's part.
  using Try = std::pair<size_t, double>;
  const auto judge = [&](const std::vector<Try>& tries) {
    std::vector<FleetRow> rows;
    rows.reserve(tries.size());
    for (const auto& [u, s] : tries) rows.push_back(Slowed(centre, units[u], s));
    const std::vector<NodeFindings> judged = judgement.Judge(TableOfRows(rows, "reach"), threads);
    std::vector<std::optional<FindingTest>> out(tries.size());
    for (size_t i = 0; i < tries.size(); ++i) {
      for (const Finding& f : judged[i].findings) {
        if (ComponentName(f.component) == units[tries[i].first].part) {
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
  const std::vector<std::optional<FindingTest>> first = judge(tries);
  std::vector<Reach> out(units.size());
  std::vector<double> lo(units.size(), 0);
  for (size_t u = 0; u < units.size(); ++u) {
    Reach& r = out[u];
    r.hardware = cm.hardware;
    r.benchmark = units[u].benchmark;
    r.part = units[u].part;
    r.metrics = units[u].moved.size();
    // The first step from which on every one is flagged.
    size_t from = steps.size();
    while (from > 0 && first[u * steps.size() + from - 1]) --from;
    if (from == steps.size()) continue;
    r.slowdown = steps[from];
    r.test = *first[u * steps.size() + from];
    lo[u] = from > 0 ? steps[from - 1] : 0;
  }
  for (int k = 0; k < kNarrowings; ++k) {
    tries.clear();
    for (size_t u = 0; u < units.size(); ++u) {
      if (!std::isnan(out[u].slowdown) && out[u].slowdown > 0) {
        tries.emplace_back(u, (lo[u] + out[u].slowdown) / 2);
      }
    }
    const std::vector<std::optional<FindingTest>> found = judge(tries);
    for (size_t i = 0; i < tries.size(); ++i) {
      const auto& [u, s] = tries[i];
      if (found[i]) {
        out[u].slowdown = s;
        out[u].test = *found[i];
      } else {
        lo[u] = s;
      }
    }
  }
  return out;
}

std::string HardwareName(const std::string& hardware) {
  return hardware.empty() ? "(unspecified)" : hardware;
}

}  // namespace

std::vector<Reach> ReachOf(const LearnedCriteria& criteria, int threads) {
  std::vector<Reach> out;
  for (const ClassModel& cm : criteria.classes) {
    for (Reach& r : ReachOfClass(criteria, cm, threads)) out.push_back(std::move(r));
  }
  return out;
}

std::string RenderReach(const std::vector<Reach>& reach) {
  Table t({"HARDWARE", "BENCHMARK", "PART", "METRICS", "FLAGGED FROM", "TEST"});
  for (const Reach& r : reach) {
    t.Add({HardwareName(r.hardware), r.benchmark.empty() ? "(all)" : r.benchmark, r.part,
           std::to_string(r.metrics),
           std::isnan(r.slowdown) ? fmt::format("not up to {:.0f}%", 100 * kMostSlowdown)
                                  : fmt::format("{:.1f}%", 100 * r.slowdown),
           std::isnan(r.slowdown) ? "-" : std::string(FindingTestName(r.test))});
  }
  return t.ToString();
}

Json ReachToJson(const std::vector<Reach>& reach) {
  Json out = Json::array();
  for (const Reach& r : reach) {
    out.push_back(
        Json{{"hardware", r.hardware},
             {"benchmark", r.benchmark},
             {"part", r.part},
             {"metrics", r.metrics},
             {"slowdown", std::isnan(r.slowdown) ? Json(nullptr) : Json(r.slowdown)},
             {"test", std::isnan(r.slowdown) ? Json(nullptr) : Json(FindingTestName(r.test))}});
  }
  return out;
}

}  // namespace vigil::learned
