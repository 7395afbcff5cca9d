// `vigil simulate job --plot FILE.svg`: where the time of a simulated job went, as an SVG
// document drawn with core/svg_plot.h (docs/reliability.md).
#pragma once

#include <string>

#include "vigil/sim/job_sim.h"

namespace vigil::sim {

// One stacked bar, the mean run in hours: productive work, recompute (work lost to failures),
// detect, restart, queue and checkpoint stalls, each in the legend with its share of the run and
// its hours; the subtitle says the job and its ETTR (mean, p5, p95). Parts below zero or not
// finite are not drawn. Pure; thread-safe.
std::string JobTimePlot(const JobSimOptions& options, const JobSimResult& result);

}  // namespace vigil::sim
