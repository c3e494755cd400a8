#include "analysis/model/predict.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "analysis/model/architecture.hpp"
#include "analysis/model/compute.hpp"
#include "analysis/model/framework.hpp"
#include "analysis/model/pipeline.hpp"
#include "analysis/model/tp_overlap.hpp"

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

std::string check_moe_a2a_overlap(const ParallelConfig& c, const ModelSpec& m, const Efficiencies& eff) {
  if (!eff.moe_a2a_overlap) return {};
  if (!m.is_moe() || c.ep <= 1)
    return "--moe-a2a-overlap hides expert all-to-alls: it needs a mixture-of-experts model with --ep > 1";
  if (c.pp > 1 && c.schedule != Schedule::kInterleaved)
    return fmt::format(
        "--moe-a2a-overlap with --pp {}: Megatron-Core's combined 1F1B needs the interleaved schedule "
        "(--schedule interleaved --virtual-stages V)",
        c.pp);
  return {};
}

double combined_1f1b_share(int pp, int virtual_stages, int micro_batches, int group, int stage) {
  if (micro_batches <= 0) return 0.0;
  if (pp <= 1) return double(micro_batches - 1) / micro_batches;
  const int v = std::max(1, virtual_stages), n = group > 0 ? group : pp;
  const int chunks = v * micro_batches;
  const int alone = std::min(chunks, 2 * (pp - stage - 1) + (v - 1) * n);
  return double(chunks - alone) / chunks;
}

double combined_1f1b_exposed(double a2a_forward_s, double a2a_backward_s, double layer_forward_s,
                             double layer_backward_s, double share) {
  const double paired =
      std::max(0.0, a2a_forward_s - layer_backward_s) + std::max(0.0, a2a_backward_s - layer_forward_s);
  return (1.0 - share) * (a2a_forward_s + a2a_backward_s) + share * paired;
}

namespace {

// Adam's memory traffic per parameter besides the gradient: FP32 master weights read and written (8 B), the
// two FP32 moments read and written (16 B) and the BF16 weight copy written (2 B) (Rajbhandari et al. 2020
// §3.1 state sizes).
constexpr double kAdamBytesPerParam = 26.0;

// Everything the cost functions of one prediction share.
struct Context {
  Context(const ModelSpec& model, const HardwareSpec& hardware, const ParallelConfig& config,
          const Efficiencies& efficiencies, Prediction& prediction, bool explain_terms)
      : m(model),
        hw(hardware),
        c(config),
        eff(efficiencies),
        out(prediction),
        explain(explain_terms),
        recipe(precision_recipe(config.precision, hardware, efficiencies)) {}
  const ModelSpec& m;
  const HardwareSpec& hw;
  const ParallelConfig& c;
  const Efficiencies& eff;
  Prediction& out;
  bool explain = false;
  PrecisionRecipe recipe;
  double hbm_Bps = 0;
  Link intra{}, inter{};
  int G = 8;          // GPUs per NVLink domain
  int micro = 1;      // micro-batches per pipeline per step
  int v = 1;          // virtual stages per GPU
  double tokens = 0;  // tokens per micro-batch on one rank of a CP group
  LayerTimes dense{}, moe{}, dense_bf16{}, moe_bf16{};
  double logits_fwd = 0;
  double mtp_projection_fwd = 0;  // one multi-token-prediction module's projection and output head, forward
  // Tensor parallelism per layer, the same on every stage (prepare_tensor_parallel): the plain collectives of
  // one pass of a dense and of a MoE layer, and what the overlapped ones add to each kind of layer's GEMMs.
  double tp_dense_pass = 0, tp_moe_pass = 0;
  OverlappedLayer tp_overlap_dense{}, tp_overlap_dense_bf16{}, tp_overlap_moe{}, tp_overlap_moe_bf16{};

