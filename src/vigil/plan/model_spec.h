// A transformer model as `vigil plan` takes it: the shape of a decoder-only GPT-style model
// (optionally mixture-of-experts), read from a small YAML or JSON file (docs/plan.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "vigil/core/status.h"

namespace vigil::plan {

struct ModelSpec {
  std::string name;        // the file's `name`, or empty
  int64_t layers = 0;      // transformer blocks
  int64_t hidden = 0;      // model width h
  int64_t heads = 0;       // attention heads a
  int64_t kv_heads = 0;    // key/value heads (grouped-query attention); = heads for multi-head
  int64_t ffn_hidden = 0;  // the MLP's inner width (4h for GPT-3; per expert for MoE)
  int64_t vocab = 0;       // vocabulary size V
  int64_t seq_len = 0;     // sequence length s
  int64_t experts = 1;     // MoE experts per layer; 1 for a dense model
  int64_t top_k = 1;       // experts each token is routed to
  // The MLP's form: false for two matrices (GPT's up and down projections), true for three (a
  // gated MLP, SwiGLU as in Llama and Mixtral: gate, up and down). The file's `mlp: plain|gated`.
  bool gated_mlp = false;
};

// The shape of Megatron-LM's GPT models (Narayanan et al. 2021): multi-head attention, a plain
// MLP of 4h, a 51,200-token vocabulary and 2,048-token sequences unless given.
ModelSpec GptModel(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab = 51200,
                   int64_t seq_len = 2048);

// The model in `text` (YAML, or JSON): the keys layers, hidden, heads, kv_heads, ffn_hidden,
// vocab and seq_len, each a positive whole number, and optionally name, experts, top_k and mlp
// (plain or gated).
// InvalidArgument "SOURCE:LINE: FIELD: PROBLEM" for a missing, unknown or malformed key, or one
// that breaks the shape (hidden not a multiple of heads, heads not a multiple of kv_heads, top_k
// above experts).
Result<ModelSpec> ParseModelSpec(std::string_view text, std::string_view source);

// ParseModelSpec of the file at `path` (its errors name the path).
Result<ModelSpec> ReadModelSpec(const std::string& path);

}  // namespace vigil::plan
