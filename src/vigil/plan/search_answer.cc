#include "vigil/plan/search_answer.h"

#include <fmt/format.h>

#include "vigil/core/clock.h"
#include "vigil/core/text_table.h"
#include "vigil/plan/profile.h"
#include "vigil/plan/train_answer.h"
#include "vigil/plan/units.h"

namespace vigil::plan {
namespace {

// "3 x 10 a100 + 5 x 12 h100": stages x blocks of each type.
std::string Placement(const Candidate& c) {
  return fmt::format("{} x {} {} + {} x {} {}", c.first.stages, c.first.layers, c.first.hw.gpu,
                     c.second.stages, c.second.layers, c.second.hw.gpu);
}

Result<std::optional<HardwareProfile>> SecondProfile(const SearchFlags& f) {
  if (f.second_gpu.empty() != (f.second_gpus == 0)) {
    return Status::InvalidArgument("--second-gpu and --second-gpus go together");
  }
  if (f.second_gpu.empty()) {
    if (f.second_speed != 1) return Status::InvalidArgument("--second-speed needs --second-gpu");
    return std::optional<HardwareProfile>();
  }
  if (!(f.second_speed > 0 && f.second_speed <= 1)) {
    return Status::InvalidArgument(
        fmt::format("--second-speed: {} is outside (0, 1]", f.second_speed));
  }
  VIGIL_ASSIGN_OR_RETURN(HardwareProfile hw, DatasheetProfile(f.second_gpu));
  hw.bf16_tflops *= f.second_speed;
  hw.fp8_tflops *= f.second_speed;
  hw.hbm_gbps *= f.second_speed;
  if (f.second_speed != 1) {
    hw.gpu += fmt::format("@{:g}", f.second_speed);
    hw.source += fmt::format(", GEMM and HBM at {:g} of it", f.second_speed);
  }
  return std::optional<HardwareProfile>(std::move(hw));
}

}  // namespace

Result<SearchAnswer> AnswerSearch(const SearchFlags& f) {
  SearchAnswer a;
  SearchRequest& r = a.request;
  VIGIL_ASSIGN_OR_RETURN(r.model, ReadModelSpec(f.model_path));
  VIGIL_ASSIGN_OR_RETURN(r.hw, ProfileFor(f.gpu, f.hardware));
  VIGIL_ASSIGN_OR_RETURN(r.precision, ParsePrecision(f.precision));
  VIGIL_ASSIGN_OR_RETURN(r.attention, ParseAttention(f.attention));
  VIGIL_ASSIGN_OR_RETURN(r.second, SecondProfile(f));
  r.sequence_parallel = f.sequence_parallel;
  r.gpus = f.gpus;
  r.global_batch = f.global_batch;
  r.memory_limit_gb = f.memory_gb;
  r.second_gpus = f.second_gpus;
  r.top = f.top;
  const double start = SystemClock().MonotonicSeconds();
  VIGIL_ASSIGN_OR_RETURN(a.result, SearchLayouts(r));
  a.seconds = SystemClock().MonotonicSeconds() - start;
  return a;
}

Json SearchJson(const SearchAnswer& a) {
  Json best = Json::array();
  for (const Candidate& c : a.result.best) {
    const TrainPrediction& p = c.prediction;
    Json row{{"layout", LayoutJson(c.layout)},
             {"step_time_s", p.step_time_s},
             {"tokens_per_s", p.tokens_per_s},
             {"tflops_per_gpu", p.tflops_per_gpu},
             {"mfu", p.mfu},
             {"memory_gib_per_gpu", p.memory.Total() / kGib},
             {"bubble_fraction", p.bubble_fraction}};
    if (c.even) {
      row["placement"] = {{"first",
                           {{"gpu", c.first.hw.gpu},
                            {"stages", c.first.stages},
                            {"layers_per_stage", c.first.layers}}},
                          {"second",
                           {{"gpu", c.second.hw.gpu},
                            {"stages", c.second.stages},
                            {"layers_per_stage", c.second.layers}}},
                          {"even_tokens_per_s", c.even->tokens_per_s},
                          {"even_fits", c.even->fits},
                          {"speedup_over_even", p.tokens_per_s / c.even->tokens_per_s}};
    }
    best.push_back(std::move(row));
  }
  return Json{{"layouts", a.result.layouts},
              {"fitting", a.result.fitting},
              {"search_s", a.seconds},
              {"profile", ProfileJson(a.request.hw)},
              {"best", std::move(best)}};
}

std::string SearchText(const SearchAnswer& a) {
  const SearchRequest& r = a.request;
  std::string out =
      fmt::format("{} valid layouts on {} GPUs ({}{}), {} fit; searched in {:.3f} s. Best {}:\n\n",
                  a.result.layouts, r.gpus, r.hw.gpu,
                  r.second ? fmt::format(" and {} {}", r.second_gpus, r.second->gpu) : "",
                  a.result.fitting, a.seconds, a.result.best.size());
  std::vector<std::string> header = {"#",      "TP",       "PP",          "VPP",       "DP",
                                     "CP",     "EP",       "mb",          "recompute", "ZeRO",
                                     "step s", "tokens/s", "TFLOP/s/GPU", "MFU",       "GiB/GPU"};
  if (r.second) {
    header.push_back("stages x blocks");
    header.push_back("vs even");
  }
  Table table(header);
  int rank = 0;
  for (const Candidate& c : a.result.best) {
    const Layout& l = c.layout;
    const TrainPrediction& p = c.prediction;
    std::vector<std::string> row = {fmt::format("{}", ++rank),
                                    fmt::format("{}", l.tp),
                                    fmt::format("{}", l.pp),
                                    fmt::format("{}", l.vpp),
                                    fmt::format("{}", l.dp),
                                    fmt::format("{}", l.cp),
                                    fmt::format("{}", l.ep),
                                    fmt::format("{}", l.micro_batch),
                                    std::string(RecomputeName(l.recompute)),
                                    fmt::format("{}", l.zero),
                                    fmt::format("{:.4g}", p.step_time_s),
                                    fmt::format("{:.4g}", p.tokens_per_s),
                                    fmt::format("{:.1f}", p.tflops_per_gpu),
                                    fmt::format("{:.1f}%", 100 * p.mfu),
                                    fmt::format("{:.1f}", p.memory.Total() / kGib)};
    if (c.even) {
      row.push_back(Placement(c));
      row.push_back(fmt::format("{:.2f}x", p.tokens_per_s / c.even->tokens_per_s));
    }
    table.Add(std::move(row));
  }
  return out + table.ToString();
}

}  // namespace vigil::plan
