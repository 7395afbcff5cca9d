#include "vigil/plan/model_spec.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <utility>

#include "vigil/core/file.h"
#include "vigil/core/yaml_fields.h"

namespace vigil::plan {
namespace {

// Far above any model built (GPT-4-class widths are ~2^14-2^15). The models multiply these in
// doubles, never in integers: their products (layers x hidden^2 x seq_len reaches 2^89 here)
// would overflow int64.
constexpr int64_t kMaxDimension = int64_t{1} << 24;
constexpr int64_t kMaxLayers = 100000;
// Far above any MoE built (DeepSeek-V3: 256 routed experts); `plan search` enumerates the
// experts' divisors for expert parallelism.
constexpr int64_t kMaxExperts = 4096;

struct Dimension {
  std::string_view key;
  int64_t ModelSpec::*field;
  int64_t max;
};

constexpr std::array<Dimension, 7> kRequired = {{
    {"layers", &ModelSpec::layers, kMaxLayers},
    {"hidden", &ModelSpec::hidden, kMaxDimension},
    {"heads", &ModelSpec::heads, kMaxDimension},
    {"kv_heads", &ModelSpec::kv_heads, kMaxDimension},
    {"ffn_hidden", &ModelSpec::ffn_hidden, kMaxDimension},
    {"vocab", &ModelSpec::vocab, kMaxDimension},
    {"seq_len", &ModelSpec::seq_len, kMaxDimension},
}};

// The shape's own constraints, each named by the key that breaks it.
Status CheckShape(const ModelSpec& m, const YAML::Node& doc, const YamlFields& f) {
  if (m.hidden % m.heads != 0) {
    return f.Error(doc["hidden"], "hidden",
                   fmt::format("{} is not a multiple of heads ({})", m.hidden, m.heads));
  }
  if (m.heads % m.kv_heads != 0) {
    return f.Error(doc["kv_heads"], "kv_heads",
                   fmt::format("heads ({}) is not a multiple of {}", m.heads, m.kv_heads));
  }
  if (m.top_k > m.experts) {
    return f.Error(doc["top_k"], "top_k",
                   fmt::format("{} is above experts ({})", m.top_k, m.experts));
  }
  return Status::Ok();
}

// A `key: true|false` field.
Result<bool> TrueOrFalse(const YAML::Node& node, const YamlFields& f, std::string_view key) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, f.Choice(node, key, {"true", "false"}));
  return text.starts_with('t');
}

Result<ModelSpec> Parse(const YAML::Node& doc, const YamlFields& f) {
  VIGIL_RETURN_IF_ERROR(f.Map(doc, "",
                              {"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden",
                               "vocab", "seq_len", "experts", "top_k", "mlp", "tied_embeddings"}));
  ModelSpec m;
  if (const YAML::Node n = doc["name"]) {
    VIGIL_ASSIGN_OR_RETURN(m.name, f.Text(n, "name"));
  }
  for (const Dimension& d : kRequired) {
    const YAML::Node n = doc[std::string(d.key)];
    if (!n) return f.Error(doc, d.key, "missing (a positive whole number)");
    VIGIL_ASSIGN_OR_RETURN(m.*d.field, f.Whole(n, d.key, 1, d.max));
  }
  if (const YAML::Node n = doc["experts"]) {
    VIGIL_ASSIGN_OR_RETURN(m.experts, f.Whole(n, "experts", 1, kMaxExperts));
  }
  if (const YAML::Node n = doc["top_k"]) {
    VIGIL_ASSIGN_OR_RETURN(m.top_k, f.Whole(n, "top_k", 1, kMaxExperts));
  }
  if (const YAML::Node n = doc["mlp"]) {
    VIGIL_ASSIGN_OR_RETURN(const std::string mlp, f.Choice(n, "mlp", {"plain", "gated"}));
    m.gated_mlp = mlp == "gated";
  }
  if (const YAML::Node n = doc["tied_embeddings"]) {
    VIGIL_ASSIGN_OR_RETURN(m.tied_embeddings, TrueOrFalse(n, f, "tied_embeddings"));
  }
  VIGIL_RETURN_IF_ERROR(CheckShape(m, doc, f));
  return m;
}

}  // namespace

ModelSpec GptModel(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab, int64_t seq_len) {
  ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.seq_len = seq_len;
  return m;
}

ModelParameters CountParameters(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double kv = h * static_cast<double>(m.kv_heads) / static_cast<double>(m.heads);
  const double experts = static_cast<double>(m.experts);
  const bool biases = !m.gated_mlp;
  ModelParameters p;
  // Q and output are h x h, K and V h x kv each; their biases h, kv, kv and h.
  p.attention = 2 * h * h + 2 * h * kv + (biases ? 2 * h + 2 * kv : 0);
  p.expert_mlp = m.gated_mlp ? 3 * h * f : 2 * h * f + f + h;
  p.router = m.experts > 1 ? h * experts : 0;
  const double norm = biases ? 2 * h : h;  // LayerNorm's weight and bias, or RMSNorm's weight
  p.norms = 2 * norm;
  p.embedding = static_cast<double>(m.vocab) * h;
  p.output = m.tied_embeddings ? 0 : p.embedding;
  p.final_norm = norm;
  const double layers = static_cast<double>(m.layers);
  const double shared = p.attention + p.router + p.norms;
  p.total = layers * (shared + experts * p.expert_mlp) + p.embedding + p.output + p.final_norm;
  // The output projection multiplies V x h whether or not it is the embedding's matrix.
  p.active = layers * (shared + static_cast<double>(m.top_k) * p.expert_mlp) + p.embedding;
  return p;
}

Result<ModelSpec> ParseModelSpec(std::string_view text, std::string_view source) {
  VIGIL_ASSIGN_OR_RETURN(const YAML::Node doc, LoadYaml(text, source));
  return Parse(doc, YamlFields(source, "model"));
}

Result<ModelSpec> ReadModelSpec(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string text, ReadFile(path));
  return ParseModelSpec(text, path);
}

}  // namespace vigil::plan
