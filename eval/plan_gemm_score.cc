// Scores the step model's one GEMM function (vigil::plan::GemmEfficiency) against BF16 matrix
// products timed on a real GPU at the shapes of the published tables (perf/plan/gemm_shapes.py):
// for each table row and pass (forward, data gradient, weight gradient), the predicted and the
// measured time of one transformer block's six products and of the output layer. The profile is
// the GPU's datasheet row, or with RESULTS (a `vigil run` results document of the same GPU) what
// Vigil measured on it. The function is scored as it stands; nothing is fitted here.
//
// Usage: plan_gemm_score SHAPES.json GPU [RESULTS...]. Exits 2 on a file that cannot be read,
// naming the file and the entry and field at fault.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/file.h"
#include "vigil/core/json.h"
#include "vigil/core/stats.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/profile.h"
#include "vigil/plan/train.h"

namespace {

using vigil::Json;
using vigil::plan::HardwareProfile;

[[noreturn]] void Fail(const std::string& message) {
  fmt::print(stderr, "plan_gemm_score: {}\n", message);
  std::exit(2);
}

// One timed product: C[m x n] = A[m x k] B[k x n], `batch` times, in `seconds` a call, of a row
// whose step model prices attention as `attention` ("flash" or "unfused").
struct Shape {
  std::string source, attention, gemm, pass;
  double m = 0, n = 0, k = 0, batch = 0, seconds = 0;
};

// entry[key] as a number in [lo, hi], or exit 2 naming where and the field.
double Number(const Json& entry, const char* key, const std::string& where, double lo, double hi) {
  const auto it = entry.find(key);
  if (it == entry.end() || !it->is_number() || !(it->get<double>() >= lo) ||
      !(it->get<double>() <= hi)) {
    Fail(fmt::format("{}: field '{}' must be a number from {:g} to {:g}", where, key, lo, hi));
  }
  return it->get<double>();
}

// entry[key] as one of `names`, or exit 2 naming where and the field.
std::string OneOf(const Json& entry, const char* key, const std::string& where,
                  std::initializer_list<std::string_view> names) {
  const auto it = entry.find(key);
  if (it != entry.end() && it->is_string() &&
      std::find(names.begin(), names.end(), it->get<std::string>()) != names.end()) {
    return it->get<std::string>();
  }
  Fail(fmt::format("{}: field '{}' must be one of {}", where, key, fmt::join(names, ", ")));
}

std::vector<Shape> ReadShapes(const std::string& path, double* reference_tflops) {
  const vigil::Result<std::string> text = vigil::ReadFile(path);
  if (!text.ok()) Fail(std::string(text.status().message()));
  vigil::Result<Json> doc = vigil::ParseJson(*text, path);
  if (!doc.ok()) Fail(std::string(doc.status().message()));
  if (!doc->is_object()) Fail(fmt::format("{}: not a JSON object", path));
  const auto reference = doc->find("reference_tflops");
  if (reference == doc->end() || !reference->is_array() || reference->empty()) {
    Fail(fmt::format("{}: field 'reference_tflops' must be a non-empty list", path));
  }
  for (size_t i = 0; i < reference->size(); ++i) {
    const Json& r = (*reference)[i];
    if (!r.is_number() || !(r.get<double>() > 0) || !(r.get<double>() <= 1e5)) {
      Fail(fmt::format("{}: reference_tflops[{}] must be a number above 0, at most 1e5", path, i));
    }
  }
  *reference_tflops = reference->front().get<double>();
  const auto shapes = doc->find("shapes");
  if (shapes == doc->end() || !shapes->is_array() || shapes->empty()) {
    Fail(fmt::format("{}: field 'shapes' must be a non-empty list", path));
  }
  // Sizes up to ten million and times from a nanosecond to a day keep every product and ratio
  // finite.
  constexpr double kMaxSize = 1e7;
  std::vector<Shape> out;
  for (size_t i = 0; i < shapes->size(); ++i) {
    const Json& e = (*shapes)[i];
    const std::string where = fmt::format("{}: shapes[{}]", path, i);
    if (!e.is_object()) Fail(where + ": not an object");
    const auto source = e.find("source");
    if (source == e.end() || !source->is_string() || source->get<std::string>().empty()) {
      Fail(fmt::format("{}: field 'source' must be a non-empty string", where));
    }
    out.push_back({source->get<std::string>(), OneOf(e, "attention", where, {"flash", "unfused"}),
                   OneOf(e, "gemm", where,
                         {"qkv", "scores", "values", "proj", "mlp_up", "mlp_down", "logits"}),
                   OneOf(e, "pass", where, {"fwd", "dgrad", "wgrad"}),
                   Number(e, "m", where, 1, kMaxSize), Number(e, "n", where, 1, kMaxSize),
                   Number(e, "k", where, 1, kMaxSize), Number(e, "batch", where, 1, kMaxSize),
                   Number(e, "seconds", where, 1e-9, 86400)});
  }
  return out;
}

// The seconds the step model prices one call of `s` at (BlockCostOf's unfused products).
double PredictedSeconds(const Shape& s, const HardwareProfile& hw) {
  const auto bf16 = vigil::plan::Precision::kBf16;
  const double flops = 2 * s.m * s.n * s.k * s.batch;
  return flops / (vigil::plan::PeakOf(hw, bf16) * 1e12 *
                  vigil::plan::GemmEfficiency(s.m, s.n, s.k, hw, bf16));
}

struct Sum {
  double predicted = 0, measured = 0;
  double Ratio() const { return predicted / measured; }
};

// The step model's share of its large-GEMM rate that `s` reaches: below 1 by the time it prices
// for moving the operands through HBM.
double ComputeShare(const Shape& s, const HardwareProfile& hw) {
  const auto bf16 = vigil::plan::Precision::kBf16;
  return vigil::plan::GemmEfficiency(s.m, s.n, s.k, hw, bf16) / hw.bf16_efficiency;
}

// Whether the step model prices `s` with GemmEfficiency: not attention's products in a row
// whose attention is FlashAttention (FlashSeconds prices those).
bool Priced(const Shape& s) {
  return s.attention != "flash" || (s.gemm != "scores" && s.gemm != "values");
}

int Score(const std::vector<Shape>& shapes, double reference_tflops, const HardwareProfile& hw) {
  const double large_flops = 2 * 8192.0 * 8192 * 8192;
  const Shape large{"", "", "", "", 8192, 8192, 8192, 1, large_flops / (reference_tflops * 1e12)};
  // What the shape function alone gets wrong is each product's ratio over that of the products
  // it prices as at least as compute-bound as 8192^3, timed in the same run and conditions: the
  // 8192^3 product itself, timed after seconds of load, runs at lower clocks than short batches
  // of products between pauses (docs/benchmarks.md).
  std::vector<double> compute_bound;
  for (const Shape& s : shapes) {
    if (Priced(s) && ComputeShare(s, hw) >= ComputeShare(large, hw)) {
      compute_bound.push_back(PredictedSeconds(s, hw) / s.seconds);
    }
  }
  if (compute_bound.empty()) Fail("no product priced as compute-bound as 8192^3 was measured");
  const double large_ratio = vigil::stats::Median(compute_bound);
  fmt::print("Profile: {} ({})\n", hw.gpu, hw.source);
  fmt::print(
      "8192^3 after seconds of load: predicted {:.1f} TFLOP/s, measured {:.1f} (time ratio "
      "{:.3f}); {} products priced as at least as compute-bound: median time ratio {:.3f}. Below, "
      "'ratio' "
      "is predicted / measured time (below 1: the model is optimistic); 'shape' is that ratio "
      "over the compute-bound products' median, what the shape function alone gets wrong.\n\n",
      large_flops / PredictedSeconds(large, hw) / 1e12, reference_tflops,
      PredictedSeconds(large, hw) / large.seconds, compute_bound.size(), large_ratio);
  // By row, in file order, then pass: the block's six products, and the output layer.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, Sum>> block, logits;
  std::map<std::string, std::vector<double>> by_gemm;  // "gemm pass" -> shape ratios
  int flash = 0;
  for (const Shape& s : shapes) {
    if (!Priced(s)) {
      ++flash;
      continue;
    }
    if (std::find(order.begin(), order.end(), s.source) == order.end()) order.push_back(s.source);
    Sum& sum = (s.gemm == "logits" ? logits : block)[s.source][s.pass];
    const double predicted = PredictedSeconds(s, hw);
    sum.predicted += predicted;
    sum.measured += s.seconds;
    by_gemm[s.gemm + " " + s.pass].push_back(predicted / s.seconds / large_ratio);
  }
  fmt::print("{:<42} {:>6} {:>12} {:>12} {:>6} {:>6} {:>13}\n", "row", "pass", "block pred ms",
             "measured ms", "ratio", "shape", "logits shape");
  for (const std::string& source : order) {
    for (const char* pass : {"fwd", "dgrad", "wgrad"}) {
      const Sum& b = block[source][pass];
      const Sum& o = logits[source][pass];
      if (b.measured == 0) continue;
      fmt::print("{:<42} {:>6} {:>12.3f} {:>12.3f} {:>6.3f} {:>6.3f} {:>13}\n", source, pass,
                 1e3 * b.predicted, 1e3 * b.measured, b.Ratio(), b.Ratio() / large_ratio,
                 o.measured > 0 ? fmt::format("{:.3f}", o.Ratio() / large_ratio) : "-");
    }
  }
  fmt::print(
      "\nShape ratio by product and pass over all rows: median (least, greatest); {} products "
      "left out: attention's in rows priced with FlashAttention\n",
      flash);
  for (auto& [name, ratios] : by_gemm) {
    std::sort(ratios.begin(), ratios.end());
    fmt::print("{:<16} {:>6.3f} ({:.3f}, {:.3f}) over {}\n", name, vigil::stats::Median(ratios),
               ratios.front(), ratios.back(), ratios.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr,
               "usage: plan_gemm_score SHAPES.json GPU [RESULTS...] (perf/plan/gemm_shapes.py's "
               "output; h100, h200, ...; `vigil run` results of the same GPU)\n");
    return 2;
  }
  double reference_tflops = 0;
  const std::vector<Shape> shapes = ReadShapes(argv[1], &reference_tflops);
  vigil::Result<HardwareProfile> hw =
      vigil::plan::ProfileFor(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  if (!hw.ok()) Fail(std::string(hw.status().message()));
  return Score(shapes, reference_tflops, *hw);
}
