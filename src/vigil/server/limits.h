// How close a node's values come to the healthy limits learned for its hardware class: what the
// dashboard orders nodes by (the closest to failing first) and the bands its plots draw.
//
// The band of a metric is the fleet test's (learned/judge.h): its mode's centre, and centre minus
// or plus limit x robust sigma on the side(s) its family is judged on. It leaves out what widens
// the judge's limits for one node (its own noise) and the tests that do not compare one value with
// the fleet (balance, component, missing): a ranking, not a verdict.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "vigil/learned/criteria.h"
#include "vigil/results/summary.h"

namespace vigil::server {

// One metric's healthy band; low or high is -/+infinity on a side its family is not judged on.
struct Band {
  double centre = 0, low = -INFINITY, high = INFINITY;
};

// The band of `metric`, a member of family `f`, for a node whose value is `value`: that of the
// mode nearest the value (a metric with two healthy modes, two firmware versions, has one each).
// REQUIRES: learned::IsLearned(f.direction) and !f.modes.empty().
Band BandOf(const learned::FamilyModel& f, std::string_view metric, double value);

// How much of its band a value uses: 0 at the centre (or on the better side of it), 1 on the
// limit, more beyond it. A band of no width gives 0 at its centre and infinity elsewhere.
double UsedOfBand(const Band& band, double value);

// The value of a node that comes closest to its limit, or lies furthest beyond it.
struct NearestLimit {
  std::string metric;           // "" when nothing was judged (no criteria for its class)
  double used = std::nan("");   // UsedOfBand of its value; infinity for a return code not 0
  double value = std::nan("");  // the value
  bool known() const { return !metric.empty(); }
};

// Learned criteria indexed by class and family, made once per version of the criteria.
class LimitIndex {
 public:
  // Keeps a reference to `criteria`, which must outlive this.
  explicit LimitIndex(const learned::LearnedCriteria& criteria);
  LimitIndex(const LimitIndex&) = delete;
  LimitIndex& operator=(const LimitIndex&) = delete;

  // The value of `row` nearest its limit, by the criteria of the row's hardware class
  // (learned::ClassFor); not known when no class applies or nothing of the row is judged.
  // Thread-safe.
  NearestLimit Nearest(const FleetRow& row) const;

  // The band of `metric` for a node of class `hardware` whose latest value is `value`; nullopt
  // when the criteria judge no such metric. Thread-safe.
  std::optional<Band> BandFor(std::string_view hardware, std::string_view metric,
                              double value) const;

 private:
  // One class's families judged by value, by family and by member key: most keys of a row are
  // members, found without parsing their anatomy (which was most of the cost of ranking a fleet).
  struct Families {
    std::unordered_map<std::string_view, const learned::FamilyModel*> by_family, by_member;
    const learned::FamilyModel* Find(std::string_view key) const;
  };
  const Families* FamiliesOf(std::string_view hardware) const;

  const learned::LearnedCriteria& criteria_;
  std::unordered_map<const learned::ClassModel*, Families> classes_;
};

}  // namespace vigil::server
