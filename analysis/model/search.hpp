// search(): every valid layout (TP, PP, DP, CP, EP, micro-batch, ZeRO stage, recompute, schedule and virtual
// stages) of a model on N GPUs for one global batch, pruned by memory and ranked by predicted step time.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/model/predict.hpp"

namespace meshscope::model {

struct SearchOptions {
  int gpus = 0;
  int global_batch = 0;  // sequences; 0 = the model preset's (or gpus if it has none)
  int seq = 0;           // 0 = the model's
  int top = 10;          // how many layouts to keep
  Precision precision = Precision::kBF16;
  Mode mode = Mode::kTraining;  // inference: no ZeRO stage, no recompute, one schedule (forward only)
  std::vector<int> micro_batches = {1, 2, 4, 8};
  int max_virtual_stages = 8;
  bool keep_not_fitting = false;  // rank layouts that do not fit too (marked fits = false)
};

struct SearchResult {
  std::vector<Prediction> top;  // best first
  std::int64_t evaluated = 0;   // valid layouts considered
  std::int64_t fitting = 0;     // of those, layouts that fit in memory
  int global_batch = 0;
  int seq = 0;
};

// Throws InvalidInput for bad options (no GPUs, a batch no layout can divide, ...).
SearchResult search(const ModelSpec& model, const HardwareSpec& hw, const Efficiencies& eff,
                    const SearchOptions& options);

}  // namespace meshscope::model
