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
  // The smallest slowdown at which a finding names the part, and from which on every slowdown
  // tried is flagged (0.083: 8.3%, to a tenth of a percent); NaN where none up to kMostSlowdown.
  double slowdown = std::nan("");
  FindingTest test = FindingTest::kFleet;  // the test of that finding
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
    "What the criteria find: the smallest slowdown of one part that a finding names, the node "
    "otherwise at its class's healthy centres (there about half of such parts are found)\n";

// One line per reach: HARDWARE, BENCHMARK ("(all)" for every benchmark), PART, METRICS, FLAGGED
// FROM ("8.3%", or "not up to 95%") and TEST. Pure.
std::string RenderReach(const std::vector<Reach>& reach);

// [{"hardware", "benchmark", "part", "metrics", "slowdown" (null where none), "test"}, ...].
Json ReachToJson(const std::vector<Reach>& reach);

}  // namespace vigil::learned
