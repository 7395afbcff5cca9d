// The throughput curves of `vigil plan reconfigure` from the training step model: a job that
// names a model instead of points gets, at each size it may run on, what the best layout of
// `vigil plan search` achieves there (docs/plan.md, "Curves from the model").
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "vigil/plan/profile.h"
#include "vigil/plan/reconfigure.h"
#include "vigil/plan/search.h"

namespace vigil::plan {
namespace {

// What a search depends on apart from the GPU count: jobs with equal keys share their searches.
using SearchKey = std::tuple<std::string, std::string, std::vector<std::string>, int64_t, int64_t,
                             std::string, int64_t>;

class CurveSearch {
 public:
  // Fills `job`'s points from its model.
  Status Fill(JobCurve& job) {
    const CurveModel& m = *job.model;
    const auto at = [&](std::string_view field, const Status& s) {
      return Status::InvalidArgument(fmt::format("{}.{}: {}", m.where, field, s.message()));
    };
    SearchRequest r;
    Result<ModelSpec> spec = ReadModelSpec(m.model_path);
    if (!spec.ok()) return at("file", spec.status());
    r.model = *std::move(spec);
    Result<HardwareProfile> hw = ProfileFor(m.gpu, m.hardware);
    if (!hw.ok()) return at(m.hardware.empty() ? "gpu" : "hardware", hw.status());
    r.hw = *std::move(hw);
    VIGIL_ASSIGN_OR_RETURN(r.precision, ParsePrecision(m.precision));
    r.global_batch = m.global_batch;
    r.micro_batch = m.micro_batch;
    r.top = 1;
    std::string why;  // the first reason a size was left out
    for (const int64_t g : m.sizes) {
      const Result<double> tflops = TflopsAt(m, r, g);
      if (tflops.ok()) {
        job.points.push_back({g, *tflops});
        continue;
      }
      job.left_out.push_back(g);
      if (why.empty()) why = tflops.status().message();
    }
    if (job.points.empty()) {
      return Status::InvalidArgument(
          fmt::format("{}.sizes: job '{}' fits at none of its {} sizes ({})", m.where, job.name,
                      m.sizes.size(), why));
    }
    if (std::ranges::count(job.left_out, job.current_gpus)) {
      return Status::InvalidArgument(
          fmt::format("{}: job '{}' runs on {} GPUs now, where no layout of its model fits ({})",
                      m.where, job.name, job.current_gpus, why));
    }
    return Status::Ok();
  }

 private:
  // The best layout's TFLOP/s per GPU at `gpus`, searched once per key.
  Result<double> TflopsAt(const CurveModel& m, SearchRequest& r, int64_t gpus) {
    const SearchKey key{m.model_path,  m.gpu,       m.hardware, m.global_batch,
                        m.micro_batch, m.precision, gpus};
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      r.gpus = gpus;
      Result<SearchResult> found = SearchLayouts(r);
      it = cache_
               .emplace(key, found.ok()
                                 ? Result<double>(found->best.front().prediction.tflops_per_gpu)
                                 : Result<double>(found.status()))
               .first;
    }
    return it->second;
  }

  std::map<SearchKey, Result<double>> cache_;
};

}  // namespace

Status CurvesFromModels(std::vector<JobCurve>& jobs) {
  CurveSearch search;
  for (JobCurve& job : jobs) {
    if (job.model) VIGIL_RETURN_IF_ERROR(search.Fill(job));
  }
  return Status::Ok();
}

}  // namespace vigil::plan
