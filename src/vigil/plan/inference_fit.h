// The idealized runtime of LLM inference, T = a_p + b (o - 1), fitted to measured request
// latencies: a_p the time to the first token of a prompt of p tokens (prefill), b the time of
// each further output token. Prefill grows about linearly with p at the lengths served, so
// a_p = a_0 + a_1 p; with one prompt length among the samples only a_p itself can be fitted.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vigil/core/status.h"
#include "vigil/plan/hardware.h"
#include "vigil/plan/inference.h"
#include "vigil/plan/model_spec.h"

namespace vigil::plan {

// One measured request: the `--latencies` file's row.
struct LatencySample {
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  double latency_s = 0;  // from sending the request to its last token
};

// The rows of a CSV with the header columns prompt_tokens, output_tokens and latency_s (any
// order; blank lines skipped). InvalidArgument "SOURCE:LINE: FIELD: PROBLEM" for a missing or
// unknown column, a field that is not a number, a count below 1 or above 2^24 tokens, or a
// latency that is not a positive finite number of seconds.
Result<std::vector<LatencySample>> ParseLatencies(std::string_view text, std::string_view source);

// ParseLatencies of the file at `path` (its errors name the path).
Result<std::vector<LatencySample>> ReadLatencies(const std::string& path);

struct LatencyFit {
  double prefill_base_s = 0;       // a_0
  double prefill_per_token_s = 0;  // a_1; 0 when every sample has the same prompt length
  bool prompt_slope_fitted = false;
  double per_token_s = 0;     // b
  double rms_residual_s = 0;  // root mean square of measured - fitted latency
  int64_t samples = 0;

  double PrefillSeconds(int64_t prompt_tokens) const {
    return prefill_base_s + prefill_per_token_s * static_cast<double>(prompt_tokens);
  }
  double LatencySeconds(int64_t prompt_tokens, int64_t output_tokens) const {
    return PrefillSeconds(prompt_tokens) + per_token_s * static_cast<double>(output_tokens - 1);
  }
};

// The least-squares fit of T = a_0 + a_1 p + b (o - 1) to `samples` (a_1 left out when every
// prompt length is the same). InvalidArgument when the samples cannot determine the parameters:
// fewer samples than parameters, or every output length the same.
Result<LatencyFit> FitLatencies(std::span<const LatencySample> samples);

// `vigil plan infer`'s answer: the roofline, and the fit when latencies were given.
struct InferAnswer {
  ModelSpec model;
  HardwareProfile hardware;
  InferEstimate estimate;
  bool fitted = false;
  LatencyFit fit;  // when fitted
};

// Reads the model file, takes the profile of `gpu` with what the `hardware` files measured over
// its datasheet row (ProfileFor), estimates `request` and, when `latencies_path` is not empty,
// fits its latencies. The first error of ReadModelSpec, ProfileFor, EstimateInference,
// ReadLatencies or FitLatencies.
Result<InferAnswer> AnswerInference(const std::string& model_path, std::string_view gpu,
                                    const std::vector<std::string>& hardware,
                                    const InferRequest& request, const std::string& latencies_path);

}  // namespace vigil::plan
