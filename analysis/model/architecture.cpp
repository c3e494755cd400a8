#include "analysis/model/architecture.hpp"

namespace meshscope::model {
namespace {

double attention_parameters(const ModelSpec& m) {
  const double h = m.hidden;
  if (m.is_mla()) {
    // DeepSeek-V2 §2.1.2 (arXiv:2405.04434) eqs. 37-47: low-rank query/key-value projections with a decoupled
    // RoPE key; DeepSeek-V3 §2.1.1 uses the same layout.
    const double qk = m.qk_nope_dim + m.qk_rope_dim;
    const double q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * double(m.heads) * qk
                                       : h * double(m.heads) * qk;
    const double kv = h * (m.kv_lora_rank + m.qk_rope_dim) +
                      double(m.kv_lora_rank) * m.heads * (m.qk_nope_dim + m.v_head_dim);
    const double out = double(m.heads) * m.v_head_dim * h;
    return q + kv + out;
  }
  // Q and output: heads * d * h each; K and V: kv_heads * d * h each (Ainslie et al. 2023, GQA §2).
  const double d = m.head_size();
  return 2.0 * h * m.heads * d + 2.0 * h * m.kv_heads * d;
}

double mlp_parameters(const ModelSpec& m, int width) {
  // Two matrices h x f (GELU MLP, Vaswani et al. 2017) or three (SwiGLU, Shazeer 2020 eq. 6).
  return (m.gated_mlp ? 3.0 : 2.0) * m.hidden * double(width);
}

}  // namespace

double ParameterCounts::layers_total() const {
  return (attention_per_layer + norms_per_layer) * (dense_layer_count + moe_layer_count) +
         dense_mlp_per_layer * dense_layer_count + (expert_per_layer + shared_per_layer) * moe_layer_count;
}

double ParameterCounts::layers_active() const {
  return (attention_per_layer + norms_per_layer) * (dense_layer_count + moe_layer_count) +
         dense_mlp_per_layer * dense_layer_count +
         (expert_active_per_layer + shared_per_layer) * moe_layer_count;
}

double ParameterCounts::expert_total() const {
  return expert_per_layer * moe_layer_count;
}
double ParameterCounts::total() const {
  return layers_total() + embedding + output;
}
double ParameterCounts::active() const {
  return layers_active() + embedding + output;
}

ParameterCounts count_parameters(const ModelSpec& m) {
  ParameterCounts c;
  c.attention_per_layer = attention_parameters(m);
  c.norms_per_layer = 2.0 * m.hidden;  // two norm weight vectors per layer
  c.dense_mlp_per_layer = mlp_parameters(m, m.ffn);
  if (m.is_moe()) {
    c.moe_layer_count = m.moe_layers_between(0, m.layers);
    c.dense_layer_count = m.layers - c.moe_layer_count;
    c.expert_per_layer = m.experts * mlp_parameters(m, m.moe_ffn);
    c.expert_active_per_layer = m.top_k * mlp_parameters(m, m.moe_ffn);
    // Shared experts and the router (h x experts), Dai et al. 2024 (DeepSeekMoE) §3.
    c.shared_per_layer = m.shared_experts * mlp_parameters(m, m.moe_ffn) + double(m.hidden) * m.experts;
  } else {
    c.dense_layer_count = m.layers;
  }
  c.embedding = double(m.vocab) * m.hidden + (m.learned_positions ? double(m.seq) * m.hidden : 0.0);
  c.output = m.tied_embeddings ? 0.0 : double(m.vocab) * m.hidden;
  return c;
}

double linear_flops_per_token(const ModelSpec& m, bool moe_layer) {
  const ParameterCounts c = count_parameters(m);
  // Kaplan et al. 2020 §2.1: forward = 2 FLOPs per active weight per token.
  const double mlp = moe_layer ? c.expert_active_per_layer + c.shared_per_layer : c.dense_mlp_per_layer;
  return 2.0 * (c.attention_per_layer + mlp);
}

double attention_flops_per_token(const ModelSpec& m, int seq) {
  // Narayanan et al. 2021 §5.1: QK^T and AV cost 2 * s * h each per token (d_qk = d_v = h / heads).
  const double qk = m.is_mla() ? m.qk_nope_dim + m.qk_rope_dim : m.head_size();
  const double v = m.is_mla() ? m.v_head_dim : m.head_size();
  return 2.0 * seq * double(m.heads) * (qk + v);
}

double logits_flops_per_token(const ModelSpec& m) {
  // Narayanan et al. 2021 §5.1: the output projection costs 2 * V * h per token forward.
  return 2.0 * m.vocab * double(m.hidden);
}

namespace {

struct ForwardPerToken {
  double layers_linear = 0, attention = 0, total = 0;
};

ForwardPerToken forward_per_token(const ModelSpec& m, int seq) {
  const ParameterCounts c = count_parameters(m);
  ForwardPerToken f;
  f.layers_linear = c.dense_layer_count * linear_flops_per_token(m, false) +
                    c.moe_layer_count * linear_flops_per_token(m, true);
  f.attention = m.layers * attention_flops_per_token(m, seq);
  f.total = f.layers_linear + f.attention + logits_flops_per_token(m);
  return f;
}

}  // namespace

StepFlops forward_flops(const ModelSpec& m, double tokens, int seq) {
  StepFlops f;
  f.model = f.hardware = forward_per_token(m, seq).total * tokens;
  return f;
}

StepFlops step_flops(const ModelSpec& m, double tokens, int seq, Recompute recompute) {
  const ForwardPerToken per_token = forward_per_token(m, seq);
  const double layers_linear = per_token.layers_linear, attention = per_token.attention;
  const double forward = per_token.total;
  StepFlops f;
  // Narayanan et al. 2021 eq. (3): backward = 2 x forward, so a step costs 3 x forward (6ND + attention).
  f.model = 3.0 * forward * tokens;
  f.hardware = f.model;
  // Full recompute repeats the layers' forward (Narayanan et al. 2021 §5.1: 4 x forward, the 96Bslh^2
  // formula); selective recompute repeats only the attention core (Korthikanti et al. 2022 §5, Table 4).
  if (recompute == Recompute::kFull) f.hardware += (layers_linear + attention) * tokens;
  if (recompute == Recompute::kSelective) f.hardware += attention * tokens;
  return f;
}

}  // namespace meshscope::model
