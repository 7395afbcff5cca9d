// `vigil model ettr`'s answer: the first-order ETTR formula (reliability/models.h), and where the
// formula leaves its domain (failures cost more than kEttrDomainLimit of the time: it
// underestimates ETTR, and turns negative past a loss of 1) the simulated job's mean ETTR beside
// it, which is then the answer (docs/reliability.md). The simulation takes milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/reliability/models.h"

namespace vigil::sim {

// The simulation that answers outside the domain: docs/reliability.md's comparison's (1,000 runs
// of 30 days), with fewer runs, or a shorter run, where failures are so many that it would take
// more than about a second (kMaxAnswerFailures).
struct EttrAnswerOptions {
  int runs = 1000;                   // independent runs (at most)
  double duration_s = 30 * 86400.0;  // one run's wall-clock time (at most)
  uint64_t seed = 1;                 // the same answer for the same job, run after run
};

// The failures one answer's simulation may draw (about 5e7 a second, sim/job_sim.h).
inline constexpr double kMaxAnswerFailures = 5e7;

struct EttrAnswer {
  reliability::EttrRow row;  // the formula's estimate, in its domain or not
  // The simulated mean ETTR of the job where the formula is outside its domain; unset inside.
  std::optional<double> simulated;
  // The same at the optimal interval dt*, where the formula at dt* is outside its domain.
  std::optional<double> simulated_at_optimal;

  // The answer: the simulated ETTR where there is one, else the formula's. Never negative.
  double Ettr() const { return simulated.value_or(row.estimate.ettr); }
  // The same at dt* (NaN when there is no dt*: no checkpoint write time).
  double EttrAtOptimal() const {
    return simulated_at_optimal.value_or(row.estimate.ettr_at_optimal);
  }
};

// The answer for a job of `params` with each node count in `nodes` (a job on a fraction of a node
// is simulated on the nearest whole count, at least 1), in order. Errors: ExpectedEttrBySize's
// (InvalidArgument naming the flag). Pure; deterministic for options.seed.
Result<std::vector<EttrAnswer>> AnswerEttrBySize(const reliability::EttrParams& params,
                                                 const std::vector<double>& nodes,
                                                 const EttrAnswerOptions& options = {});

// `vigil model ettr --sweep`'s table: GPUS, NODES, MTTF, ETTR (the answer), FAILURE_LOSS,
// OPTIMAL_INTERVAL, ETTR_AT_OPTIMAL and ETTR_FROM ("formula", or "simulation (formula: -0.47)"
// where the formula left its domain, "simulation (formula: -0.47; at optimum: 0.43)" where it
// left it at the optimal interval too), then a note under it when a row was simulated.
std::string EttrSweepTable(const std::vector<EttrAnswer>& rows, int gpus_per_node);

// `vigil model ettr --sweep --plot FILE.svg`: ETTR against GPUs (a log-2 axis: the sizes double),
// the answer and the answer at the optimal interval, as an SVG document (core/svg_plot.h); the
// subtitle, `subtitle`, says the rate and intervals it was made for.
std::string EttrSweepPlot(const std::vector<EttrAnswer>& rows, int gpus_per_node,
                          const std::string& subtitle);

// `vigil model ettr`'s table for one job: QUANTITY, VALUE and MEANING; outside the domain the
// formula's ETTR is marked as such and the simulated one follows it.
std::string EttrTable(const EttrAnswer& answer);

}  // namespace vigil::sim
