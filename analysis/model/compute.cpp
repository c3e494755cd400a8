#include "analysis/model/compute.hpp"

#include <algorithm>

#include "analysis/model/architecture.hpp"

namespace meshscope::model {
namespace {

// BF16 result of a GEMM, 2 bytes per element.
constexpr double kResultBytes = 2.0;
// The cross-entropy works on FP32 logits (4 B per element), written by the output layer, read by the softmax
// and the softmax written back for the backward pass (Korthikanti et al. 2022 §4.4 stores these 4sbv/t
// bytes): three passes over the logits.
constexpr double kLogitsBytesPerElement = 4.0;
constexpr double kLogitsPasses = 3.0;
// Element-wise traffic per token on h-wide tensors (bytes/h): two norms (read + write, 4 each), two residual
// adds (6 each), and with dropout two dropout kernels (5 each); on the MLP intermediate the activation
// function reads and writes 4 bytes per element (GELU) or 6 (SwiGLU: gate and up read, product written).
constexpr double kNormAndResidualBytes = 20.0;
constexpr double kDropoutBytes = 10.0;

struct LayerGemms {
  GemmShape qkv, out, up, down;
  double experts = 0;  // grouped-GEMM experts on this GPU (MoE layer), 0 for a dense MLP
  GemmShape expert_up, expert_down;
  GemmShape shared_up, shared_down;  // shared experts (MoE), zero-sized otherwise
};

LayerGemms layer_gemms(const ModelSpec& m, const ParallelConfig& c, const Efficiencies& eff, bool moe_layer) {
  const double tokens = double(c.micro_batch) * c.seq / c.cp;
  const double t = c.tp;
  const double h = m.hidden;
  const ParameterCounts p = count_parameters(m);
  const double d_v = m.is_mla() ? m.v_head_dim : m.head_size();
  const double out_params = double(m.heads) * d_v * h;
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  LayerGemms g;
  g.qkv = {tokens, (p.attention_per_layer - out_params) / h / t, h};
  g.out = {tokens, h, double(m.heads) * d_v / t};
  if (!moe_layer) {
    g.up = {tokens, gate * m.ffn / t, h};
    g.down = {tokens, h, double(m.ffn) / t};
    return g;
  }
  // Routed experts: tokens x top_k assignments spread over the experts; each EP rank runs experts / ep of
  // them, each split over etp GPUs, the busiest with moe_imbalance x the mean load (Megatron-Core grouped
  // GEMM, one kernel per projection). The stage's tp x cp x dp GPUs hold dp x micro_batch x seq tokens; an
  // expert's shard sees those of its expert-data-parallel replica: tokens x ep x etp / tp of them per GPU's
  // tokens, times top_k / experts.
  const double local_experts = double(m.experts) / c.ep;
  const double per_expert = expert_rows_per_expert(m, c, tokens) * eff.moe_imbalance;
  g.experts = local_experts;
  g.expert_up = {per_expert, gate * m.moe_ffn / c.expert_tp(), h};
  g.expert_down = {per_expert, h, double(m.moe_ffn) / c.expert_tp()};
  if (m.shared_experts > 0) {
    const double width = double(m.shared_experts) * m.moe_ffn;
    g.shared_up = {tokens, gate * width / t, h};
    g.shared_down = {tokens, h, width / t};
  }
  return g;
}

}  // namespace

FlashKernelRates flash_kernel_rates(const Efficiencies& eff) {
  // Dao 2023 (FlashAttention-2, arXiv:2307.08691) §4.1, A100: FlashAttention-2 "is around 2x faster than
  // FlashAttention" (the 2022 CUDA kernel), and "around 1.3-1.5x faster than FlashAttention in Triton in the
  // forward pass and around 2x faster in the backward pass" (1.4, the middle of that range). Measured on A100
  // only; applied on every GPU (an assumption: no other comparison of the 2022 kernels is published).
  if (!eff.flash_attention || eff.cudnn_attention) return {};
  if (eff.flash_triton) return {1.0 / 1.4, 0.5};
  if (eff.flash_v1) return {0.5, 0.5};
  return {};
}

double attention_forward_time(const ModelSpec& m, const ParallelConfig& c, const Efficiencies& eff) {
  const double tokens = double(c.micro_batch) * c.seq / c.cp;
  const double flops = tokens * attention_flops_per_token(m, c.seq) / c.tp;
  if (!eff.flash_attention) return flops / (eff.attention_standard_flops_per_s * eff.sustained_fraction);
  const bool fused = eff.cudnn_attention && eff.attention_fused_flops_per_s > 0;
  double rate =
      (fused ? eff.attention_fused_flops_per_s : eff.attention_flash_flops_per_s) * eff.sustained_fraction;
  // The 2022 kernels (the CUDA FlashAttention and FlashAttention in Triton) against FlashAttention-2.
  if (!fused) rate *= flash_kernel_rates(eff).forward;
  // Head dim 64 runs below head dim 128 (Shah et al. 2024 Fig. 5a/5b, sequence 8k, non-causal:
  // FlashAttention-2 322 vs 370 TFLOP/s, cuDNN 412 vs 600).
  const double head = m.is_mla() ? m.qk_nope_dim + m.qk_rope_dim : m.head_size();
  if (head <= 64) rate *= fused ? 412.0 / 600.0 : 322.0 / 370.0;
  // Short sequences fill the GPU less: rate(s) proportional to s / (s + s0), equal to the long-sequence rate
  // at 8k; s0 = 384 tokens causal, 96 non-causal (fits Shah et al. 2024 Fig. 5b/5d, FlashAttention-2 and
  // cuDNN from 512 to 16k tokens within 3 %).
  const double s0 = eff.causal ? 384.0 : 96.0;
  rate *= (c.seq / (c.seq + s0)) / (8192.0 / (8192.0 + s0));
  // A causal mask skips the blocks above the diagonal: half the FLOPs (Dao 2023, FlashAttention-2 §3.1.1) at
  // attention_causal_ratio of the non-causal rate.
  if (eff.causal) return 0.5 * flops / (rate * eff.attention_causal_ratio);
  return flops / rate;
}

double gemm_time(const GemmShape& g, double peak, double efficiency, double operand_bytes, double overhead_s,
                 double hbm_Bps) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return 0.0;
  const double compute = g.flops() / (peak * efficiency);
  const double bytes = (g.m * g.k + g.k * g.n) * operand_bytes + g.m * g.n * kResultBytes;
  return std::max(compute, bytes / hbm_Bps) + overhead_s;
}

