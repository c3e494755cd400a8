// Pipeline layout: how many transformer layers each stage holds (balanced, or uneven as Megatron-Core
// allows), which of them are MoE layers, and how many micro-batches each stage keeps in flight under each
// schedule.
#pragma once

#include <string>
#include <vector>

#include "analysis/model/specs.hpp"

namespace meshscope::model {

// Transformer layers per pipeline stage. With first/last stage counts given (Megatron-Core
// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers) the rest is spread over the
// middle stages; otherwise layers / pp each, the remainder taken one layer at a time from the last and first
// stage inwards (Llama 3 405B: 126 layers on 16 stages, the first and last with one fewer; Llama Team 2024
// §3.3.2).
std::vector<int> stage_layers(const ModelSpec& model, const ParallelConfig& config);

// Empty when the layout can be built, else the one-line reason (a stage without layers, counts that do not
// add up to --layers).
std::string check_stage_layers(const ModelSpec& model, const ParallelConfig& config);

// MoE layers among the LAYERS layers that start at FIRST (the first dense_layers of the model are dense).
int moe_layers_in(const ModelSpec& model, int first, int layers);

// Interleaved 1F1B: micro-batches per group in Megatron-Core's schedule table
// (microbatch_group_size_per_vp_stage, default pp; all micro-batches when they are not a multiple of pp,
// which Megatron-Core accepts when m >= pp).
int microbatch_group(const ParallelConfig& config);

// Micro-batch forwards whose activations stage STAGE holds at its peak, in units of its whole layer set:
// GPipe m; 1F1B min(m, p - s) (Narayanan et al. 2021 §2.2.1); interleaved the warm-up count of Megatron-Core
// (schedules.py get_pp_rank_microbatches: (p - s - 1) x 2 + (v - 1) x group, plus the first steady forward)
// over v chunks — for stage 0 and group = p this is p + (p - 1)/v, Korthikanti et al. 2022 §4.2.3's
// p(1 + (p-1)/(p v)).
double inflight_micro_batches(const ParallelConfig& config, int stage);

}  // namespace meshscope::model
