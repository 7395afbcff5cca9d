// Scores `vigil plan train`'s step model on published tables (docs/plan.md, "How well"):
// Megatron-LM's GPT weak-scaling table (Narayanan et al. 2021), Megatron-LM's MFU table of 2022,
// MegaScale's 175B MFU (Jiang et al. 2024) and ZeRO's model-state memory (Rajbhandari et al. 2020).
// Prints each row's prediction, the published figure and the error. Usage: plan_score DIR
// [RESULTS]: eval/data/plan, and optionally a measured A100 node's results (a fleet summary or
// results document) as the profile.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vigil/plan/hardware.h"
#include "vigil/plan/profile.h"
#include "vigil/plan/train.h"

namespace {

using vigil::plan::GptModel;
using vigil::plan::Layout;
using vigil::plan::ModelSpec;
using vigil::plan::TrainPrediction;

using Row = std::map<std::string, std::string>;

// Where each row came from, for the messages below: "FILE:LINE".
constexpr const char* kWhere = "@where";

// A CSV file of names and numbers (no quoting) as rows of column -> text.
std::vector<Row> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "plan_score: cannot read {}\n", path);
    std::exit(2);
  }
  const auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string field; std::getline(ss, field, ',');) out.push_back(field);
    return out;
  };
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  std::vector<Row> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = split(line);
    Row row;
    for (size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    row[kWhere] = fmt::format("{}:{}", path, number);
    rows.push_back(std::move(row));
  }
  return rows;
}

// A row's field as text, or exit 2 naming the file, line and field.
const std::string& Field(const Row& row, const std::string& key) {
  const auto it = row.find(key);
  if (it == row.end() || it->second.empty()) {
    fmt::print(stderr, "plan_score: {}: field '{}' is missing\n", row.at(kWhere), key);
    std::exit(2);
  }
  return it->second;
}

// A row's field as a number (integer or not), or exit 2 naming the file, line and field.
template <typename T>
T Number(const Row& row, const std::string& key) {
  const std::string& text = Field(row, key);
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    fmt::print(stderr, "plan_score: {}: field '{}' is not a number: '{}'\n", row.at(kWhere), key,
               text);
    std::exit(2);
  }
  return value;
}

int64_t Int(const Row& row, const std::string& key) { return Number<int64_t>(row, key); }

// A row's GPUs, TP, PP, VPP, global and micro-batch as a layout, DP what TP x PP leaves; a TP or
// PP below 1 exits 2 naming the file, line and field (the rest is CheckLayout's).
Layout LayoutOf(const Row& row) {
  Layout l;
  l.gpus = Int(row, "gpus");
  for (const auto& [key, degree] : {std::pair{"tp", &l.tp}, std::pair{"pp", &l.pp}}) {
    *degree = Int(row, key);
    if (*degree < 1) {
      fmt::print(stderr, "plan_score: {}: field '{}' must be at least 1, got {}\n", row.at(kWhere),
                 key, *degree);
      std::exit(2);
    }
  }
  l.vpp = Int(row, "vpp");
  l.dp = l.gpus / (l.tp * l.pp);
  l.global_batch = Int(row, "global_batch");
  l.micro_batch = Int(row, "micro_batch");
  return l;
}

double Error(double predicted, double published) { return (predicted - published) / published; }

// The weak-scaling table: seq 2048, vocab 51200, full recomputation, unfused attention and no
// sequence parallelism (the table predates both), TP within a node, no ZeRO; the micro-batch and
// the interleaving of each row from the authors' script, examples/sc21/run_table_1.sh of
// NVIDIA/Megatron-LM (docs/plan.md).
int ScoreMegatron(const std::string& dir, const vigil::plan::HardwareProfile& a100) {
  fmt::print("Megatron-LM GPT weak scaling (Narayanan et al. 2021, Table 1), A100\n");
  fmt::print("{:>6} {:>5} {:>3} {:>3} {:>5} {:>6} {:>9} {:>9} {:>7} {:>6} {:>7}\n", "model", "GPUs",
             "TP", "PP", "DP", "batch", "predicted", "published", "error", "MFU", "bubble");
  int within = 0, rows = 0;
  double worst = 0;
  for (const auto& row : ReadCsv(dir + "/megatron_gpt_weak_scaling.csv")) {
    const ModelSpec m = GptModel(Int(row, "layers"), Int(row, "hidden"), Int(row, "heads"));
    Layout l = LayoutOf(row);
    l.recompute = vigil::plan::Recompute::kFull;
    l.attention = vigil::plan::Attention::kUnfused;  // 2021: before FlashAttention (2022)
    l.sequence_parallel = false;                     // and before Korthikanti et al. (2022)
    if (const vigil::Status s = vigil::plan::CheckLayout(m, l, a100); !s.ok()) {
      fmt::print(stderr, "plan_score: {}: {}\n", row.at(kWhere), s.message());
      return 2;
    }
    const TrainPrediction p = vigil::plan::PredictTrain(m, l, a100);
    const double published = Number<double>(row, "tflops_per_gpu");
    const double e = Error(p.tflops_per_gpu, published);
    ++rows;
    within += std::abs(e) <= 0.10;
    worst = std::max(worst, std::abs(e));
    fmt::print(
        "{:>6} {:>5} {:>3} {:>3} {:>5} {:>6} {:>9.1f} {:>9.0f} {:>+6.1f}% {:>5.1f}% {:>6.1f}%\n",
        Field(row, "model"), l.gpus, l.tp, l.pp, l.dp, l.global_batch, p.tflops_per_gpu, published,
        100 * e, 100 * p.mfu, 100 * p.bubble_fraction);
  }
  fmt::print("{} of {} rows within 10% (worst {:.1f}%)\n\n", within, rows, 100 * worst);
  return 0;
}

