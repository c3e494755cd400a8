// Parameter counts and FLOPs of a transformer described by ModelSpec: dense, grouped-query, multi-head latent
// attention and mixture of experts (total and active parameters).
#pragma once

#include "analysis/model/specs.hpp"

namespace meshscope::model {

struct ParameterCounts {
  double attention_per_layer = 0;      // QKV + output projection (+ MLA down/up projections)
  double dense_mlp_per_layer = 0;      // one dense MLP
  double expert_per_layer = 0;         // all routed experts of one MoE layer
  double expert_active_per_layer = 0;  // top_k routed experts of one MoE layer
  double shared_per_layer = 0;         // shared experts + router of one MoE layer
  double norms_per_layer = 0;
  double embedding = 0;  // input embedding (+ learned positions)
  double output = 0;     // output projection (0 when tied)
  int dense_layer_count = 0;
  int moe_layer_count = 0;

  double layers_total() const;   // all transformer layers
  double layers_active() const;  // per token
  double expert_total() const;   // routed experts only (sharded by EP)
  double total() const;          // everything, with embeddings
  double active() const;         // per token, with embeddings
  double non_embedding_active() const { return layers_active(); }
};

ParameterCounts count_parameters(const ModelSpec& model);

// Forward FLOPs per token of one layer's linear (GEMM) parts; 2 FLOPs per multiply-add (Kaplan et al. 2020
// §2.1: C_forward ~ 2N).
double linear_flops_per_token(const ModelSpec& model, bool moe_layer);
// Forward FLOPs per token of one layer's attention core (QK^T and AV, non-causal count as in Narayanan et
// al. 2021 §5.1 and PaLM App. B): 2 * seq * heads * (d_qk + d_v).
double attention_flops_per_token(const ModelSpec& model, int seq);
// Forward FLOPs per token of the output logits: 2 * vocab * hidden.
double logits_flops_per_token(const ModelSpec& model);

struct StepFlops {
  double model = 0;     // 3 x forward (6ND-style count plus attention and logits), what MFU uses
  double hardware = 0;  // model + recomputed forward work (what the GPUs execute; HFU)
};
// FLOPs of one training step on all GPUs for `tokens` tokens of length `seq`.
StepFlops step_flops(const ModelSpec& model, double tokens, int seq, Recompute recompute);
// FLOPs of the forward passes of an inference step (a prefill) over `tokens` tokens of length `seq`: the
// training step's forward alone, a third of step_flops without recompute (about 2N per token, Kaplan et al.
// 2020 §2.1, plus attention and the output layer).
StepFlops forward_flops(const ModelSpec& model, double tokens, int seq);

}  // namespace meshscope::model
