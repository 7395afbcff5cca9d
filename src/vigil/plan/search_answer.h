// `vigil plan search` between its flags and its printing: the model file and the profiles read,
// the search run, and its JSON and text (docs/plan.md, "Strategy search").
#pragma once

#include <string>
#include <vector>

#include "vigil/core/json.h"
#include "vigil/core/status.h"
#include "vigil/plan/search.h"

namespace vigil::plan {

struct SearchFlags {
  std::string model_path;
  std::string gpu = "h100";
  std::vector<std::string> hardware;  // measured results over the datasheet; empty: none
  int64_t gpus = 0;
  int64_t global_batch = 0;
  double memory_gb = 0;  // per GPU; 0: the GPUs' own
  std::string precision = "bf16";
  std::string attention = "flash";
  bool sequence_parallel = true;
  std::string second_gpu;   // a second GPU type's datasheet row; empty: one type
  int64_t second_gpus = 0;  // GPUs of the second type
  double second_speed = 1;  // its GEMM and HBM rates scaled by this (a degraded node)
  size_t top = 10;
};

struct SearchAnswer {
  SearchRequest request;
  SearchResult result;
  double seconds = 0;  // the search's own wall time
};

// Reads the model and profiles and runs SearchLayouts. InvalidArgument for bad files, an unknown
// GPU, a second type without its count (or the reverse), or when no layout is valid or fits.
Result<SearchAnswer> AnswerSearch(const SearchFlags& flags);

// {"layouts": N, "fitting": N, "search_s": s, "best": [{"layout", "step_time_s", "tokens_per_s",
// "tflops_per_gpu", "mfu", "memory_gib_per_gpu", and on a mixed cluster "placement"}, ...]}.
Json SearchJson(const SearchAnswer& answer);

// The ranking as a table, best first.
std::string SearchText(const SearchAnswer& answer);

}  // namespace vigil::plan
