// The pictures of reliability's answers, for `--plot FILE.svg`: SVG documents drawn with
// core/svg_plot.h, where a person would rather look than read the table beside them
// (docs/reliability.md).
//
// Pure functions of their arguments; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "vigil/reliability/fleet_stats.h"
#include "vigil/reliability/models.h"

namespace vigil::reliability {

// At most this many lemon nodes are drawn, the most significant first: beyond it the bars would
// be too thin to read (the table lists them all).
inline constexpr size_t kMaxPlottedLemons = 24;

// `vigil model mttf --plot`: the job's MTTF in hours against its GPUs, both axes logarithmic (a
// base-2 axis for the sizes, decades for the hours), so that MTTF = 1 / (N_nodes r_f) is a
// straight line; the subtitle names the rate and GPUs per node.
std::string MttfPlot(const std::vector<MttfRow>& rows, int gpus_per_node,
                     double failures_per_1000_node_days);

// `vigil fleet stats --plot`: two panels. Above, the infrastructure failure rate per 1000
// node-days of each job size class (by its smallest size, on a base-2 axis) with its interval
// at `confidence`, beside the fleet's rate: where a class stands above the line, its jobs fail
// more often per node than the fleet's. Below, each lemon node's failed jobs (both channels of
// the lemon test) against what the fleet's rates expect of it, at most kMaxPlottedLemons of
// them; "none" in the title when there is none at `fdr`.
std::string FleetStatsPlot(const FleetStats& stats, double confidence, double fdr);

}  // namespace vigil::reliability