LayerTimes layer_times(const ModelSpec& m, const ParallelConfig& c, const Efficiencies& eff,
                       const PrecisionRecipe& r, double hbm_Bps, bool moe_layer, bool bf16_layer) {
  const double tokens = double(c.micro_batch) * c.seq / c.cp;
  const double t = c.tp;
  const double peak = bf16_layer ? r.bf16_peak_flops : r.peak_flops;
  const double e = (bf16_layer ? r.bf16_efficiency : r.efficiency) * eff.sustained_fraction;
  const double operand = bf16_layer ? 2.0 : r.operand_bytes;
  const double quantize = bf16_layer ? 0.0 : r.quantize_bytes;
  const double o = eff.gemm_overhead_s;
  const LayerGemms g = layer_gemms(m, c, eff, moe_layer);
  LayerTimes lt;
  // Forward GEMM and the two backward GEMMs of each projection: input gradient (m x k = [m x n][n x k]) and
  // weight gradient (k x n = [k x m][m x n]) (Narayanan et al. 2021 §5.1: backward = 2 x forward FLOPs).
  auto add = [&](const GemmShape& s, double count, double overhead_count,
                 ProjectionTimes* projection = nullptr) {
    if (s.m <= 0) return;
    const double each = count > 0 ? count : 1.0;
    auto time = [&](const GemmShape& x) {
      return each * (gemm_time(x, peak, e, operand, 0.0, hbm_Bps)) + overhead_count * o;
    };
    const ProjectionTimes passes{time(s), time({s.m, s.k, s.n}), time({s.k, s.n, s.m})};
    if (projection) *projection = passes;
    lt.gemm_fwd += passes.forward;
    lt.gemm_bwd += passes.dgrad + passes.wgrad;
    lt.gemm_flops_fwd += each * s.flops();
    // Quantisation: the forward input (m x k) and the backward output gradient (m x n) are cast once each.
    lt.quantize_fwd += each * s.m * s.k * quantize / hbm_Bps;
    lt.quantize_bwd += each * s.m * s.n * quantize / hbm_Bps;
  };
  add(g.qkv, 1, 1, &lt.qkv);
  add(g.out, 1, 1, &lt.out);
  if (moe_layer) {
    // A grouped GEMM is one kernel for all local experts: one overhead, each expert on its own roofline.
    add(g.expert_up, g.experts, 1);
    add(g.expert_down, g.experts, 1);
    add(g.shared_up, 1, 1);
    add(g.shared_down, 1, 1);
  } else {
    add(g.up, 1, m.gated_mlp ? 2 : 1, &lt.mlp_up);  // SwiGLU: gate and up projections are two kernels
    add(g.down, 1, 1, &lt.mlp_down);
  }
  lt.attention_fwd = attention_forward_time(m, c, eff);
  // Unfused attention: backward = 2 x forward FLOPs at about the forward rate (Shah et al. 2024 Fig. 5-6:
  // standard attention 139 TFLOP/s forward, 181 backward for 2.5 x the FLOPs, i.e. 1.9 x the time).
  // Flash and fused kernels: 2.5 x the forward FLOPs (they recompute QK^T) at attention_backward_ratio of the
  // forward rate (FlashAttention-2 paper's FLOP convention; Shah et al. 2024 Fig. 6); a 2022 kernel's
  // backward lags FlashAttention-2 by its own factor (flash_kernel_rates).
  const FlashKernelRates kernel = flash_kernel_rates(eff);
  lt.attention_bwd = eff.flash_attention ? 2.5 / eff.attention_backward_ratio * kernel.forward /
                                               kernel.backward * lt.attention_fwd
                                         : 2.0 * lt.attention_fwd;
  // Memory-bound element-wise kernels at achievable HBM bandwidth (STREAM triad), replicated across TP unless
  // sequence parallel; the activation function on the MLP intermediate is split by TP.
  double width = m.ffn;
  if (moe_layer) width = double(m.top_k * eff.moe_imbalance + m.shared_experts) * m.moe_ffn;
  const double hidden_bytes =
      (kNormAndResidualBytes + (m.dropout ? kDropoutBytes : 0.0)) * m.hidden / (c.sp() ? t : 1.0);
  const double mlp_bytes = (m.gated_mlp ? 6.0 : 4.0) * width / t;
  lt.elementwise_fwd = tokens * (hidden_bytes + mlp_bytes) / hbm_Bps;
  lt.elementwise_bwd = 2.0 * lt.elementwise_fwd;
  if (moe_layer) {
    // Token routing, as Megatron-Core's MoEAlltoAllTokenDispatcher runs it with Transformer Engine's fused
    // permutation (moe/token_dispatcher.py: permute -> all-to-all -> sort_chunks_by_idxs -> experts ->
    // sort_chunks_by_idxs -> all-to-all -> unpermute). The router is a BF16 GEMM of h x experts per token.
    // The permute reads each token once and writes top_k copies, the unpermute reads the top_k expert outputs
    // and writes one token; with EP > 1 and several experts per rank the received chunks are sorted by
    // expert before the grouped GEMM and back after it (each a read and a write of top_k copies). BF16
    // tokens, h x 2 B each. Backward moves the gradients through the same gathers and scatters: the same
    // bytes once (not the 2 x of the element-wise kernels above, which compute as well as move).
    const double routed = tokens / (c.sp() ? t : 1.0);
    const double k = m.top_k;
    double copies = k + 1.0 + k + 1.0;  // permute (1 read, k written) and unpermute (k read, 1 written)
    if (c.ep > 1 && m.experts / c.ep > 1) copies += 4.0 * k;
    const double routing = routed * copies * m.hidden * 2.0 / hbm_Bps;
    lt.elementwise_fwd += routing;
    lt.elementwise_bwd += routing;
    const GemmShape router{routed, double(m.experts), double(m.hidden)};
    const double bf16_e = r.bf16_efficiency * eff.sustained_fraction;
    auto router_time = [&](const GemmShape& x) {
      return gemm_time(x, r.bf16_peak_flops, bf16_e, 2.0, o, hbm_Bps);
    };
    lt.gemm_fwd += router_time(router);
    lt.gemm_bwd += router_time({router.m, router.k, router.n}) + router_time({router.k, router.n, router.m});
    lt.gemm_flops_fwd += router.flops();
  }
  return lt;
}

double logits_forward_time(const ModelSpec& m, const ParallelConfig& c, const Efficiencies& eff,
                           const PrecisionRecipe& r, double hbm_Bps) {
  const double tokens = double(c.micro_batch) * c.seq / c.cp;
  const GemmShape g{tokens, double(m.vocab) / c.tp, double(m.hidden)};
  const double gemm = gemm_time(g, r.bf16_peak_flops, r.bf16_efficiency * eff.sustained_fraction, 2.0,
                                eff.gemm_overhead_s, hbm_Bps);
  return gemm + kLogitsBytesPerElement * kLogitsPasses * g.m * g.n / hbm_Bps;
}

}  // namespace meshscope::model
