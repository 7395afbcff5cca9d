#include "vigil/plan/inference_fit.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "vigil/core/csv.h"
#include "vigil/core/file.h"
#include "vigil/core/lines.h"
#include "vigil/core/text.h"
#include "vigil/plan/profile.h"

namespace vigil::plan {
namespace {

// Far above any context served (2^24 = 16.7M tokens), far below where a double loses whole numbers.
constexpr int64_t kMaxTokens = int64_t{1} << 24;
// A year: far above any one request.
constexpr double kMaxLatencyS = 365 * 86400.0;

constexpr std::array<std::string_view, 3> kColumns = {"prompt_tokens", "output_tokens",
                                                      "latency_s"};

// The whole of `text` as a number, or false.
bool ParseDouble(std::string_view text, double* out) {
  text = Trim(text);
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

Result<LatencySample> ParseRow(const std::vector<std::string_view>& f, std::string_view source,
                               int64_t line) {
  auto bad = [&](std::string_view field, std::string_view what) {
    return Status::InvalidArgument(fmt::format("{}:{}: {}: {}", source, line, field, what));
  };
  LatencySample s;
  for (size_t i = 0; i < 2; ++i) {
    double v = 0;
    if (!ParseDouble(f[i], &v) || v != std::floor(v) || v < 1 ||
        v > static_cast<double>(kMaxTokens)) {
      return bad(kColumns[i], fmt::format("{} is not a whole number of tokens from 1 to {}",
                                          Quote(f[i]), kMaxTokens));
    }
    (i == 0 ? s.prompt_tokens : s.output_tokens) = static_cast<int64_t>(v);
  }
  if (!ParseDouble(f[2], &s.latency_s) || !std::isfinite(s.latency_s) || s.latency_s <= 0 ||
      s.latency_s > kMaxLatencyS) {
    return bad(kColumns[2], fmt::format("{} is not a positive number of seconds up to {:g}",
                                        Quote(f[2]), kMaxLatencyS));
  }
  return s;
}

}  // namespace

Result<std::vector<LatencySample>> ParseLatencies(std::string_view text, std::string_view source) {
  LineReader lines(text);
  std::string_view header;
  if (!lines.Next(header)) {
    return Status::InvalidArgument(fmt::format("{}:1: header: empty file", source));
  }
  VIGIL_ASSIGN_OR_RETURN(const CsvColumns columns,
                         CsvColumns::Parse(header, kColumns, kColumns.size(), source));
  std::vector<LatencySample> out;
  std::vector<std::string_view> fields;
  std::string_view line;
  while (lines.Next(line)) {
    if (Trim(line).empty()) continue;
    VIGIL_RETURN_IF_ERROR(columns.Split(line, lines.line_no(), &fields));
    VIGIL_ASSIGN_OR_RETURN(LatencySample s, ParseRow(fields, source, lines.line_no()));
    out.push_back(s);
  }
  return out;
}

Result<std::vector<LatencySample>> ReadLatencies(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return ParseLatencies(text, path);
}

Result<LatencyFit> FitLatencies(std::span<const LatencySample> samples) {
  const auto differ = [&](int64_t LatencySample::*field) {
    return std::ranges::any_of(
        samples, [&](const LatencySample& s) { return s.*field != samples.front().*field; });
  };
  if (samples.empty() || !differ(&LatencySample::output_tokens)) {
    return Status::InvalidArgument(
        "the latencies cannot determine the per-token time b: they need at least two different "
        "output lengths");
  }
  LatencyFit fit;
  fit.prompt_slope_fitted = differ(&LatencySample::prompt_tokens);
  const Eigen::Index n = static_cast<Eigen::Index>(samples.size());
  const Eigen::Index k = fit.prompt_slope_fitted ? 3 : 2;
  if (n < k) {
    return Status::InvalidArgument(
        fmt::format("the latencies hold {} samples, fewer than the {} parameters to fit", n, k));
  }
  // Columns: 1, o - 1, and p when prompt lengths vary.
  Eigen::MatrixXd design(n, k);
  Eigen::VectorXd latency(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const LatencySample& s = samples[static_cast<size_t>(i)];
    design(i, 0) = 1;
    design(i, 1) = static_cast<double>(s.output_tokens - 1);
    if (k == 3) design(i, 2) = static_cast<double>(s.prompt_tokens);
    latency(i) = s.latency_s;
  }
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(design);
  if (qr.rank() < k) {
    return Status::InvalidArgument(
        "the latencies cannot separate prompt and output lengths (they vary together)");
  }
  const Eigen::VectorXd x = qr.solve(latency);
  fit.prefill_base_s = x(0);
  fit.per_token_s = x(1);
  fit.prefill_per_token_s = k == 3 ? x(2) : 0;
  fit.rms_residual_s = std::sqrt((design * x - latency).squaredNorm() / static_cast<double>(n));
  fit.samples = n;
  return fit;
}

Result<InferAnswer> AnswerInference(const std::string& model_path, std::string_view gpu,
                                    const std::vector<std::string>& hardware,
                                    const InferRequest& request,
                                    const std::string& latencies_path) {
  InferAnswer a;
  VIGIL_ASSIGN_OR_RETURN(a.model, ReadModelSpec(model_path));
  VIGIL_ASSIGN_OR_RETURN(a.hardware, ProfileFor(gpu, hardware));
  VIGIL_ASSIGN_OR_RETURN(a.estimate, EstimateInference(a.model, a.hardware, request));
  if (!latencies_path.empty()) {
    VIGIL_ASSIGN_OR_RETURN(const std::vector<LatencySample> samples, ReadLatencies(latencies_path));
    VIGIL_ASSIGN_OR_RETURN(a.fit, FitLatencies(samples));
    a.fitted = true;
  }
  return a;
}

}  // namespace vigil::plan
