#include "analysis/model/memory.hpp"

#include <algorithm>

#include "analysis/model/architecture.hpp"

namespace meshscope::model {

StateBytesPerParam state_bytes(StateBytes convention) {
  // ZeRO (Rajbhandari et al. 2020 §3.1): fp16 weights 2 + fp16 grads 2 + fp32 master, momentum, variance 12 =
  // 16 bytes. Megatron-LM keeps fp32 gradients (main_grad): 2 + 4 + 12 = 18 bytes
  // (docs/distrib_optimizer.md).
  if (convention == StateBytes::k18) return {2, 4, 12};
  return {2, 2, 12};
}

MemoryBreakdown model_state_bytes(double params, int dp, int zero, StateBytes convention) {
  const StateBytesPerParam b = state_bytes(convention);
  const double shard = std::max(1, dp);
  MemoryBreakdown m;
  // Rajbhandari et al. 2020 Figure 1: P_os shards K*Psi, P_os+g also 2*Psi, P_os+g+p also the weights.
  m.optimizer = params * b.optimizer / (zero >= 1 ? shard : 1.0);
  m.grads = params * b.grads / (zero >= 2 ? shard : 1.0);
  m.params = params * b.weights / (zero >= 3 ? shard : 1.0);
  return m;
}

double layer_activation_bytes(const ModelSpec& m, const ParallelConfig& c, bool flash_attention) {
  const double s = double(c.seq) / c.cp;
  const double b = c.micro_batch;
  const double h = m.hidden;
  const double t = c.tp;
  const double a = m.heads;
  const double d_qk = m.is_mla() ? m.qk_nope_dim + m.qk_rope_dim : m.head_size();
  const double d_v = m.is_mla() ? m.v_head_dim : m.head_size();
  const double kv = m.is_mla() ? m.heads : m.kv_heads;
  if (c.recompute == Recompute::kFull) {
    // Korthikanti et al. 2022 §4.3: full recompute keeps only the layer input, 2sbh (÷t with sequence
    // parallel).
    return 2.0 * s * b * h / (c.sp() ? t : 1.0);
  }
  // Korthikanti et al. 2022 §4.1 (34sbh + 5as^2b): layer-norm inputs 4sbh, QKV and MLP inputs 2sbh each and
  // dropout masks sbh each are replicated across TP unless sequence parallel (eq. 2 vs. §4.2.2).
  const double replicated = s * b * h * (8.0 + (m.dropout ? 2.0 : 0.0));
  // Q, K, V and the attention output (2 bytes each), the MLP intermediate: 2sbf in and out (4sbf), or gate,
  // up and SwiGLU output (6sbf); sharded by TP (Korthikanti eq. 2, the 24sbh/t term for f = 4h).
  double width = m.ffn;
  if (m.is_moe()) {
    const double moe_fraction = double(m.layers - m.dense_layers) / m.layers;
    width = (1 - moe_fraction) * m.ffn + moe_fraction * double(m.top_k + m.shared_experts) * m.moe_ffn;
  }
  const double mlp = (m.gated_mlp ? 6.0 : 4.0) * s * b * width;
  const double attention = 2.0 * s * b * (a * d_qk + kv * d_qk + kv * d_v + a * d_v);
  double sharded = mlp + attention;
  // Korthikanti eq. 1: softmax output 2as^2b, dropout mask as^2b, dropout output 2as^2b; dropped by selective
  // recompute (§4.3) and never materialised by fused (flash) attention, which keeps a log-sum-exp (fp32).
  const double scores = c.seq * s * b * a;  // with context parallelism a rank holds s/cp queries x s keys
  if (flash_attention || c.recompute == Recompute::kSelective) {
    sharded += flash_attention ? 4.0 * s * b * a : 0.0;
  } else {
    sharded += scores * (m.dropout ? 5.0 : 2.0);
  }
  return replicated / (c.sp() ? t : 1.0) + sharded / t;
}

double inflight_layer_activations(const ModelSpec& m, const ParallelConfig& c) {
  const double per_stage = double(m.layers) / c.pp;
  const double micro = c.micro_batches();
  if (c.pp == 1) return per_stage;  // one micro-batch at a time
  switch (c.schedule) {
    case Schedule::kGPipe:
      return per_stage * micro;  // Huang et al. 2019: all micro-batches' activations before backward
    case Schedule::k1F1B:
      return per_stage * std::min(micro, double(c.pp));  // Narayanan et al. 2021 §2.2.1: at most p in flight
    case Schedule::kInterleaved:
      // Korthikanti et al. 2022 §4.2.3: the interleaved schedule stores L(1 + (p-1)/(p m)) layers' worth,
      // m = virtual stages.
      return per_stage * std::min(micro, double(c.pp)) *
             (1.0 + (c.pp - 1.0) / (double(c.pp) * c.virtual_stages));
  }
  return per_stage;
}

MemoryBreakdown memory_per_gpu(const ModelSpec& m, const HardwareSpec& hw, const ParallelConfig& c,
                               const Efficiencies& eff) {
  const ParameterCounts p = count_parameters(m);
  const double t = c.tp;
  // Transformer layers split evenly over PP stages; non-expert weights sharded by TP, routed experts by
  // TP x EP (Megatron-LM expert parallelism, Shoeybi et al. 2019 / Lepikhin et al. 2021).
  const double dense_layers = (p.layers_total() - p.expert_total()) / c.pp / t;
  const double expert_layers = p.expert_total() / c.pp / (t * c.ep);
  const double embedding = p.embedding / t;
  // The output projection lives on the last stage; with tied embeddings it is a copy when PP > 1.
  const double output = (m.tied_embeddings && c.pp == 1 ? 0.0 : double(m.vocab) * m.hidden) / t;
  const int expert_dp = std::max(1, c.dp / c.ep);

  const double layer_act = layer_activation_bytes(m, c, eff.flash_attention);
  const double inflight = inflight_layer_activations(m, c);
  const double s = double(c.seq) / c.cp;
  const double b = c.micro_batch;
  // Embedding output dropout mask sbh per micro-batch in flight (Korthikanti §4.4), output layer norm 2sbh
  // and fp32 logits for the cross-entropy 4sbv/t (Korthikanti §4.4: "4sbv/t").
  const double first_extra =
      (m.dropout ? s * b * m.hidden / (c.sp() ? t : 1.0) : 0.0) * std::min<double>(c.micro_batches(), c.pp);
  const double last_extra = 2.0 * s * b * m.hidden / (c.sp() ? t : 1.0) + 4.0 * s * b * m.vocab / t;
  const double last_inflight = c.pp == 1 ? inflight : double(m.layers) / c.pp;

  auto stage = [&](bool first, bool last, double activations) {
    const double dense_params = dense_layers + (first ? embedding : 0.0) + (last ? output : 0.0);
    MemoryBreakdown dense = model_state_bytes(dense_params, c.dp, c.zero, eff.state_bytes);
    const MemoryBreakdown experts = model_state_bytes(expert_layers, expert_dp, c.zero, eff.state_bytes);
    MemoryBreakdown mb;
    mb.params = dense.params + experts.params;
    mb.grads = dense.grads + experts.grads;
    mb.optimizer = dense.optimizer + experts.optimizer;
    mb.activations = activations;
    mb.other = eff.reserved_bytes;
    // ZeRO-3 / FSDP gathers a layer's full (TP-sharded) weights before use and prefetches the next one
    // (Rajbhandari et al. 2020 §5.3; FSDP paper, Zhao et al. 2023 §3.2): two layers of bf16 weights.
    if (c.zero == 3 && c.dp > 1)
      mb.other += 2.0 * 2.0 * (dense_layers + expert_layers) / (double(m.layers) / c.pp);
    mb.capacity = hw.hbm_capacity_gib * double(1ull << 30);
    return mb;
  };
  MemoryBreakdown best =
      stage(true, c.pp == 1, layer_act * inflight + first_extra + (c.pp == 1 ? last_extra : 0));
  best.stage = 0;
  if (c.pp > 1) {
    MemoryBreakdown tail = stage(false, true, layer_act * last_inflight + last_extra);
    tail.stage = c.pp - 1;
    if (tail.total() > best.total()) best = tail;
  }
  return best;
}

}  // namespace meshscope::model
