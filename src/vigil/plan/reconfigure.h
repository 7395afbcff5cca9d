// `vigil plan reconfigure`: after failures leave N healthy GPUs, how many each concurrent job
// should get (docs/plan.md, "Reconfiguration"). A job's worth over the expected time H to the
// next failure is weight x its achieved FLOP/s at g GPUs x (H - its transition cost when its
// allocation changes or a failure hit it); the plan maximises the sum, exactly, by dynamic
// programming over jobs x GPU counts (a grouped knapsack), as Unicron (Hu et al., 2024) frames it.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"

namespace vigil::plan {

// One allowed size of a job and what it achieves there: the fields `vigil plan train --json`
// prints for that layout (gpus, tflops_per_gpu), so that its curve can come from the model.
struct ThroughputPoint {
  int64_t gpus = 0;
  double tflops_per_gpu = 0;  // achieved, dense
};

// A curve to come from the training step model (issue 26 part 2) rather than from points written
// by hand: at each allowed size, the throughput of the best layout SearchLayouts finds.
struct CurveModel {
  std::string model_path;             // the model file; ReadJobs makes it relative to the jobs file
  std::string gpu = "h100";           // the datasheet row
  std::vector<std::string> hardware;  // measured results over it (as plan train's --hardware)
  int64_t global_batch = 0;           // sequences per step
  int64_t micro_batch = 0;            // 0: the search tries 1, 2, 4 and 8
  std::string precision = "bf16";     // bf16 or fp8
  std::vector<int64_t> sizes;         // the GPU counts the job may run on, ascending, distinct
  std::string where;                  // "SOURCE:LINE: jobs[i].model", for errors found later
};

struct JobCurve {
  std::string name;
  double weight = 1;         // priority: a weighted TFLOP of this job is worth `weight`
  int64_t current_gpus = 0;  // before the failure; 0 when the job is not running
  // Not running on its current_gpus now (a failure took some of them, or it waits since one
  // did): it (re)starts whatever the plan, and current_gpus is the size it had.
  bool hit = false;
  double transition_s = 0;  // restart and reload from the checkpoint, seconds
  std::vector<ThroughputPoint>
      points;  // allowed sizes, ascending; 0 GPUs (paused) is always allowed
  // Set when the points come from a model: CurvesFromModels fills `points` from it, and
  // `left_out` with the sizes at which no layout of the model fits.
  std::optional<CurveModel> model;
  std::vector<int64_t> left_out;

  // Total TFLOP/s at `gpus` (one of the points, or 0).
  double TflopsAt(int64_t gpus) const;
};

// The jobs file (YAML or JSON; docs/plan.md): `jobs:`, a list of mappings with name, weight,
// gpus (current), hit (optional, false), transition (a duration: "10m") and either throughput, a
// list of {gpus, tflops_per_gpu} with distinct GPU counts, or model, a mapping {file, gpu,
// hardware, global_batch, micro_batch, precision, sizes} (sizes a list of counts or
// {from, to, step}); the current size among the sizes (or 0). A model job's points stay empty
// here. InvalidArgument "SOURCE:LINE: FIELD: PROBLEM" (FIELD a dotted path such as
// jobs[2].throughput[0].gpus) for anything missing or malformed, or a job with both curves.
Result<std::vector<JobCurve>> ParseJobs(std::string_view text, std::string_view source);
// ParseJobs of the file, with the model jobs' relative paths made relative to its directory.
Result<std::vector<JobCurve>> ReadJobs(const std::string& path);

// Fills the points of every job that names a model: at each of its sizes, the tflops_per_gpu of
// the best layout SearchLayouts finds (each model, profile and size searched once however many
// jobs share it); sizes where no layout is valid or fits go to `left_out`. InvalidArgument naming
// the job's file, line and field when its model or hardware cannot be read, when no size fits, or
// when its current size is one of those left out.
Status CurvesFromModels(std::vector<JobCurve>& jobs);

struct JobPlan {
  std::string name;
  int64_t gpus = 0;  // the planned size; 0: paused until GPUs come back
  int64_t current_gpus = 0;
  bool restarts = false;  // pays its transition cost
  double value = 0;       // weight x TFLOP/s x productive seconds within the horizon
};

struct ReconfigurePlan {
  std::vector<JobPlan> jobs;  // in the order of the input
  int64_t gpus_used = 0;
  double value = 0;  // sum of the jobs' values (weighted TFLOP over the horizon)
};

// The value of running `job` on `gpus` GPUs for `horizon_s` seconds (see the file comment).
double PlanValue(const JobCurve& job, int64_t gpus, double horizon_s);

// The plan of the greatest value that uses at most `healthy_gpus`. Ties go to the plan found
// first (fewer GPUs for earlier jobs). InvalidArgument for no jobs, healthy_gpus < 0, a
// horizon that is not positive, or a problem too large to solve exactly (above 5e7 jobs x GPU
// units or 2e9 steps, the unit being the greatest common divisor of every allowed size).
Result<ReconfigurePlan> PlanReconfiguration(std::span<const JobCurve> jobs, int64_t healthy_gpus,
                                            double horizon_s);

// The naive plan to compare with: jobs not hit keep their size; then, in the input's order, each
// hit job restarts at its old size where that many GPUs are still free, and waits (0 GPUs)
// otherwise. A job at 0 GPUs stays paused.
ReconfigurePlan RestartAtOldSize(std::span<const JobCurve> jobs, int64_t healthy_gpus,
                                 double horizon_s);

// `vigil plan reconfigure`'s question: the jobs file, the healthy GPUs, and the expected time to
// the next failure, given or from the MTTF model (reliability/models.h) of the healthy nodes.
struct ReconfigureQuestion {
  std::string jobs_path;
  int64_t healthy_gpus = 0;
  double mttf_s = 0;  // the horizon; 0: MTTF(N) of healthy_gpus / gpus_per_node nodes
  int gpus_per_node = 8;
  double failures_per_1000_node_days = 6.5;  // Meta RSC's rate (docs/reliability.md)
};

struct ReconfigureAnswer {
  std::vector<JobCurve> jobs;
  double horizon_s = 0;
  bool horizon_from_mttf_model = false;
  ReconfigurePlan plan;   // PlanReconfiguration's
  ReconfigurePlan naive;  // RestartAtOldSize's
  double curves_s = 0;    // wall time spent searching layouts for the model jobs' curves
};

// Reads the jobs, computes the model jobs' curves, finds the horizon and both plans. ReadJobs',
// CurvesFromModels', JobMttfSeconds' or PlanReconfiguration's error.
Result<ReconfigureAnswer> AnswerReconfigure(const ReconfigureQuestion& question);

}  // namespace vigil::plan
