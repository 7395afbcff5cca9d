// What learned criteria can find (docs/validate.md, "What the criteria can find"): for each kind of
// part a class measures, benchmark by benchmark and across the benchmarks that measure it, the
// smallest slowdown of one part that the class's tests flag. Found by judging, with the judge
// itself, a node made of the class's healthy centres with one part slowed: a fleet whose noise is
// heavy-tailed, or a benchmark that measures a part with one noisy metric, shows here as a
// slowdown that only a gross defect reaches.
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/learned/criteria.h"
#include "vigil/learned/judge.h"

namespace vigil::learned {

// The largest slowdown tried: a part not flagged up to it is reported as not found.
inline constexpr double kMostSlowdown = 0.95;

struct Reach {
  std::string hardware;   // the class ("" for nodes that do not say)
  std::string benchmark;  // the benchmark whose metrics of the part move; "" for all of them
  std::string part;       // the part slowed: "GPU 0", "NIC 0", "disk nvme0n1", "link 0-1"...
  size_t metrics = 0;     // its metrics that the slowdown moves
  // The slowdown from which on every slowdown tried is flagged: a finding names the part, or the
  // node is judged not of its class (a part whose metrics are most of the node's families takes
  // it out of every mode). 0.083 is 8.3%, to a twentieth of a percent; NaN where the largest
  // tried (kMostSlowdown) is not flagged.
  double slowdown = std::nan("");
  // The smallest slowdown flagged at all: below `slowdown` where larger ones pass in between (a
  // family of two healthy modes judges a part slowed far enough by the lower one); NaN where
  // none is.
  double first = std::nan("");
  FindingTest test = FindingTest::kFleet;  // the test that flags it at `slowdown` (else `first`)
};

// Every class's reach: per benchmark, for each kind of part it measures, that kind's first part
// (in the order of the class's families and members); then, per kind of part that two or more
// benchmarks measure, that part's metrics of all of them at once. A slowdown of s takes each of
// the part's metrics that is better higher to (1 - s) times its healthy centre and each better
// lower to (1 + s) times; metrics judged either way, and the node's other parts, stay at their
// centres (the centre of each family's most populous mode, times the member's factor). At that
// slowdown a part on a node of typical noise is found about half the time. Uses up to `threads`
// threads (0: the hardware's count); the result does not depend on it.
std::vector<Reach> ReachOf(const LearnedCriteria& criteria, int threads = 0);

// The line above RenderReach's table in `vigil learn`.
inline constexpr std::string_view kReachHeading =
    "What the criteria find: the slowdown of one part from which on it is flagged, the node "
    "otherwise at its class's healthy centres (there about half of such parts are found); FIRST "
    "FLAGGED: a smaller one flagged too, where some in between pass\n";

// One line per reach: HARDWARE, BENCHMARK ("(all)" for every benchmark), PART, METRICS, FLAGGED
// FROM ("8.3%", or "not up to 95%"), TEST and FIRST FLAGGED ("-" where it is FLAGGED FROM, or
// none). Pure.
std::string RenderReach(const std::vector<Reach>& reach);

// Where some reach flags nothing up to kMostSlowdown (a part that reads nothing passes), a note
// for under RenderReach's table naming those parts and what to do; "" where every part is
// flagged from some slowdown. Pure.
std::string RenderBlindReach(const std::vector<Reach>& reach);

// [{"hardware", "benchmark", "part", "metrics", "slowdown", "first", "test"}, ...], null for a
// slowdown (and its test) where there is none.
Json ReachToJson(const std::vector<Reach>& reach);

}  // namespace vigil::learned
