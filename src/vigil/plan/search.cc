#include "vigil/plan/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "vigil/plan/units.h"

namespace vigil::plan {
namespace {

constexpr int64_t kMaxVirtualStages = 8;
constexpr int64_t kMaxContextParallel = 8;
constexpr int64_t kMicroBatches[] = {1, 2, 4, 8};
constexpr Recompute kRecomputes[] = {Recompute::kNone, Recompute::kSelective, Recompute::kFull};
constexpr int kMaxZero = 3;

std::vector<int64_t> Divisors(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// The best `top` candidates seen, best first, and what the rest of the search counts.
class Ranking {
 public:
  explicit Ranking(size_t top) : top_(top) {}

  void Offer(Candidate&& c) {
    const double rate = c.prediction.tokens_per_s;
    if (best_.size() == top_ && rate <= best_.back().prediction.tokens_per_s) return;
    const auto at = std::ranges::upper_bound(best_, rate, std::greater<>(), [](const Candidate& x) {
      return x.prediction.tokens_per_s;
    });
    best_.insert(at, std::move(c));
    if (best_.size() > top_) best_.pop_back();
  }

  std::vector<Candidate> Take() { return std::move(best_); }

 private:
  size_t top_;
  std::vector<Candidate> best_;
};

struct Search {
  const SearchRequest& request;
  const TrainAssumptions& assumptions;
  HardwareProfile first, second;  // with the memory limit applied
  Ranking ranking;
  SearchResult result;
  double least_memory = std::numeric_limits<double>::infinity();
  // Expert-parallel degrees: computed once, not in the innermost loops.
  std::vector<int64_t> expert_degrees = Divisors(request.model.experts, request.model.experts);

  void Consider(Candidate&& c) {
    ++result.layouts;
    least_memory = std::min(least_memory, c.prediction.memory.Total());
    if (!c.prediction.fits) return;
    ++result.fitting;
    ranking.Offer(std::move(c));
  }

  void Homogeneous(const Layout& l) {
    Candidate c{l, PredictTrain(request.model, l, first, assumptions), {}, {}, std::nullopt};
    Consider(std::move(c));
  }

  // A whole number of stages on the second type, the blocks balanced by speed (AMP).
  void Mixed(const Layout& l) {
    const int64_t width = l.tp * l.cp * l.dp;
    if (l.vpp != 1 || request.second_gpus % width != 0) return;
    const int64_t stages_second = request.second_gpus / width;
    if (stages_second <= 0 || stages_second >= l.pp) return;
    auto [f, s] = BalanceStages(request.model, l, first, second, stages_second, assumptions);
    if (f.layers == 0) return;
    Candidate c{l, PredictMixed(request.model, l, f, s, assumptions), f, s, std::nullopt};
    StageGroup even_f = f, even_s = s;
    even_f.layers = even_s.layers = request.model.layers / l.pp;
    c.even = PredictMixed(request.model, l, even_f, even_s, assumptions);
    Consider(std::move(c));
  }

  void Each(Layout l) {
    const ModelSpec& m = request.model;
    const std::vector<int64_t> sizes =
        request.micro_batch > 0
            ? std::vector<int64_t>{request.micro_batch}
            : std::vector<int64_t>(std::begin(kMicroBatches), std::end(kMicroBatches));
    for (const int64_t mb : sizes) {
      if (request.global_batch % (l.dp * mb) != 0) continue;
      l.micro_batch = mb;
      const int64_t micro_batches = request.global_batch / (l.dp * mb);
      for (const int64_t vpp : Divisors(m.layers / l.pp, kMaxVirtualStages)) {
        if (vpp > 1 && (l.pp == 1 || micro_batches % l.pp != 0)) continue;
        l.vpp = vpp;
        for (const int64_t ep : expert_degrees) {
          if (l.dp % ep != 0) continue;
          l.ep = ep;
          for (const Recompute r : kRecomputes) {
            l.recompute = r;
            for (int zero = 0; zero <= kMaxZero; ++zero) {
              l.zero = zero;
              if (request.second) {
                Mixed(l);
              } else {
                Homogeneous(l);
              }
            }
          }
        }
      }
    }
  }

  void Run() {
    const ModelSpec& m = request.model;
    Layout l;
    l.gpus = request.gpus;
    l.global_batch = request.global_batch;
    l.precision = request.precision;
    l.attention = request.attention;
    l.sequence_parallel = request.sequence_parallel;
    for (const int64_t tp : Divisors(m.heads, first.gpus_per_node)) {
      if (m.kv_heads % tp != 0 && tp % m.kv_heads != 0) continue;
      for (int64_t cp = 1; cp <= kMaxContextParallel; cp *= 2) {
        if (cp > 1 && m.seq_len % (2 * cp) != 0) continue;
        for (const int64_t pp : Divisors(m.layers, m.layers)) {
          if (request.gpus % (tp * cp * pp) != 0) continue;
          l.tp = tp;
          l.cp = cp;
          l.pp = pp;
          l.dp = request.gpus / (tp * cp * pp);
          Each(l);
        }
      }
    }
  }
};

Status CheckRequest(const SearchRequest& r) {
  if (r.gpus < 1 || r.global_batch < 1 || r.top < 1 || r.memory_limit_gb < 0 || r.micro_batch < 0) {
    return Status::InvalidArgument("the GPUs, global batch and layouts to show must be at least 1");
  }
  if (r.precision == Precision::kFp8 &&
      (r.hw.fp8_tflops <= 0 || (r.second && r.second->fp8_tflops <= 0))) {
    return Status::InvalidArgument("fp8: a GPU of the cluster has no FP8 tensor cores");
  }
  if (r.second && (r.second_gpus < 1 || r.second_gpus >= r.gpus)) {
    return Status::InvalidArgument(
        fmt::format("the second GPU type's count ({}) must be at least 1 and below all GPUs ({})",
                    r.second_gpus, r.gpus));
  }
  return Status::Ok();
}

}  // namespace

std::pair<StageGroup, StageGroup> BalanceStages(const ModelSpec& m, const Layout& l,
                                                const HardwareProfile& first,
                                                const HardwareProfile& second,
                                                int64_t stages_second, const TrainAssumptions& a) {
  const int64_t stages_first = l.pp - stages_second;
  StageGroup f{first, stages_first, 0}, s{second, stages_second, 0};
  // A stage's time is linear in its blocks: two points give it.
  const double f1 = StageSeconds(m, l, first, 1, a), s1 = StageSeconds(m, l, second, 1, a);
  const double f_slope = StageSeconds(m, l, first, 2, a) - f1;
  const double s_slope = StageSeconds(m, l, second, 2, a) - s1;
  double best = std::numeric_limits<double>::infinity();
  for (int64_t lf = 1; lf * stages_first < m.layers; ++lf) {
    const int64_t rest = m.layers - lf * stages_first;
    if (rest % stages_second != 0) continue;
    const int64_t ls = rest / stages_second;
    const double slowest = std::max(f1 + f_slope * D(lf - 1), s1 + s_slope * D(ls - 1));
    if (slowest < best) best = slowest, f.layers = lf, s.layers = ls;
  }
  return {f, s};
}

Result<SearchResult> SearchLayouts(const SearchRequest& request, const TrainAssumptions& a) {
  VIGIL_RETURN_IF_ERROR(CheckRequest(request));
  Search search{request, a, request.hw, request.second.value_or(request.hw), Ranking(request.top),
                {}};
  if (request.memory_limit_gb > 0) {
    search.first.memory_gb = std::min(search.first.memory_gb, request.memory_limit_gb);
    search.second.memory_gb = std::min(search.second.memory_gb, request.memory_limit_gb);
  }
  search.Run();
  if (search.result.layouts == 0) {
    return Status::InvalidArgument(fmt::format(
        "no valid layout of the model on {} GPUs with a global batch of {}: TP must divide the "
        "heads ({}), PP the layers ({}), TP x PP x CP the GPUs and DP x micro-batch the batch{}",
        request.gpus, request.global_batch, request.model.heads, request.model.layers,
        request.second ? ", and whole stages must fill the second type's GPUs" : ""));
  }
  if (search.result.fitting == 0) {
    return Status::InvalidArgument(fmt::format(
        "the model fits nowhere: no layout of it on {} GPUs fits in {} GB per GPU (the least "
        "memory any of the {} layouts needs is {:.1f} GB)",
        request.gpus, search.first.memory_gb, search.result.layouts, search.least_memory / kGiga));
  }
  search.result.best = search.ranking.Take();
  return search.result;
}

}  // namespace vigil::plan