  void term(const char* part, std::string name, double seconds, std::string formula, std::string inputs) {
    if (explain) out.terms.push_back({part, std::move(name), seconds, std::move(formula), std::move(inputs)});
  }
};

// What one pipeline stage costs per micro-batch, and what it holds.
struct StageWork {
  int index = 0, layers = 0, moe_layers = 0, bf16_layers = 0;
  double gemm = 0, attention = 0, elementwise = 0, quantize = 0, logits = 0;  // forward + backward
  MicroBatchTimes mb;
  double tp_raw = 0, cp_raw = 0, ep_raw = 0;  // per micro-batch, before overlap
  double tp_overlapped =
      0;  // what the TP collectives add when overlapped with their GEMMs (sequence parallel)
  double total() const { return mb.total(); }
};

// ---- compute: layers by their GEMM shapes, attention, element-wise; logits on the last stage
// ---------------
void stage_compute(Context& x, StageWork& s) {
  const int dense = s.layers - s.moe_layers;
  const int bf16_moe = std::min(s.bf16_layers, s.moe_layers);
  const int bf16_dense = s.bf16_layers - bf16_moe;
  // Inference runs the forward alone (and never recomputes: resolve() refuses recompute with it).
  const double backward = x.c.inference() ? 0.0 : 1.0;
  auto add = [&](const LayerTimes& lt, double count) {
    s.mb.forward += count * lt.forward();
    s.mb.backward += backward * count * lt.backward();
    s.gemm += count * (lt.gemm_fwd + backward * lt.gemm_bwd);
    s.attention += count * (lt.attention_fwd + backward * lt.attention_bwd);
    s.elementwise += count * (lt.elementwise_fwd + backward * lt.elementwise_bwd);
    s.quantize += count * (lt.quantize_fwd + backward * lt.quantize_bwd);
    // Full recompute repeats each layer's forward before its backward; selective repeats the attention core
    // (Korthikanti et al. 2022 §5 / Table 4).
    if (x.c.recompute == Recompute::kFull) s.mb.recompute += count * lt.forward();
    if (x.c.recompute == Recompute::kSelective) s.mb.recompute += count * lt.attention_fwd;
  };
  add(x.dense, dense - bf16_dense);
  add(x.dense_bf16, bf16_dense);
  add(x.moe, s.moe_layers - bf16_moe);
  add(x.moe_bf16, bf16_moe);
  if (s.index == x.c.pp - 1) {
    // Output projection and cross-entropy (Narayanan et al. 2021 eq. 3: 2Vh FLOPs per token, backward 2x).
    // Each multi-token-prediction module adds its 2h -> h projection and another pass through the output
    // head.
    const double fwd = x.logits_fwd + x.m.mtp_layers * x.mtp_projection_fwd;
    s.mb.forward += fwd;
    s.mb.backward += backward * 2.0 * fwd;
    s.logits = (1.0 + backward * 2.0) * fwd;
  }
}

// ---- tensor parallelism: Shoeybi et al. 2019 §3 (2 all-reduces forward, 2 backward per layer); with
// sequence parallelism each all-reduce becomes all-gather + reduce-scatter (Korthikanti et al. 2022 §4.2.2).
// Full recompute repeats the forward collectives. A MoE layer under sequence parallelism has the attention's
// pair only: Megatron-Core requires sequence parallelism for MoE with TP, and its dispatcher sends each TP
// rank's sequence shard to the experts over the expert-parallel group (the expert-TP gather, where etp > 1,
// is the EP term's), so no TP collective surrounds the MLP (Liu et al. 2025, "MoE Parallel Folding").
struct TpCollectives {
  double all_gather = 0, reduce_scatter = 0, all_reduce = 0;  // one collective of a layer's activations
};
// ALL_GATHER_BYTES per element: 2 (BF16), or a quantised recipe's operand bytes where the gathered tensor is
// already the GEMM's FP8 input (Transformer Engine's userbuffers: fp8_buf for the all-gather overlaps).
TpCollectives tp_collectives(const Context& x, const Link& intra, const Link& inter,
                             double all_gather_bytes = 2.0) {
  const double act_bytes = x.tokens * x.m.hidden * 2.0;
  const GroupShape g = group_shape(x.c.tp, 1, x.G);
  if (x.c.sp())
    return {hierarchical_time(Collective::kAllGather, act_bytes * all_gather_bytes / 2.0, g, intra, inter),
            hierarchical_time(Collective::kReduceScatter, act_bytes, g, intra, inter), 0.0};
  return {0.0, 0.0, hierarchical_time(Collective::kAllReduce, act_bytes, g, intra, inter)};
}

double tp_per_layer(const Context& x, const Link& intra, const Link& inter, bool moe_layer) {
  const TpCollectives t = tp_collectives(x, intra, inter);
  const double pairs = moe_layer && x.c.sp() ? 1.0 : 2.0;
  return pairs * (x.c.sp() ? t.all_gather + t.reduce_scatter : t.all_reduce);
}

// Forward, backward (, recompute); inference the forward alone.
double tp_passes(const ParallelConfig& c) {
  if (c.inference()) return 1.0;
  return c.recompute == Recompute::kFull ? 3.0 : 2.0;
}

double tp_raw(const Context& x, const StageWork& s, const Link& intra, const Link& inter) {
  return tp_passes(x.c) * ((s.layers - s.moe_layers) * tp_per_layer(x, intra, inter, false) +
                           s.moe_layers * tp_per_layer(x, intra, inter, true));
}

// Transformer Engine fills its userbuffers from FP8 and MXFP8 quantizers only (NVFP4 raises "Unsupported
// quantizer for Userbuffers", module/base.py fill_userbuffers_buffer_for_all_gather): NVFP4 runs its TP
// collectives without the overlap.
bool userbuffers_run(const ParallelConfig& c) {
  return c.precision != Precision::kNVFP4;
}

UserbufferSettings userbuffer_settings(const Context& x) {
  UserbufferSettings u;
  u.tp = x.c.tp;
  u.sm_count = x.hw.sm_count;
  u.gemm_overhead_s = x.eff.gemm_overhead_s;
  u.second_gradient_gather = x.c.precision == Precision::kFP8Block;
  return u;
}

// Once per prediction: the per-layer TP costs every stage shares.
void prepare_tensor_parallel(Context& x) {
  if (x.c.tp <= 1) return;
  x.tp_dense_pass = tp_per_layer(x, x.intra, x.inter, false);
  x.tp_moe_pass = tp_per_layer(x, x.intra, x.inter, true);
  // The overlapped times only where they count (or are explained): search runs this a million times.
  if (!x.c.sp() || !userbuffers_run(x.c) || (x.eff.overlap_tp <= 0 && !x.explain)) return;
  const TpCollectives bf16 = tp_collectives(x, x.intra, x.inter);
  const TpCollectives quantized = tp_collectives(x, x.intra, x.inter, std::min(2.0, x.recipe.operand_bytes));
  const UserbufferSettings u = userbuffer_settings(x);
  auto overlapped = [&](const LayerTimes& lt, const TpCollectives& t) {
    return overlapped_tp_layer(lt, t.all_gather, t.reduce_scatter, u);
  };
  x.tp_overlap_dense = overlapped(x.dense, quantized);
  x.tp_overlap_dense_bf16 = overlapped(x.dense_bf16, bf16);
  x.tp_overlap_moe = overlapped(x.moe, quantized);
  x.tp_overlap_moe_bf16 = overlapped(x.moe_bf16, bf16);
}

// What the overlapped collectives add to the stage's GEMMs per micro-batch (tp_overlap.hpp), each layer with
// the GEMM times of its own kind.
double tp_overlapped(const Context& x, const StageWork& s) {
  const double backward = x.c.inference() ? 0.0 : 1.0;
  const double forward_passes = x.c.recompute == Recompute::kFull ? 2.0 : 1.0;
  const int bf16_moe = std::min(s.bf16_layers, s.moe_layers);
  const int bf16_dense = s.bf16_layers - bf16_moe;
  auto add = [&](const OverlappedLayer& o, int count) {
    return count > 0 ? count * (forward_passes * o.forward + backward * o.backward) : 0.0;
  };
  return add(x.tp_overlap_dense, s.layers - s.moe_layers - bf16_dense) +
         add(x.tp_overlap_dense_bf16, bf16_dense) + add(x.tp_overlap_moe, s.moe_layers - bf16_moe) +
         add(x.tp_overlap_moe_bf16, bf16_moe);
}

void tensor_parallel(Context& x, StageWork& s) {
  if (x.c.tp <= 1) return;
  s.tp_raw = tp_passes(x.c) * ((s.layers - s.moe_layers) * x.tp_dense_pass + s.moe_layers * x.tp_moe_pass);
  if (!x.c.sp()) {
    // All-reduces: Transformer Engine's userbuffers overlap needs sequence parallelism (Megatron-Core refuses
    // --tp-comm-overlap without it); a user's overlap_tp hides that share of the stage's GEMM time.
    s.mb.tp_exposed = std::max(0.0, s.tp_raw - x.eff.overlap_tp * s.gemm);
    return;
  }
  if (!userbuffers_run(x.c)) {
    s.mb.tp_exposed = s.tp_raw;
    return;
  }
  // Overlap (Transformer Engine userbuffers, Megatron-Core --tp-comm-overlap; Wang et al. 2023, "Overlap
  // communication with dependent computation via decomposition"): each collective chunked beside its GEMM
  // (tp_overlap.hpp); overlap_tp blends the overlapped and the plain times.
  s.tp_overlapped = tp_overlapped(x, s);
  s.mb.tp_exposed = (1.0 - x.eff.overlap_tp) * s.tp_raw + x.eff.overlap_tp * s.tp_overlapped;
}

// ---- context parallelism (Megatron-LM context_parallel.md; Transformer Engine's context-parallel
// attention, the variant chosen by --cp-comm-type):
//   ring (p2p; Liu et al. 2023, ring attention): cp-1 steps forward exchanging K and V chunks, twice that
//     backward (K, V and their gradients), overlapped with the attention core of the current chunk;
//   all-gather (Llama Team 2024 §3.3.2; TE AttnFuncWithCPAndKVAllGather, "KV all-gather between CP ranks is
//     exposed"): K and V all-gathered before the attention, again for the backward, and their gradients
//     reduce-scattered after it;
//   all-to-all (Jacobs et al. 2023, DeepSpeed-Ulysses; TE AttnFuncWithCPAndQKVOA2A): Q, K and V all-to-all'd
//     from a sequence split to a head split before the attention and the output back after it; backward the
//     same four for the gradients; exposed.
struct AttentionBytes {
  double q = 0, kv = 0, o = 0;  // one rank's tokens of one layer, BF16, over its TP shard of the heads
};
AttentionBytes attention_bytes(const Context& x) {
  const ModelSpec& m = x.m;
  const double kv_heads = m.is_mla() ? m.heads : m.kv_heads;
  const double d_k = m.is_mla() ? m.qk_nope_dim + m.qk_rope_dim : m.head_size();
  const double d_v = m.is_mla() ? m.v_head_dim : m.head_size();
  const double tp = x.c.tp;
  return {x.tokens * m.heads * d_k * 2.0 / tp,
          x.tokens * kv_heads * (d_k + d_v) * 2.0 / std::min<double>(tp, kv_heads),
          x.tokens * m.heads * d_v * 2.0 / tp};
}

double cp_step(const Context& x, const Link& intra, const Link& inter) {
  const GroupShape cp_group = group_shape(x.c.cp, x.c.tp, x.G);
  return hierarchical_time(Collective::kSendRecv, attention_bytes(x).kv,
                           cp_group.nodes() > 1 ? GroupShape{2, 1} : GroupShape{2, 2}, intra, inter);
}

// The exposed collectives of the all-gather and all-to-all variants, forward and backward, one layer.
struct CpCollectives {
  double forward = 0, backward = 0;
};
CpCollectives cp_collectives(const Context& x, const Link& intra, const Link& inter) {
  const GroupShape g = group_shape(x.c.cp, x.c.tp, x.G);
  const AttentionBytes b = attention_bytes(x);
  const double cp = x.c.cp;
  if (x.c.cp_comm == CpComm::kAllGather) {
    // The gathered K and V hold every rank's chunk: cp x one rank's bytes.
    const double gather = hierarchical_time(Collective::kAllGather, cp * b.kv, g, intra, inter);
    const double scatter = hierarchical_time(Collective::kReduceScatter, cp * b.kv, g, intra, inter);
    return {gather, gather + scatter};
  }
  // All-to-all of each tensor: a rank's bytes in, the same out (Q, K and V before, O after).
  auto a2a = [&](double bytes) { return hierarchical_time(Collective::kAllToAll, bytes, g, intra, inter); };
  const double four = a2a(b.q) + a2a(b.kv) + a2a(b.o);
  return {four, four};
}

void context_parallel(Context& x, StageWork& s) {
  if (x.c.cp <= 1) return;
  const double backward_passes = x.c.inference() ? 0.0 : 1.0;
  if (x.c.cp_comm != CpComm::kRing) {
    const CpCollectives c = cp_collectives(x, x.intra, x.inter);
    const double forward_passes = x.c.recompute == Recompute::kFull ? 2.0 : 1.0;
    s.cp_raw = (forward_passes * c.forward + backward_passes * c.backward) * s.layers;
    s.mb.cp_exposed = s.cp_raw;
    return;
  }
  const double fwd = (x.c.cp - 1) * cp_step(x, x.intra, x.inter);
  const double bwd = backward_passes * 2.0 * fwd;
  // s.attention holds forward + backward (2 x forward) in training, the forward alone in inference.
  const double layer_attention = s.layers > 0 ? s.attention / (x.c.inference() ? 1.0 : 3.0) / s.layers : 0.0;
  const double hidden_fwd = x.eff.overlap_cp * layer_attention;
  const double exposed = std::max(0.0, fwd - hidden_fwd) + std::max(0.0, bwd - 2.0 * hidden_fwd);
  s.cp_raw = (fwd + bwd) * s.layers;
  s.mb.cp_exposed = exposed * s.layers;
}

// ---- expert parallelism: dispatch and combine all-to-all per MoE layer forward and backward (Lepikhin et
// al. 2021 §2.2; Megatron-LM MoE token dispatcher). Tokens are split over TP first with sequence parallel;
// inside an NVLink domain (72 GPUs on GB200/GB300 NVL72) the exchange stays on NVLink. The expert grid is etp
// x ep x expert data parallel, etp fastest (Megatron-Core's expert RankGenerator, no CP in it): an EP group's
// ranks are etp apart. With etp > 1 each expert's shard needs every token routed to the expert, so the
// dispatched tokens are all-gathered in the ETP group and the combine reduce-scatters them
// (Megatron-Core MoEAlltoAllTokenDispatcher: gather_from_sequence_parallel_region over the expert TP group).
double ep_per_layer(const Context& x, const Link& intra, const Link& inter) {
  const double calls = x.c.inference() ? 2.0 : 4.0;  // dispatch and combine, forward (and backward)
  const double bytes =
      x.tokens / (x.c.sp() ? x.c.tp : 1.0) * x.m.top_k * x.m.hidden * 2.0 * x.eff.moe_imbalance;
  double time = 0;
  if (x.c.ep > 1)
    time += calls * hierarchical_time(Collective::kAllToAll, bytes, group_shape(x.c.ep, x.c.expert_tp(), x.G),
                                      intra, inter);
  if (x.c.expert_tp() > 1) {
    // Forward: all-gather after dispatch, reduce-scatter before combine; backward the reverse. The gathered
    // tensor holds the etp shards' tokens.
    const GroupShape g = group_shape(x.c.expert_tp(), 1, x.G);
    const double gathered = bytes * x.c.expert_tp();
    time += calls / 2.0 *
            (hierarchical_time(Collective::kAllGather, gathered, g, intra, inter) +
             hierarchical_time(Collective::kReduceScatter, gathered, g, intra, inter));
  }
  return time;
}

void expert_parallel(Context& x, StageWork& s) {
  if (!x.m.is_moe() || (x.c.ep <= 1 && x.c.expert_tp() <= 1)) return;
  const double per_layer = ep_per_layer(x, x.intra, x.inter);
  s.ep_raw = per_layer * s.moe_layers;
  if (x.eff.moe_a2a_overlap && !x.c.inference()) {
    // Forward and backward each hold half of a layer's all-to-alls (dispatch and combine each way); the layer
    // compute beside them is the MoE layer's own, forward and backward.
    const double share = combined_1f1b_share(x.c.pp, x.v, x.micro, x.c.microbatch_group, s.index);
    s.mb.ep_exposed =
        combined_1f1b_exposed(per_layer / 2, per_layer / 2, x.moe.forward(), x.moe.backward(), share) *
        s.moe_layers;
    return;
  }
  s.mb.ep_exposed = s.ep_raw * (1.0 - x.eff.overlap_ep);
}

// ---- pipeline parallelism: one activation tensor per micro-batch and virtual stage each way, scattered over
// TP ranks (Narayanan et al. 2021 §4.1 scatter/gather optimisation); 2(v m + p - 1) transfers on the critical
// path.
void pipeline_p2p(Context& x) {
  if (x.c.pp <= 1) return;
  const int stride = x.c.tp * x.c.cp * x.c.dp;
  const Link& link = stride >= x.G ? x.inter : x.intra;
  const double bytes = x.tokens * x.m.hidden * 2.0 / x.c.tp;
  x.out.micro_batch.p2p = collective_time(Collective::kSendRecv, bytes, 2, link);
  // Activations forward and (training) their gradients backward.
  const double transfers = (x.c.inference() ? 1.0 : 2.0) * (double(x.v) * x.micro + x.c.pp - 1.0);
  x.out.comm.pp = transfers * x.out.micro_batch.p2p;
  x.out.time.pp_p2p_exposed = (1.0 - x.eff.overlap_pp) * x.out.comm.pp;
  if (x.explain)  // the formatting costs more than the prediction: search runs this a million times
    x.term("pp_p2p_exposed", "pipeline sends", x.out.time.pp_p2p_exposed,
           "(1 - overlap_pp) x 2(v m + p - 1) x (alpha + S / B)",
           fmt::format("v={} m={} p={} S={:.3g} MB alpha={:.2f} us B={:.0f} GB/s overlap_pp={}", x.v, x.micro,
                       x.c.pp, bytes / 1e6, link.alpha_s * 1e6, link.bandwidth_Bps / 1e9, x.eff.overlap_pp));
}

// Parameters of one stage on one GPU: non-expert (sharded by TP) and routed experts (by ETP x EP).
struct StageParams {
  double dense = 0, experts = 0;
};
StageParams stage_params(const Context& x, const StageWork& s) {
  const ParameterCounts p = count_parameters(x.m);
  const double per_layer = p.attention_per_layer + p.norms_per_layer;
  const int dense_layers = s.layers - s.moe_layers;
  StageParams sp;
  sp.dense = per_layer * s.layers + p.dense_mlp_per_layer * dense_layers + p.shared_per_layer * s.moe_layers;
  if (s.index == 0) sp.dense += p.embedding;
  // The output projection on the last stage: its own matrix, or a copy of the tied embedding when PP > 1.
  if (s.index == x.c.pp - 1 && (!x.m.tied_embeddings || x.c.pp > 1))
    sp.dense += double(x.m.vocab) * x.m.hidden;
  sp.dense /= x.c.tp;
  sp.experts = p.expert_per_layer * s.moe_layers / (double(x.c.expert_tp()) * x.c.ep);
  return sp;
}

// ---- data parallelism (per stage; see dp_group_time) and the optimizer ------------------------------------
// One collective of the data-parallel group: its time per step (raw), the part not hidden behind compute
// (exposed) and, for --explain, the bandwidth (beta) part of raw (the rest is latency, alpha).
struct DpPart {
  const char* name = "";
  double raw = 0, exposed = 0, beta = 0, bytes = 0, calls = 0;
};

struct DpCost {
  double exposed = 0, raw = 0;
  std::array<DpPart, 3> parts{};
  int count = 0;
  void add(const DpPart& part) {
    parts[static_cast<size_t>(count++)] = part;
    raw += part.raw, exposed += part.exposed;
  }
};

DpCost dp_group_time(const Context& x, const StageWork& s, double params, int size, int stride) {
  DpCost cost;
  if (size <= 1 || params <= 0) return cost;
  const ParallelConfig& c = x.c;
  const GroupShape g = group_shape(size, stride, x.G);
  const StateBytesPerParam sb = state_bytes(x.eff.state_bytes);
  const bool fp8_weights =
      x.eff.fp8_param_gather && (c.precision == Precision::kFP8 || c.precision == Precision::kFP8Block);
  const double grads = params * sb.grads,
               weights = params * (fp8_weights ? quantized_operand_bytes(c.precision) : sb.weights);
  const double fwd_hide = x.eff.overlap_dp * s.mb.forward, bwd_hide = x.eff.overlap_dp * s.mb.backward;
  // One call of OP on BYTES; its bandwidth part (links without latency) only when explaining.
  const Link intra_beta{0, x.intra.bandwidth_Bps}, inter_beta{0, x.inter.bandwidth_Bps};
  auto call = [&](Collective op, double bytes, double& beta, Algorithm algorithm = Algorithm::kRing) {
    if (x.explain) beta = hierarchical_time(op, bytes, g, intra_beta, inter_beta, algorithm);
    return hierarchical_time(op, bytes, g, x.intra, x.inter, algorithm);
  };
  if (c.zero == 3) {
    // ZeRO-3 / FSDP (Rajbhandari et al. 2020 §7.2.2; Zhao et al. 2023 §3): every micro-batch all-gathers the
    // weights for forward and again for backward (and recompute), and reduce-scatters the gradients, layer by
    // layer (each paying the collective's latency), prefetched behind that micro-batch's compute.
    const double layers = std::max(1, s.layers);
    double ag_beta = 0, rs_beta = 0;
    const double ag = call(Collective::kAllGather, weights / layers, ag_beta);
    const double rs = call(Collective::kReduceScatter, grads / layers, rs_beta);
    const double gathers_bwd = c.recompute == Recompute::kFull ? 2.0 : 1.0;
    const double m = x.micro;
    // The backward gathers and the reduce-scatters share what the backward hides, in proportion to their
    // time.
    const double bwd_raw = gathers_bwd * ag + rs;
    const double bwd_exposed = std::max(0.0, bwd_raw - bwd_hide);
    const double share = bwd_raw > 0 ? bwd_exposed / bwd_raw : 0.0;
    cost.add({"FSDP weight all-gather (forward)", m * layers * ag, m * std::max(0.0, layers * ag - fwd_hide),
              m * layers * ag_beta, weights / layers, m * layers});
    cost.add({gathers_bwd > 1 ? "FSDP weight all-gather (backward and recompute)"
                              : "FSDP weight all-gather (backward)",
              m * gathers_bwd * layers * ag, m * share * gathers_bwd * layers * ag,
              m * gathers_bwd * layers * ag_beta, weights / layers, m * gathers_bwd * layers});
    cost.add({"FSDP gradient reduce-scatter", m * layers * rs, m * share * layers * rs, m * layers * rs_beta,
              grads / layers, m * layers});
    return cost;
  }
  if (c.zero == 0) {
    // Gradient all-reduce, bucketed and overlapped with the last micro-batch's backward (Li et al. 2020,
    // PyTorch DDP §3.2.3).
    double beta = 0;
    const double ar = call(Collective::kAllReduce, grads, beta, Algorithm::kRing);
    cost.add({"gradient all-reduce", ar, std::max(0.0, ar - bwd_hide), beta, grads, 1});
    return cost;
  }
  // ZeRO-1/2 (distributed optimizer): reduce-scatter the gradients (overlapped with backward), all-gather the
  // updated weights (overlapped with the next forward) (Rajbhandari et al. 2020 §5.1-5.2).
  double rs_beta = 0, ag_beta = 0;
  const double rs = call(Collective::kReduceScatter, grads, rs_beta);
  const double ag = call(Collective::kAllGather, weights, ag_beta);
  cost.add({"gradient reduce-scatter", rs, std::max(0.0, rs - bwd_hide), rs_beta, grads, 1});
  cost.add({"weight all-gather", ag, std::max(0.0, ag - fwd_hide), ag_beta, weights, 1});
  return cost;
}

struct StageTail {  // end-of-step work of one stage
  double dp_exposed = 0, dp_raw = 0, optimizer = 0, opt_params = 0;
  DpCost dense, experts;
  int replicas = 1, expert_replicas = 1;
};

StageTail stage_tail(const Context& x, const StageWork& s) {
  const ParallelConfig& c = x.c;
  const StageParams p = stage_params(x, s);
  StageTail t;
  if (c.inference()) return t;  // no gradients to reduce, no optimizer step
  // Gradients are reduced (and ZeRO state sharded) over the dp x cp ranks that hold the same weights
  // (Megatron-Core data-parallel group with context parallel); rank order TP, CP, DP puts them tp apart.
  t.replicas = c.dp * c.cp;
  t.dense = dp_group_time(x, s, p.dense, t.replicas, c.tp);
  // Routed experts: their replicas are the expert-data-parallel group, etp x ep apart in the expert grid.
  t.expert_replicas = c.expert_data_parallel();
  t.experts = dp_group_time(x, s, p.experts, t.expert_replicas, c.expert_tp() * c.ep);
  t.dp_exposed = t.dense.exposed + t.experts.exposed;
  t.dp_raw = t.dense.raw + t.experts.raw;
  // Optimizer: Adam is memory bound; ZeRO >= 1 updates only this rank's shard.
  t.opt_params = p.dense / (c.zero >= 1 ? t.replicas : 1) + p.experts / (c.zero >= 1 ? t.expert_replicas : 1);
  t.optimizer = t.opt_params * (kAdamBytesPerParam + state_bytes(x.eff.state_bytes).grads) / x.hbm_Bps;
  return t;
}

void explain_dp(Context& x, const StageTail& t, size_t stage) {
  if (!x.explain) return;
  const char* hidden =
      x.c.zero == 3 ? "exposed = raw - overlap_dp x (micro-batch forward or backward) per micro-batch"
                    : (x.c.zero == 0 ? "exposed = raw - overlap_dp x last backward"
                                     : "exposed = raw - overlap_dp x (last backward or first forward)");
  auto emit = [&](const DpCost& cost, int size, const char* group, const char* members) {
    for (int i = 0; i < cost.count; ++i) {
      const DpPart& part = cost.parts[static_cast<size_t>(i)];
      x.term("dp_exposed", fmt::format("{}{}", group, part.name), part.exposed,
             fmt::format("calls x (alpha steps + S / B); {}", hidden),
             fmt::format("group {} ({}), zero {}, S = {:.4g} MB x {:.4g} calls; alpha part {:.4g} ms, beta "
                         "part {:.4g} ms, raw {:.4g} ms (stage {}), overlap_dp {}",
                         size, members, x.c.zero, part.bytes / 1e6, part.calls, (part.raw - part.beta) * 1e3,
                         part.beta * 1e3, part.raw * 1e3, stage, x.eff.overlap_dp));
    }
  };
  emit(t.dense, t.replicas, "", "dp x cp");
  emit(t.experts, t.expert_replicas, "expert ", "tp x cp x dp / (etp x ep)");
  if (x.c.inference())
    x.term("dp_exposed", "data-parallel gradients / weights", 0.0,
           "inference: no gradients, no optimizer step", fmt::format("dp {} cp {}", x.c.dp, x.c.cp));
  else if (t.dense.count + t.experts.count == 0)
    x.term("dp_exposed", "data-parallel gradients / weights", 0.0, "no data-parallel replicas",
           fmt::format("dp {} cp {}", x.c.dp, x.c.cp));
}

// ---- composition
// --------------------------------------------------------------------------------------------
std::vector<StageWork> build_stages(Context& x) {
  const ParallelConfig& c = x.c;
  std::vector<StageWork> stages(static_cast<size_t>(c.pp));
  int first = 0;
  const int bf16_from = x.m.layers - std::max(0, x.eff.nvfp4_bf16_layers);
  for (int i = 0; i < c.pp; ++i) {
    StageWork& s = stages[static_cast<size_t>(i)];
    s.index = i;
    s.layers = x.out.stage_layers[static_cast<size_t>(i)];
    s.moe_layers = moe_layers_in(x.m, first, s.layers);
    if (i == c.pp - 1 && x.m.mtp_layers > 0) {
      // Multi-token prediction on the last stage: layers of the model's last kind (with their communication).
      s.layers += x.m.mtp_layers;
      if (x.m.is_moe_layer(x.m.layers - 1)) s.moe_layers += x.m.mtp_layers;
    }
    if (c.precision == Precision::kNVFP4)
      s.bf16_layers = std::max(0, first + s.layers - std::max(first, bf16_from));
    first += s.layers;
    stage_compute(x, s);
    tensor_parallel(x, s);
    context_parallel(x, s);
    expert_parallel(x, s);
  }
  return stages;
}

void explain_compute(Context& x, const StageWork& s) {
  if (!x.explain) return;
  const double m = x.micro;
  const std::string per =
      fmt::format("x {} layers x {} micro-batches (stage {})", s.layers, x.micro, s.index);
  x.term("compute", "linear-layer GEMMs", m * s.gemm,
         "per GEMM max(2MNK / (peak x eff), bytes / HBM) + overhead; backward = dgrad + wgrad",
         fmt::format("{:.0f} TFLOP/s x {:.3f}, overhead {:.1f} us, M = {:.0f} tokens {}",
                     x.recipe.peak_flops / 1e12, x.recipe.efficiency, x.eff.gemm_overhead_s * 1e6, x.tokens,
                     per));
  const FlashKernelRates kernel = flash_kernel_rates(x.eff);
  x.term("compute", "attention core", m * s.attention,
         "(causal ? 1/2 : 1) x 2 s a (d_qk + d_v) tokens / t x (1 / fwd rate + 2.5 / bwd rate) (flash; "
         "standard: 3 / fwd rate)",
         fmt::format("{} attention at {:.0f} TFLOP/s (the kernel family's rate) x {:.3f} forward, x {:.3f} "
                     "backward, causal {} {}",
                     attention_kernel_name(x.eff),
                     (x.eff.flash_attention ? (x.eff.cudnn_attention ? x.eff.attention_fused_flops_per_s
                                                                     : x.eff.attention_flash_flops_per_s)
                                            : x.eff.attention_standard_flops_per_s) /
                         1e12,
                     kernel.forward, kernel.backward, x.eff.causal && x.eff.flash_attention ? "skip" : "full",
                     per));
  x.term("compute", "element-wise kernels", m * s.elementwise,
         "3 x tokens x bytes per token / (HBM x hbm_eff)",
         fmt::format("HBM {:.0f} GB/s achievable {}", x.hbm_Bps / 1e9, per));
  if (s.quantize > 0)
    x.term("compute", "FP8/FP4 quantisation casts", m * s.quantize, "elements cast x bytes per element / HBM",
           fmt::format("{} B per element {}", x.recipe.quantize_bytes, per));
  if (s.logits > 0)
    x.term("compute", "output layer + cross-entropy", m * s.logits,
           "3 x (2 tokens h V / t GEMM + 12 B x tokens V / t)",
           fmt::format("V = {} BF16 {}", x.m.vocab, per));
  if (x.c.recompute != Recompute::kNone)
    x.term("recompute", "recomputed forward", m * s.mb.recompute,
           std::string("m x ") + (x.c.recompute == Recompute::kFull ? "layer forward" : "attention forward"),
           fmt::format("recompute {} {}", to_string(x.c.recompute), per));
}

void explain_cp(Context& x, const StageWork& s) {
  const AttentionBytes b = attention_bytes(x);
  const std::string bytes = fmt::format("Q {:.3g} MB, K+V {:.3g} MB, O {:.3g} MB per rank and layer",
                                        b.q * 1e-6, b.kv * 1e-6, b.o * 1e-6);
  struct Wording {
    const char* name;
    const char* inference;
    const char* training;
  };
  static constexpr Wording kWording[] = {
      {"ring-attention K/V exchange",
       "m x layers x (cp - 1) x send(alpha, K+V / B) minus the attention it hides behind",
       "m x layers x 3 (cp - 1) x send(alpha, K+V / B) minus the attention it hides behind"},
      {"K/V all-gather + gradient reduce-scatter (exposed)", "m x layers x all_gather(alpha, cp K+V / B)",
       "m x layers x (2 all_gather + reduce_scatter)(alpha, cp K+V / B) [+ a gather per recomputed forward]"},
      {"Q/K/V/O all-to-all (exposed)", "m x layers x all_to_all(alpha, {Q, K+V, O} / B)",
       "m x layers x 2 x all_to_all(alpha, {Q, K+V, O} / B) [+ the forward's per recomputed forward]"},
  };  // by CpComm
  const Wording& w = kWording[static_cast<int>(x.c.cp_comm)];
  const std::string overlap =
      x.c.cp_comm == CpComm::kRing ? fmt::format(" overlap_cp {}", x.eff.overlap_cp) : std::string();
  x.term("cp_exposed", w.name, x.micro * s.mb.cp_exposed, x.c.inference() ? w.inference : w.training,
         fmt::format("cp {}{}; {}", x.c.cp, overlap, bytes));
}

void explain_comm(Context& x, const StageWork& s) {
  if (!x.explain) return;
  const Link no_alpha_intra{0, x.intra.bandwidth_Bps}, no_alpha_inter{0, x.inter.bandwidth_Bps};
  auto split = [&](double with_alpha, double without) {
    return fmt::format("alpha part {:.3g} ms, beta part {:.3g} ms per micro-batch",
                       (with_alpha - without) * 1e3, without * 1e3);
  };
  const double passes = tp_passes(x.c);
  if (x.c.tp > 1) {
    const std::string alpha_beta = split(s.tp_raw, tp_raw(x, s, no_alpha_intra, no_alpha_inter));
    const std::string common =
        fmt::format("tp {} passes {} S = {:.3g} MB, a MoE layer the attention's pair only", x.c.tp, passes,
                    x.tokens * x.m.hidden * 2e-6);
    if (x.c.sp()) {
      const UserbufferSettings u = userbuffer_settings(x);
      x.term("tp_exposed", "TP all-gather + reduce-scatter", x.micro * s.mb.tp_exposed,
             "m x ((1 - overlap_tp) x passes x layers x (all_gather + reduce_scatter)(alpha, S / B) + "
             "overlap_tp x what they add to their GEMMs: ring exchange (QKV, MLP-up forward; output "
             "dgrads), pipelined reduce-scatter (attention-out, MLP-down forward), bulk beside the column "
             "GEMMs' dgrad and wgrad)",
             fmt::format("{}; {}; overlapped adds {:.3g} ms per micro-batch (chunks: tp {}, pipeline {}; "
                         "{} of {} SMs for communication{}); overlap_tp {}",
                         common, alpha_beta, s.tp_overlapped * 1e3, u.tp, u.pipeline_chunks, u.comm_sms,
                         u.sm_count, u.sm_count > 0 ? "" : " (SM count unknown: GEMMs keep every SM)",
                         userbuffers_run(x.c) ? fmt::format("{}", x.eff.overlap_tp)
                                              : std::string("0 (NVFP4: Transformer Engine's userbuffers "
                                                            "take FP8 and MXFP8 only)")));
    } else {
      x.term("tp_exposed", "TP all-reduce", x.micro * s.mb.tp_exposed,
             "m x max(0, passes x layers x 2 x all_reduce(alpha, S / B) - overlap_tp x GEMM time)",
             fmt::format("{}; {}; overlap_tp {}", common, alpha_beta, x.eff.overlap_tp));
    }
  }
  if (x.c.cp > 1) explain_cp(x, s);
  if (x.m.is_moe() && (x.c.ep > 1 || x.c.expert_tp() > 1))
    x.term("ep_exposed",
           x.c.expert_tp() > 1 ? "MoE dispatch + combine all-to-all, expert-TP all-gather + reduce-scatter"
                               : "MoE dispatch + combine all-to-all",
           x.micro * s.mb.ep_exposed,
           x.c.inference() ? "m x MoE layers x 2 x (all_to_all(alpha, S / B) [+ etp gather/scatter of etp "
                             "S]) x (1 - overlap_ep), "
                             "S = top_k tokens h 2 B x imbalance"
                           : "m x MoE layers x 4 x (all_to_all(alpha, S / B) [+ etp gather/scatter of etp "
                             "S]) x (1 - overlap_ep), "
                             "S = top_k tokens h 2 B x imbalance",
           fmt::format(
               "ep {} etp {} MoE layers {} imbalance {}; {}; {}", x.c.ep, x.c.expert_tp(), s.moe_layers,
               x.eff.moe_imbalance,
               split(s.ep_raw, s.moe_layers * ep_per_layer(x, no_alpha_intra, no_alpha_inter)),
               x.eff.moe_a2a_overlap && !x.c.inference()
                   ? fmt::format(
                         "combined 1F1B instead of overlap_ep: {:.0f} % of the stage's micro-batch "
                         "chunks paired, each all-to-all beside the other direction's layer compute",
                         100.0 * combined_1f1b_share(x.c.pp, x.v, x.micro, x.c.microbatch_group, s.index))
                   : fmt::format("overlap_ep {}", x.eff.overlap_ep)));
}

void compose(Context& x, const std::vector<StageWork>& stages) {
  Prediction& out = x.out;
  size_t pace = 0;
  for (size_t i = 1; i < stages.size(); ++i)
    if (stages[i].total() > stages[pace].total()) pace = i;
  const StageWork& s = stages[pace];
  out.pacing_stage = static_cast<int>(pace);
  out.micro_batch.forward = s.mb.forward, out.micro_batch.backward = s.mb.backward;
  out.micro_batch.recompute = s.mb.recompute, out.micro_batch.tp_exposed = s.mb.tp_exposed;
  out.micro_batch.cp_exposed = s.mb.cp_exposed, out.micro_batch.ep_exposed = s.mb.ep_exposed;
  out.stages.clear();
  for (const StageWork& w : stages) out.stages.push_back(w.mb);
  for (MicroBatchTimes& t : out.stages) t.p2p = out.micro_batch.p2p;
  out.comm.tp = x.micro * s.tp_raw, out.comm.cp = x.micro * s.cp_raw, out.comm.ep = x.micro * s.ep_raw;
  out.time.compute = x.micro * (s.mb.forward + s.mb.backward);
  out.time.recompute = x.micro * s.mb.recompute;
  out.time.tp_exposed = x.micro * s.mb.tp_exposed;
  out.time.cp_exposed = x.micro * s.mb.cp_exposed;
  out.time.ep_exposed = x.micro * s.mb.ep_exposed;
  // Fill and drain: every other stage's micro-batch once, over v (Narayanan et al. 2021 §2.2): (p-1)/v
  // micro-batch times when the stages are balanced, so that bubble / step = (p-1)/(v m + p - 1).
  double others = 0;
  for (size_t i = 0; i < stages.size(); ++i)
    if (i != pace) others += stages[i].total();
  out.bubble_fraction = bubble_fraction(x.c.schedule, x.c.pp, x.micro, x.v);
  out.time.pp_bubble = x.c.pp > 1 ? others / x.v : 0.0;
  explain_compute(x, s);
  explain_comm(x, s);
  if (x.explain)
    x.term("pp_bubble", "pipeline fill and drain", out.time.pp_bubble,
           "sum over the other stages of their micro-batch time / v (balanced: (p - 1) / v x t_mb)",
           fmt::format("p {} v {} slowest stage {} at {:.4g} ms per micro-batch", x.c.pp, x.v, pace,
                       s.total() * 1e3));
  StageTail worst;
  size_t worst_stage = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageTail t = stage_tail(x, stages[i]);
    if (i == 0 || t.dp_exposed + t.optimizer > worst.dp_exposed + worst.optimizer) worst = t, worst_stage = i;
  }
  out.time.dp_exposed = worst.dp_exposed, out.comm.dp = worst.dp_raw, out.time.optimizer = worst.optimizer;
  explain_dp(x, worst, worst_stage);
  if (x.explain)
    x.term(
        "optimizer", "Adam step", worst.optimizer, "params on this GPU x (26 + grad bytes) / (HBM x hbm_eff)",
        fmt::format("{:.4g} M params, HBM {:.0f} GB/s achievable", worst.opt_params / 1e6, x.hbm_Bps / 1e9));
}

