// Scores `vigil plan infer`'s roofline against published inference measurements
// (eval/data/plan/inference_published.csv, sources in docs/plan.md): per row the predicted and the
// published figure and their ratio, with the default efficiency assumptions of
// plan/inference.h, the same for every row (docs/benchmarks.md).
//
//   plan_infer_published eval/data/plan
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "vigil/core/csv.h"
#include "vigil/core/file.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"
#include "vigil/plan/inference.h"

namespace {

using vigil::Result;
using vigil::Status;

constexpr std::array<std::string_view, 10> kColumns = {"source",    "model",    "gpu",    "gpus",
                                                       "precision", "batch",    "prompt", "output",
                                                       "metric",    "published"};

int64_t Whole(std::string_view s) {
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The figure of `metric` that the estimate predicts; NaN for a metric it does not know.
double Predicted(const vigil::plan::InferEstimate& e, std::string_view metric) {
  if (metric == "prefill_s") return e.prefill.seconds;
  if (metric == "decode_s_per_token") return e.decode.seconds;
  if (metric == "latency_s") return e.latency_s;
  if (metric == "output_tokens_per_s") return e.output_tokens_per_s;
  return std::nan("");
}

Result<double> ScoreRow(const std::vector<std::string_view>& f, const std::string& dir) {
  VIGIL_ASSIGN_OR_RETURN(const vigil::plan::ModelSpec model,
                         vigil::plan::ReadModelSpec(fmt::format("{}/{}.yaml", dir, f[1])));
  VIGIL_ASSIGN_OR_RETURN(const vigil::plan::HardwareProfile hw,
                         vigil::plan::DatasheetProfile(f[2]));
  vigil::plan::InferRequest r;
  r.gpus = Whole(f[3]);
  r.fp8 = f[4] == "fp8";
  r.batch = Whole(f[5]);
  r.prompt = Whole(f[6]);
  r.output = Whole(f[7]);
  VIGIL_ASSIGN_OR_RETURN(const vigil::plan::InferEstimate e,
                         vigil::plan::EstimateInference(model, hw, r));
  const double predicted = Predicted(e, f[8]);
  double published = 0;
  std::from_chars(f[9].data(), f[9].data() + f[9].size(), published);
  if (!std::isfinite(predicted) || !(published > 0)) {
    return Status::InvalidArgument(fmt::format("unknown metric or figure: {} {}", f[8], f[9]));
  }
  // Times: predicted / published; throughputs the inverse, so that < 1 always means the
  // roofline is faster than what was measured.
  const bool throughput = f[8] == "output_tokens_per_s";
  const double ratio = throughput ? published / predicted : predicted / published;
  fmt::print("| {} | {} | {} x{} {} | {} | {} / {} | {} | {:.4g} | {:.4g} | {:.2f} | {} |\n", f[0],
             f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], predicted, published, ratio,
             f[8] == "output_tokens_per_s" || f[8] == "latency_s"
                 ? e.decode.bound + " (decode)"
                 : (f[8] == "prefill_s" ? e.prefill.bound : e.decode.bound));
  return ratio;
}

Status Run(const std::string& dir) {
  const std::string path = dir + "/inference_published.csv";
  VIGIL_ASSIGN_OR_RETURN(const std::string text, vigil::ReadFile(path));
  vigil::LineReader lines(text);
  std::string_view line;
  lines.Next(line);
  VIGIL_ASSIGN_OR_RETURN(const vigil::CsvColumns columns,
                         vigil::CsvColumns::Parse(line, kColumns, kColumns.size(), path));
  fmt::print(
      "| source | model | GPUs | batch | prompt / output | metric | predicted | published | "
      "time ratio | bound |\n|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> errors;
  std::vector<std::string_view> f;
  while (lines.Next(line)) {
    if (vigil::Trim(line).empty()) continue;
    VIGIL_RETURN_IF_ERROR(columns.Split(line, lines.line_no(), &f));
    VIGIL_ASSIGN_OR_RETURN(const double ratio, ScoreRow(f, dir));
    errors.push_back(std::abs(ratio - 1));
  }
  std::ranges::sort(errors);
  const size_t within =
      static_cast<size_t>(std::ranges::count_if(errors, [](double e) { return e <= 0.25; }));
  fmt::print("\n{} rows; median |time ratio - 1| = {:.2f}, largest {:.2f}; {} of {} within 25%\n",
             errors.size(), errors[errors.size() / 2], errors.back(), within, errors.size());
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: plan_infer_published DIR (eval/data/plan)\n");
    return 2;
  }
  const Status s = Run(argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 2;
  }
  return 0;
}
