#include "analysis/model/memory.hpp"

#include <algorithm>

#include "analysis/model/architecture.hpp"
#include "analysis/model/pipeline.hpp"
#include "analysis/model/precision.hpp"

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
    const double moe_fraction = double(m.moe_layers_between(0, m.layers)) / m.layers;
    width = (1 - moe_fraction) * m.ffn + moe_fraction * double(m.top_k + m.shared_experts) * m.moe_ffn;
  }
  const double mlp = (m.gated_mlp ? 6.0 : 4.0) * s * b * width;
  const double attention = 2.0 * s * b * (a * d_qk + kv * d_qk + kv * d_v + a * d_v);
  double sharded = mlp + attention;
  double replicated_bytes = replicated;
  if (c.precision != Precision::kBF16) {
    // Transformer Engine keeps the FP8/FP4 cast of each linear layer's input for its weight-gradient GEMM
    // (transformer_engine/pytorch/module/layernorm_linear.py and linear.py save the quantized input): the QKV
    // and first MLP inputs (sbh each) and the second MLP input (sbf) are stored at the quantized size instead
    // of BF16, while the output projection's quantized input is an extra copy next to the BF16 attention
    // output that the attention backward needs.
    const double q = quantized_operand_bytes(c.precision);
    replicated_bytes -= (2.0 - q) * 2.0 * s * b * h;
    sharded -= (2.0 - q) * s * b * width;
    sharded += q * s * b * a * d_v;
  }
  // Korthikanti eq. 1: softmax output 2as^2b, dropout mask as^2b, dropout output 2as^2b; dropped by selective
  // recompute (§4.3) and never materialised by fused (flash) attention, which keeps a log-sum-exp (fp32).
  const double scores = c.seq * s * b * a;  // with context parallelism a rank holds s/cp queries x s keys
  if (flash_attention || c.recompute == Recompute::kSelective) {
    sharded += flash_attention ? 4.0 * s * b * a : 0.0;
  } else {
    sharded += scores * (m.dropout ? 5.0 : 2.0);
  }
  return replicated_bytes / (c.sp() ? t : 1.0) + sharded / t;
}

double inflight_layer_activations(const ModelSpec& m, const ParallelConfig& c) {
  // The first stage holds the most: its layers x the micro-batches in flight (pipeline.hpp).
  return double(stage_layers(m, c).front()) * inflight_micro_batches(c, 0);
}

