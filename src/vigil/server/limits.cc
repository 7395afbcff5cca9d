#include "vigil/server/limits.h"

#include <algorithm>

#include "vigil/results/anatomy.h"

namespace vigil::server {

Band BandOf(const learned::FamilyModel& f, std::string_view metric, double value) {
  const double factor = learned::MemberFactor(f, metric);
  const learned::Mode& m = learned::NearestMode(f, value / factor);
  Band b;
  b.centre = m.centre * factor;
  // Higher is better: judged below the centre; lower is better: above; either: both.
  if (f.direction != Direction::kLower) b.low = (m.centre - f.limit * m.spread) * factor;
  if (f.direction != Direction::kHigher) b.high = (m.centre + f.limit * m.spread) * factor;
  return b;
}

double UsedOfBand(const Band& b, double v) {
  const auto used = [](double distance, double width) {
    if (distance <= 0) return 0.0;
    return width > 0 ? distance / width : INFINITY;
  };
  double out = 0;
  if (std::isfinite(b.low)) out = std::max(out, used(b.centre - v, b.centre - b.low));
  if (std::isfinite(b.high)) out = std::max(out, used(v - b.centre, b.high - b.centre));
  return out;
}

LimitIndex::LimitIndex(const learned::LearnedCriteria& criteria) : criteria_(criteria) {
  for (const learned::ClassModel& c : criteria.classes) {
    Families& families = classes_[&c];
    for (const learned::FamilyModel& f : c.families) {
      const bool zero = f.direction == Direction::kZero;
      if (!zero && !(IsLearned(f.direction) && !f.modes.empty())) continue;
      families.by_family.emplace(f.family, &f);
      for (const std::string& key : f.members) families.by_member.emplace(key, &f);
    }
  }
}

const learned::FamilyModel* LimitIndex::Families::Find(std::string_view key) const {
  if (const auto it = by_member.find(key); it != by_member.end()) return it->second;
  const auto it = by_family.find(Anatomize(key).family);
  return it == by_family.end() ? nullptr : it->second;
}

const LimitIndex::Families* LimitIndex::FamiliesOf(std::string_view hardware) const {
  const learned::ClassModel* c = learned::ClassFor(criteria_, hardware);
  if (c == nullptr) return nullptr;
  const auto it = classes_.find(c);
  return it == classes_.end() ? nullptr : &it->second;
}

NearestLimit LimitIndex::Nearest(const FleetRow& row) const {
  NearestLimit out;
  const Families* families = FamiliesOf(row.hardware);
  if (families == nullptr) return out;
  for (const auto& [key, value] : row.values) {
    if (std::isnan(value)) continue;
    const learned::FamilyModel* model = families->Find(key);
    if (model == nullptr) continue;
    const learned::FamilyModel& f = *model;
    // A benchmark that failed is as far from healthy as a node gets.
    const double used = f.direction == Direction::kZero ? (value == 0 ? 0.0 : INFINITY)
                                                        : UsedOfBand(BandOf(f, key, value), value);
    if (!out.known() || used > out.used) out = NearestLimit{key, used, value};
  }
  return out;
}

std::optional<Band> LimitIndex::BandFor(std::string_view hardware, std::string_view metric,
                                        double value) const {
  const Families* families = FamiliesOf(hardware);
  if (families == nullptr) return std::nullopt;
  const learned::FamilyModel* f = families->Find(metric);
  if (f == nullptr || f->direction == Direction::kZero) return std::nullopt;
  return BandOf(*f, metric, value);
}

}  // namespace vigil::server
