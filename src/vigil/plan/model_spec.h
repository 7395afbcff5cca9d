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
  // Whether the output layer shares its matrix with the input embedding. The file's
  // `tied_embeddings: true|false`; true by default, as Megatron-LM's GPT models (and GPT-2/3) do.
  // Llama 2 and 3 and Mixtral are untied (their config.json's tie_word_embeddings: false).
  bool tied_embeddings = true;
};

// A model's parameters by where they sit: the one count that every plan model (training memory
// and gradients, inference weights) uses. A plain-MLP model (GPT) has biases on its linear layers
// and LayerNorms (weight and bias); a gated one (Llama, Mixtral) has neither bias nor norm bias
// (RMSNorm: a weight only). No learned position embeddings (the file has no key for them; GPT-3's
// are s x h, 0.01% of 175B).
struct ModelParameters {
  double attention = 0;   // per block: Q, K, V and output projections, with their biases
  double expert_mlp = 0;  // per block and expert: the MLP (a dense model's whole MLP)
  double router = 0;      // per block: the MoE gate, h x experts; 0 for a dense model
  double norms = 0;       // per block: its two norms
  double embedding = 0;   // the input embedding, V x h
  double output = 0;      // the output layer, V x h; 0 when tied to the embedding
  double final_norm = 0;  // the norm before the output layer
  double total = 0;       // all of the above: blocks (every expert), embedding, output, final norm
  double active = 0;      // what one token's forward multiplies: top_k experts, the output layer
};

// The count for `model`. Pure; thread-safe.
ModelParameters CountParameters(const ModelSpec& model);

// The shape of Megatron-LM's GPT models (Narayanan et al. 2021): multi-head attention, a plain
// MLP of 4h, a 51,200-token vocabulary and 2,048-token sequences unless given.
ModelSpec GptModel(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab = 51200,
                   int64_t seq_len = 2048);

// The model in `text` (YAML, or JSON): the keys layers, hidden, heads, kv_heads, ffn_hidden,
// vocab and seq_len, each a positive whole number, and optionally name, experts, top_k, mlp
// (plain or gated) and tied_embeddings (true or false).
// InvalidArgument "SOURCE:LINE: FIELD: PROBLEM" for a missing, unknown or malformed key, or one
// that breaks the shape (hidden not a multiple of heads, heads not a multiple of kv_heads, top_k
// above experts).
Result<ModelSpec> ParseModelSpec(std::string_view text, std::string_view source);

// ParseModelSpec of the file at `path` (its errors name the path).
Result<ModelSpec> ReadModelSpec(const std::string& path);

}  // namespace vigil::plan