void throughput(Context& x) {
  Prediction& out = x.out;
  const ParallelConfig& c = x.c;
  out.step_time_s = out.time.total();
  const double global_tokens = double(c.global_batch) * c.seq;
  const StepFlops flops = c.inference() ? forward_flops(x.m, global_tokens, c.seq)
                                        : step_flops(x.m, global_tokens, c.seq, c.recompute);
  out.model_flops = flops.model;
  out.hardware_flops = flops.hardware;
  out.peak_flops = x.recipe.peak_flops;
  out.model_tflops_per_gpu = flops.model / out.step_time_s / c.gpus / 1e12;
  out.hardware_tflops_per_gpu = flops.hardware / out.step_time_s / c.gpus / 1e12;
  // MFU: model FLOPs per second over the peak of the GEMM precision (Chowdhery et al. 2022, PaLM App. B).
  out.mfu = out.model_tflops_per_gpu * 1e12 / out.peak_flops;
  out.tokens_per_s = global_tokens / out.step_time_s;
}

}  // namespace

void predict_into(const ModelSpec& m, const HardwareSpec& hw, const ParallelConfig& c,
                  const Efficiencies& eff, Prediction& out, bool explain, const MemoryBreakdown* memory) {
  out.config = c;
  out.time = {};
  out.micro_batch = {};
  out.comm = {};
  out.terms.clear();
  Context x(m, hw, c, eff, out, explain);
  x.hbm_Bps = hw.hbm_tbps * 1e12 * eff.hbm;
  x.intra = intra_node_link(eff), x.inter = inter_node_link(eff);
  x.G = hw.gpus_per_node;
  x.micro = c.micro_batches();
  x.v = c.schedule == Schedule::kInterleaved ? c.virtual_stages : 1;
  x.tokens = double(c.micro_batch) * c.seq / c.cp;
  // Layers kept in BF16 exist only in the NVFP4 recipe (build_stages).
  const bool bf16_layers = c.precision == Precision::kNVFP4 && eff.nvfp4_bf16_layers > 0;
  x.dense = layer_times(m, c, eff, x.recipe, x.hbm_Bps, false, false);
  if (bf16_layers) x.dense_bf16 = layer_times(m, c, eff, x.recipe, x.hbm_Bps, false, true);
  if (m.is_moe()) {
    x.moe = layer_times(m, c, eff, x.recipe, x.hbm_Bps, true, false);
    if (bf16_layers) x.moe_bf16 = layer_times(m, c, eff, x.recipe, x.hbm_Bps, true, true);
  }
  x.logits_fwd = logits_forward_time(m, c, eff, x.recipe, x.hbm_Bps);
  if (m.mtp_layers > 0) {
    const GemmShape projection{x.tokens, double(m.hidden) / c.tp, 2.0 * m.hidden};
    x.mtp_projection_fwd = x.logits_fwd + gemm_time(projection, x.recipe.bf16_peak_flops,
                                                    x.recipe.bf16_efficiency * eff.sustained_fraction, 2.0,
                                                    eff.gemm_overhead_s, x.hbm_Bps);
  }
  out.stage_layers = stage_layers(m, c);
  out.memory = memory ? *memory : memory_per_gpu(m, hw, c, eff);
  out.fits = out.memory.fits();
  pipeline_p2p(x);
  prepare_tensor_parallel(x);
  const std::vector<StageWork> stages = build_stages(x);
  compose(x, stages);
  throughput(x);
}

Prediction predict(const ModelSpec& m, const HardwareSpec& hw, const ParallelConfig& c,
                   const Efficiencies& eff, bool explain) {
  check_model(m);
  check_hardware(hw);
  const std::string problem = check_layout(c, m, hw);
  if (!problem.empty()) throw InvalidInput(problem);
  const std::string overlap = check_moe_a2a_overlap(c, m, eff);
  if (!overlap.empty()) throw InvalidInput(overlap);
  Prediction out;
  predict_into(m, hw, c, eff, out, explain);
  return out;
}

}  // namespace meshscope::model