namespace {

struct StageMemoryInputs {
  const ModelSpec& m;
  const HardwareSpec& hw;
  const ParallelConfig& c;
  const Efficiencies& eff;
  ParameterCounts p;
  double layer_act = 0;
};

MemoryBreakdown inference_stage_memory(const StageMemoryInputs& in, int stage, int layers,
                                       double weight_bytes);

// Memory of pipeline stage STAGE holding LAYERS transformer layers (MOE_LAYERS of them MoE).
MemoryBreakdown stage_memory(const StageMemoryInputs& in, int stage, int layers, int moe_layers) {
  const ModelSpec& m = in.m;
  const ParallelConfig& c = in.c;
  const double t = c.tp;
  const bool first = stage == 0, last = stage == c.pp - 1;
  // Non-expert weights sharded by TP, routed experts by ETP x EP (Shoeybi et al. 2019; Lepikhin et al. 2021);
  // the embedding on the first stage, the output projection on the last (a copy when tied and PP > 1).
  double dense = (in.p.attention_per_layer + in.p.norms_per_layer) * layers +
                 in.p.dense_mlp_per_layer * (layers - moe_layers) + in.p.shared_per_layer * moe_layers;
  if (first) dense += in.p.embedding;
  if (last && (!m.tied_embeddings || c.pp > 1)) dense += double(m.vocab) * m.hidden;
  dense /= t;
  const double experts = in.p.expert_per_layer * moe_layers / (double(c.expert_tp()) * c.ep);
  // Context-parallel ranks hold the same weights as their data-parallel peers, so ZeRO shards the state over
  // dp x cp ranks (Megatron-Core's distributed optimizer uses the data-parallel group "with context
  // parallel", parallel_state.get_data_parallel_group(with_context_parallel=True); Llama 3 §3.3.2 shards FSDP
  // the same).
  const int replicas = c.dp * c.cp;
  MemoryBreakdown d = model_state_bytes(dense, replicas, c.zero, in.eff.state_bytes);
  MemoryBreakdown e =
      model_state_bytes(experts, std::max(1, c.expert_data_parallel()), c.zero, in.eff.state_bytes);
  if (in.eff.fp8_param_gather && (c.precision == Precision::kFP8 || c.precision == Precision::kFP8Block)) {
    // --fp8-param-gather: the model weights live in FP8 (the FP32 master copy is in the optimizer state).
    const double q = quantized_operand_bytes(c.precision) / state_bytes(in.eff.state_bytes).weights;
    d.params *= q, e.params *= q;
  }
  MemoryBreakdown mb;
  mb.params = d.params + e.params;
  mb.grads = d.grads + e.grads;
  mb.optimizer = d.optimizer + e.optimizer;
  const double s = double(c.seq) / c.cp;
  const double b = c.micro_batch;
  if (c.inference()) return inference_stage_memory(in, stage, layers, mb.params);
  const double sp = c.sp() ? t : 1.0;
  const double inflight = inflight_micro_batches(c, stage);
  // Offloaded layers (Megatron-Core cpu_offloading_num_layers) keep their activations in host memory; the
  // copy overlaps compute (TE's CPU offload context streams them over PCIe / NVLink-C2C), so only memory
  // changes.
  mb.activations = in.layer_act * std::max(0, layers - c.offload_layers) * inflight;
  // Embedding output dropout mask sbh per micro-batch in flight (Korthikanti §4.4); on the last stage the
  // output layer norm 2sbh and the fp32 logits of the cross-entropy 4sbv/t (Korthikanti §4.4: "4sbv/t").
  if (first && m.dropout) mb.activations += s * b * m.hidden / sp * std::min<double>(c.micro_batches(), c.pp);
  if (last) mb.activations += 2.0 * s * b * m.hidden / sp + 4.0 * s * b * m.vocab / t;
  mb.other = in.eff.reserved_bytes;
  // ZeRO-3 / FSDP gathers a layer's full (TP-sharded) weights before use and prefetches the next one
  // (Rajbhandari et al. 2020 §5.3; FSDP paper, Zhao et al. 2023 §3.2): two layers of weights (BF16, or FP8
  // with --fp8-param-gather).
  if (c.zero == 3 && replicas > 1 && layers > 0) {
    const bool fp8_weights =
        in.eff.fp8_param_gather && (c.precision == Precision::kFP8 || c.precision == Precision::kFP8Block);
    const double weight_bytes = fp8_weights ? quantized_operand_bytes(c.precision) : 2.0;
    mb.other += 2.0 * weight_bytes * (dense + experts) / layers;
  }
  mb.capacity = in.hw.hbm_capacity_gib * double(1ull << 30);
  mb.stage = stage;
  return mb;
}

// Inference (a prefill): the weights (WEIGHT_BYTES on this GPU), no gradients or optimizer state; the KV
// cache of the micro-batches in flight on the stage's layers; one layer's activations at a time (nothing is
// kept for a backward pass), and on the last stage the BF16 logits.
MemoryBreakdown inference_stage_memory(const StageMemoryInputs& in, int stage, int layers,
                                       double weight_bytes) {
  const ModelSpec& m = in.m;
  const ParallelConfig& c = in.c;
  MemoryBreakdown mb;
  mb.params = weight_bytes;
  const double s = double(c.seq) / c.cp;
  const double b = c.micro_batch;
  const double inflight = std::min<double>(c.micro_batches(), c.pp);
  mb.activations = kv_cache_bytes_per_token(m) / c.tp * layers / std::max(1, m.layers) * s * b * inflight;
  if (layers > 0) mb.activations += in.layer_act;
  if (stage == c.pp - 1) mb.activations += 2.0 * s * b * m.vocab / c.tp;
  mb.other = in.eff.reserved_bytes;
  mb.capacity = in.hw.hbm_capacity_gib * double(1ull << 30);
  mb.stage = stage;
  return mb;
}

}  // namespace

double kv_cache_bytes_per_token(const ModelSpec& m) {
  // Keys and values of every layer in BF16 (Kwon et al. 2023, vLLM §3: 2 x layers x hidden x 2 B per token
  // with one head per query head; grouped-query attention keeps kv_heads of them, MLA its compressed latent).
  if (m.is_mla()) return double(m.layers) * (m.kv_lora_rank + m.qk_rope_dim) * 2.0;
  return 2.0 * m.layers * double(m.kv_heads) * m.head_size() * 2.0;
}

MemoryBreakdown memory_per_gpu(const ModelSpec& m, const HardwareSpec& hw, const ParallelConfig& c,
                               const Efficiencies& eff) {
  const StageMemoryInputs in{
      m, hw, c, eff, count_parameters(m), layer_activation_bytes(m, c, eff.flash_attention)};
  const std::vector<int> layers = stage_layers(m, c);
  MemoryBreakdown best;
  int first_layer = 0;
  for (int stage = 0; stage < c.pp; ++stage) {
    const int n = layers[static_cast<size_t>(stage)];
    int held = n, moe = moe_layers_in(m, first_layer, n);
    if (stage == c.pp - 1) {  // multi-token prediction modules: layers of the last kind on the last stage
      held += m.mtp_layers;
      if (m.is_moe_layer(m.layers - 1)) moe += m.mtp_layers;
    }
    const MemoryBreakdown mb = stage_memory(in, stage, held, moe);
    first_layer += n;
    if (stage == 0 || mb.total() > best.total()) best = mb;
  }
  return best;
}

}  // namespace meshscope::model
