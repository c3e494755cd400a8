#include "analysis/model/predict.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/model/architecture.hpp"

namespace meshscope::model {

Link intra_node_link(const Efficiencies& eff) {
  return {eff.intra_node_alpha_s, eff.intra_node_Bps};
}
Link inter_node_link(const Efficiencies& eff) {
  return {eff.inter_node_alpha_s, eff.inter_node_Bps};
}

double bubble_fraction(Schedule schedule, int pp, int micro_batches, int virtual_stages) {
  if (pp <= 1) return 0.0;
  const double p = pp;
  const double m = micro_batches;
  // Narayanan et al. 2021 §2.2.1 (GPipe and 1F1B): (p-1)/(m+p-1) of the step; §2.2.2 (interleaved): the
  // bubble shrinks by v: (p-1)/(v m + p - 1).
  const double v = schedule == Schedule::kInterleaved ? virtual_stages : 1.0;
  return (p - 1) / (v * m + p - 1);
}

namespace {

struct LayerCost {  // one layer, one micro-batch, one GPU, forward pass
  double linear = 0;
  double attention = 0;
  double elementwise = 0;
  double total() const { return linear + attention + elementwise; }
};

LayerCost layer_forward(const ModelSpec& m, const ParallelConfig& c, const Efficiencies& eff, double peak,
                        double gemm_eff, double hbm_Bps, bool moe_layer) {
  const double tokens = double(c.micro_batch) * c.seq / c.cp;
  const double t = c.tp;
  LayerCost cost;
  // Roofline with a per-kernel cost fitted to the GEMM-size curve (Williams et al. 2009; Azure
  // AI-benchmarking-guide cuBLASLt sweep): t = F / (peak x efficiency) + kernels x overhead.
  const int gemms = m.gated_mlp ? 5 : 4;
  cost.linear =
      tokens * linear_flops_per_token(m, moe_layer) / t / (peak * gemm_eff) + gemms * eff.gemm_overhead_s;
  // Attention core at the measured attention rate (FlashAttention-2 or unfused PyTorch attention, Azure
  // AI-benchmarking-guide), in BF16 whatever the GEMM precision.
  const double attention_rate =
      eff.flash_attention ? eff.attention_flash_flops_per_s : eff.attention_standard_flops_per_s;
  cost.attention = tokens * attention_flops_per_token(m, c.seq) / t / attention_rate;
  // Memory-bound element-wise kernels at achievable HBM bandwidth (STREAM triad): two norms (read + write,
  // 4h bytes each), two residual adds (6h), dropout (5h each) on h-wide tensors, replicated across TP unless
  // sequence parallel; the activation function reads and writes the MLP intermediate (4f, SwiGLU 6f), /TP.
  double width = m.ffn;
  if (moe_layer) width = double(m.top_k + m.shared_experts) * m.moe_ffn;
  const double hidden_bytes = (20.0 + (m.dropout ? 10.0 : 0.0)) * m.hidden / (c.sp() ? t : 1.0);
  const double mlp_bytes = (m.gated_mlp ? 6.0 : 4.0) * width / t;
  cost.elementwise = tokens * (hidden_bytes + mlp_bytes) / hbm_Bps;
  return cost;
}

}  // namespace

void predict_into(const ModelSpec& m, const HardwareSpec& hw, const ParallelConfig& c,
                  const Efficiencies& eff, Prediction& out) {
  out.config = c;
  out.time = {};
  out.micro_batch = {};
  out.comm = {};
  const bool fp8 = c.precision == Precision::kFP8 && hw.peak_tflops_fp8 > 0;
  const double peak = (fp8 ? hw.peak_tflops_fp8 : hw.peak_tflops_bf16) * 1e12;
  const double gemm_eff = fp8 ? eff.gemm_fp8 : eff.gemm_bf16;
  const double hbm_Bps = hw.hbm_tbps * 1e12 * eff.hbm;
  const Link intra = intra_node_link(eff);
  const Link inter = inter_node_link(eff);
  const int G = hw.gpus_per_node;
  const double t = c.tp;
  const double p = c.pp;
  const int micro = c.micro_batches();
  const double tokens = double(c.micro_batch) * c.seq / c.cp;  // per micro-batch per rank of a CP group
  const double layers_per_stage = double(m.layers) / c.pp;
  const double moe_fraction = m.is_moe() ? double(m.layers - m.dense_layers) / m.layers : 0.0;

  out.memory = memory_per_gpu(m, hw, c, eff);
  out.fits = out.memory.fits();

  // ---- compute per micro-batch on the slowest stage (the last one carries the logits) -------------------
  const LayerCost dense = layer_forward(m, c, eff, peak, gemm_eff, hbm_Bps, false);
  const LayerCost moe = m.is_moe() ? layer_forward(m, c, eff, peak, gemm_eff, hbm_Bps, true) : dense;
  const double layer_fwd = (1 - moe_fraction) * dense.total() + moe_fraction * moe.total();
  const double layer_attention = (1 - moe_fraction) * dense.attention + moe_fraction * moe.attention;
  // Output projection and cross-entropy: 2Vh FLOPs per token (Narayanan et al. 2021 eq. 3), vocab-parallel
  // /TP.
  const double logits_fwd = tokens * logits_flops_per_token(m) / t / (peak * gemm_eff) + eff.gemm_overhead_s +
                            4.0 * tokens * m.vocab / t * 3.0 / hbm_Bps;
  MicroBatchTimes& mb = out.micro_batch;
  mb.forward = layers_per_stage * layer_fwd + logits_fwd;
  // Backward = 2 x forward: grads w.r.t. inputs and weights (Narayanan et al. 2021 eq. 3, "backward pass
  // 2x").
  mb.backward = 2.0 * mb.forward;
  // Full recompute repeats each layer's forward before its backward; selective repeats the attention core
  // (Korthikanti et al. 2022 §5 / Table 4).
  if (c.recompute == Recompute::kFull) mb.recompute = layers_per_stage * layer_fwd;
  if (c.recompute == Recompute::kSelective) mb.recompute = layers_per_stage * layer_attention;

  // ---- tensor parallelism: Shoeybi et al. 2019 §3 (2 all-reduces forward, 2 backward per layer); with
  // sequence parallelism each all-reduce becomes all-gather + reduce-scatter (Korthikanti et al. 2022
  // §4.2.2). Recompute of the whole layer repeats the forward collectives.
  const double act_bytes = tokens * m.hidden * 2.0;
  if (c.tp > 1) {
    const GroupShape tp_group = group_shape(c.tp, 1, G);
    double per_layer = 0;
    if (c.sp()) {
      per_layer = 2.0 * (hierarchical_time(Collective::kAllGather, act_bytes, tp_group, intra, inter) +
                         hierarchical_time(Collective::kReduceScatter, act_bytes, tp_group, intra, inter));
    } else {
      per_layer = 2.0 * hierarchical_time(Collective::kAllReduce, act_bytes, tp_group, intra, inter);
    }
    const double passes = c.recompute == Recompute::kFull ? 3.0 : 2.0;  // forward, backward (, recompute)
    const double raw = passes * per_layer * layers_per_stage;
    out.comm.tp = raw * micro;
    mb.tp_exposed = raw * (1.0 - eff.overlap_tp);
  }

  // ---- context parallelism: ring attention (Liu et al. 2023; Megatron-LM context_parallel.md): cp-1 steps
  // forward exchanging K and V chunks, twice that backward (K, V and their gradients), overlapped with the
  // attention core of the current chunk.
  if (c.cp > 1) {
    const GroupShape cp_group = group_shape(c.cp, c.tp, G);
    const double kv_heads = m.is_mla() ? m.heads : m.kv_heads;
    const double d_k = m.is_mla() ? m.qk_nope_dim + m.qk_rope_dim : m.head_size();
    const double d_v = m.is_mla() ? m.v_head_dim : m.head_size();
    const double kv_bytes = tokens * kv_heads * (d_k + d_v) * 2.0 / std::min<double>(c.tp, kv_heads);
    const double step =
        hierarchical_time(Collective::kSendRecv, kv_bytes,
                          cp_group.nodes() > 1 ? GroupShape{2, 1} : GroupShape{2, 2}, intra, inter);
    const double fwd = (c.cp - 1) * step;
    const double bwd = 2.0 * fwd;
    const double hidden_fwd = eff.overlap_cp * layer_attention;
    const double exposed = std::max(0.0, fwd - hidden_fwd) + std::max(0.0, bwd - 2.0 * hidden_fwd);
    out.comm.cp = (fwd + bwd) * layers_per_stage * micro;
    mb.cp_exposed = exposed * layers_per_stage;
  }

  // ---- expert parallelism: dispatch and combine all-to-all per MoE layer forward and backward (Lepikhin et
  // al. 2021 §2.2; Megatron-LM MoE token dispatcher). Tokens are split over TP first with sequence parallel.
  if (m.is_moe() && c.ep > 1) {
    const GroupShape ep_group = group_shape(c.ep, c.tp * c.cp, G);
    const double bytes = tokens / (c.sp() ? t : 1.0) * m.top_k * m.hidden * 2.0;
    const double per_layer = 4.0 * hierarchical_time(Collective::kAllToAll, bytes, ep_group, intra, inter);
    const double raw = per_layer * layers_per_stage * moe_fraction;
    out.comm.ep = raw * micro;
    mb.ep_exposed = raw * (1.0 - eff.overlap_ep);
  }

  // ---- pipeline parallelism: one activation tensor per micro-batch and virtual stage each way, scattered
  // over TP ranks (Narayanan et al. 2021 §4.1 scatter/gather optimisation).
  const int v = c.schedule == Schedule::kInterleaved ? c.virtual_stages : 1;
  if (c.pp > 1) {
    const int stride = c.tp * c.cp * c.dp;
    const Link& link = stride >= G ? inter : intra;
    mb.p2p = collective_time(Collective::kSendRecv, act_bytes / t, 2, link);
    // Critical path: 2 transfers per micro-batch and virtual stage plus the fill and drain hops.
    const double transfers = 2.0 * (double(v) * micro + p - 1.0);
    out.comm.pp = transfers * mb.p2p;
    out.time.pp_p2p_exposed = (1.0 - eff.overlap_pp) * transfers * mb.p2p;
  }

  // ---- step composition -----------------------------------------------------------------------------------
  out.time.compute = micro * (mb.forward + mb.backward);
  out.time.recompute = micro * mb.recompute;
  out.time.tp_exposed = micro * mb.tp_exposed;
  out.time.cp_exposed = micro * mb.cp_exposed;
  out.time.ep_exposed = micro * mb.ep_exposed;
  // Fill and drain: (p-1)/v micro-batch times (Narayanan et al. 2021 §2.2), so that bubble / step =
  // (p-1)/(v m + p - 1) when communication is hidden.
  out.bubble_fraction = bubble_fraction(c.schedule, c.pp, micro, v);
  out.time.pp_bubble = c.pp > 1 ? (p - 1.0) / v * mb.total() : 0.0;

  // ---- data parallelism
  // -------------------------------------------------------------------------------------
  const ParameterCounts params = count_parameters(m);
  const StateBytesPerParam sb = state_bytes(eff.state_bytes);
  const double dense_stage =
      ((params.layers_total() - params.expert_total()) / c.pp + std::max(params.embedding, params.output)) /
      t;
  const double expert_stage = params.expert_total() / c.pp / (t * c.ep);
  auto dp_time = [&](double stage_params, int size, int stride) {
    if (size <= 1 || stage_params <= 0) return 0.0;
    const GroupShape g = group_shape(size, stride, G);
    const double grads = stage_params * sb.grads;
    const double weights = stage_params * sb.weights;
    const double fwd_hide = eff.overlap_dp * mb.forward;
    const double bwd_hide = eff.overlap_dp * mb.backward;
    if (c.zero == 3) {
      // ZeRO-3 / FSDP (Rajbhandari et al. 2020 §7.2.2; Zhao et al. 2023 §3): every micro-batch all-gathers
      // the weights for forward and again for backward (and recompute), and reduce-scatters the gradients,
      // prefetched behind that micro-batch's compute. 1.5x the all-reduce volume.
      // Issued layer by layer, so each layer pays the collective's latency.
      const double ag = layers_per_stage * hierarchical_time(Collective::kAllGather,
                                                             weights / layers_per_stage, g, intra, inter);
      const double rs = layers_per_stage * hierarchical_time(Collective::kReduceScatter,
                                                             grads / layers_per_stage, g, intra, inter);
      const double gathers_bwd = c.recompute == Recompute::kFull ? 2.0 : 1.0;
      out.comm.dp += micro * (ag * (1 + gathers_bwd) + rs);
      return micro * (std::max(0.0, ag - fwd_hide) + std::max(0.0, gathers_bwd * ag + rs - bwd_hide));
    }
    if (c.zero == 0) {
      // Gradient all-reduce, bucketed and overlapped with the last micro-batch's backward (Li et al. 2020,
      // PyTorch DDP §3.2.3).
      const double ar = hierarchical_time(Collective::kAllReduce, grads, g, intra, inter, Algorithm::kRing);
      out.comm.dp += ar;
      return std::max(0.0, ar - bwd_hide);
    }
    // ZeRO-1/2 (distributed optimizer): reduce-scatter the gradients (overlapped with backward), all-gather
    // the updated weights (overlapped with the next forward) (Rajbhandari et al. 2020 §5.1-5.2).
    const double rs = hierarchical_time(Collective::kReduceScatter, grads, g, intra, inter);
    const double ag = hierarchical_time(Collective::kAllGather, weights, g, intra, inter);
    out.comm.dp += rs + ag;
    return std::max(0.0, rs - bwd_hide) + std::max(0.0, ag - fwd_hide);
  };
  out.time.dp_exposed =
      dp_time(dense_stage, c.dp, c.tp * c.cp) + dp_time(expert_stage, c.dp / c.ep, c.tp * c.cp * c.ep);

  // ---- optimizer: Adam is memory bound; per parameter it reads fp32 weights, gradients, m and v and writes
  // weights, m, v and the bf16 copy (Rajbhandari et al. 2020 §3.1 state sizes): 26 + grad bytes.
  const double opt_params =
      dense_stage / (c.zero >= 1 ? c.dp : 1) + expert_stage / (c.zero >= 1 ? c.dp / c.ep : 1);
  out.time.optimizer = opt_params * (26.0 + sb.grads) / hbm_Bps;

  out.step_time_s = out.time.total();
  const double global_tokens = double(c.global_batch) * c.seq;
  const StepFlops flops = step_flops(m, global_tokens, c.seq, c.recompute);
  out.model_flops = flops.model;
  out.hardware_flops = flops.hardware;
  out.peak_flops = peak;
  out.model_tflops_per_gpu = flops.model / out.step_time_s / c.gpus / 1e12;
  out.hardware_tflops_per_gpu = flops.hardware / out.step_time_s / c.gpus / 1e12;
  // MFU: model FLOPs per second over peak (Chowdhery et al. 2022, PaLM App. B).
  out.mfu = out.model_tflops_per_gpu * 1e12 / peak;
  out.tokens_per_s = global_tokens / out.step_time_s;
}

Prediction predict(const ModelSpec& m, const HardwareSpec& hw, const ParallelConfig& c,
                   const Efficiencies& eff) {
  check_model(m);
  check_hardware(hw);
  const std::string problem = check_layout(c, m, hw);
  if (!problem.empty()) throw InvalidInput(problem);
  Prediction out;
  predict_into(m, hw, c, eff, out);
  return out;
}

}  // namespace meshscope::model