// A table of published MFU, one layout a row, each with its own recomputation, attention,
// sequence parallelism and ZeRO stage: MegaScale's 175B (Jiang et al. 2024, FlashAttention-2
// and ZeRO 1 as the paper adopts them), and Megatron-LM's own MFU for four GPTs at data-parallel
// size one (its README from May 2022, with Korthikanti et al. 2022's sequence parallelism and
// selective recomputation; the layouts are docs/plan.md's). Prints each row's prediction and the
// error, and how many rows lie within 10%.
int ScoreMfuTable(const std::string& path, std::string_view title,
                  const vigil::plan::HardwareProfile& a100) {
  fmt::print("{}, A100\n", title);
  fmt::print("{:>6} {:>6} {:>3} {:>3} {:>3} {:>4} {:>6} {:>10} {:>9} {:>9} {:>7} {:>7}\n", "model",
             "GPUs", "TP", "PP", "VPP", "DP", "batch", "recompute", "predicted", "published",
             "error", "bubble");
  int within = 0, rows = 0;
  for (const auto& row : ReadCsv(path)) {
    const ModelSpec m = GptModel(Int(row, "layers"), Int(row, "hidden"), Int(row, "heads"),
                                 Int(row, "vocab"), Int(row, "seq_len"));
    Layout l = LayoutOf(row);
    l.zero = static_cast<int>(Int(row, "zero"));
    l.sequence_parallel = Int(row, "sequence_parallel") != 0;
    vigil::Result<vigil::plan::Recompute> r = vigil::plan::ParseRecompute(Field(row, "recompute"));
    vigil::Result<vigil::plan::Attention> a = vigil::plan::ParseAttention(Field(row, "attention"));
    if (!r.ok() || !a.ok()) {
      fmt::print(stderr, "plan_score: {}: {}\n", row.at(kWhere),
                 (!r.ok() ? r.status() : a.status()).message());
      return 2;
    }
    l.recompute = *r;
    l.attention = *a;
    if (const vigil::Status s = vigil::plan::CheckLayout(m, l, a100); !s.ok()) {
      fmt::print(stderr, "plan_score: {}: {}\n", row.at(kWhere), s.message());
      return 2;
    }
    const TrainPrediction p = vigil::plan::PredictTrain(m, l, a100);
    const double published = Number<double>(row, "mfu");
    const double e = Error(p.mfu, published);
    ++rows;
    within += std::abs(e) <= 0.10;
    fmt::print(
        "{:>6} {:>6} {:>3} {:>3} {:>3} {:>4} {:>6} {:>10} {:>8.1f}% {:>8.1f}% {:>+6.1f}% "
        "{:>6.1f}%\n",
        Field(row, "model"), l.gpus, l.tp, l.pp, l.vpp, l.dp, l.global_batch,
        Field(row, "recompute"), 100 * p.mfu, 100 * published, 100 * e, 100 * p.bubble_fraction);
  }
  fmt::print("{} of {} rows within 10% (MFU, relative error)\n\n", within, rows);
  return 0;
}

// ZeRO's Figure 1 / Table 1 example: a 7.5B model on 64 GPUs, Adam in mixed precision; the model
// here is the weak-scaling table's 7.5B row (7.46B parameters).
int ScoreZero(const std::string& dir, const vigil::plan::HardwareProfile& a100) {
  fmt::print("ZeRO model states per GPU, 7.5B on 64 GPUs (Rajbhandari et al. 2020)\n");
  fmt::print("{:>5} {:>10} {:>10} {:>7}\n", "ZeRO", "predicted", "published", "error");
  const ModelSpec m = GptModel(36, 4096, 32);
  for (const auto& row : ReadCsv(dir + "/zero_memory.csv")) {
    Layout l;
    l.gpus = l.dp = Int(row, "gpus");
    l.global_batch = l.dp;
    l.zero = static_cast<int>(Int(row, "zero"));
    const TrainPrediction p = vigil::plan::PredictTrain(m, l, a100);
    const double gb = p.memory.ModelStates() / 1e9;
    const double published = Number<double>(row, "model_states_gb");
    fmt::print("{:>5} {:>9.2f}G {:>9.1f}G {:>+6.1f}%\n", l.zero, gb, published,
               100 * Error(gb, published));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fmt::print(stderr, "usage: plan_score DIR [RESULTS] (eval/data/plan; a measured A100 node)\n");
    return 2;
  }
  vigil::Result<vigil::plan::HardwareProfile> a100 = vigil::plan::DatasheetProfile("a100");
  if (a100.ok() && argc == 3) a100 = vigil::plan::ReadMeasuredProfile({argv[2]}, *a100);
  if (!a100.ok()) {
    fmt::print(stderr, "plan_score: {}\n", a100.status().message());
    return 2;
  }
  fmt::print("Profile: {}\n\n", a100->source);
  const std::string dir = argv[1];
  if (int rc = ScoreMegatron(dir, *a100); rc != 0) return rc;
  if (int rc = ScoreMfuTable(dir + "/megatron_gpt_mfu_2022.csv",
                             "Megatron-LM GPT MFU at DP 1 (its README, May 2022)", *a100);
      rc != 0) {
    return rc;
  }
  if (int rc =
          ScoreMfuTable(dir + "/megascale_175b.csv", "MegaScale 175B (Jiang et al. 2024)", *a100);
      rc != 0) {
    return rc;
  }
  return ScoreZero(dir, *a100);
}
