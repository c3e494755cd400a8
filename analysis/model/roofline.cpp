#include "analysis/model/roofline.hpp"

#include <algorithm>

#include "analysis/model/architecture.hpp"
#include "analysis/model/collectives.hpp"

namespace meshscope::model {

const char* to_string(RooflineBound bound) {
  switch (bound) {
    case RooflineBound::kCompute:
      return "compute";
    case RooflineBound::kHbm:
      return "HBM bandwidth";
    case RooflineBound::kNvlink:
      return "NVLink";
    case RooflineBound::kNetwork:
      return "inter-node network";
  }
  return "?";
}

Roof roof_of(const HardwareSpec& hw, Precision precision) {
  const bool fp8 = precision == Precision::kFP8;
  Roof roof;
  roof.peak = (fp8 ? hw.peak_tflops_fp8 : hw.peak_tflops_bf16) * 1e12;
  roof.peak_other = (fp8 ? hw.peak_tflops_bf16 : hw.peak_tflops_fp8) * 1e12;
  roof.hbm = hw.hbm_tbps * 1e12;
  roof.nvlink = hw.intra_node_gbps * 1e9;
  roof.network = hw.inter_node_gbps * 1e9;
  return roof;
}

std::vector<RooflineOperation> roofline_operations(const ModelSpec& m, const HardwareSpec& hw,
                                                   const Efficiencies& eff, const ParallelConfig& c) {
  std::vector<RooflineOperation> out;
  const Roof roof = roof_of(hw, c.precision);
  const bool fp8 = c.precision == Precision::kFP8;
  const double bpe = fp8 ? 1.0 : 2.0;  // bytes per element of weights and activations
  const double gemm_rate = roof.peak * (fp8 ? eff.gemm_fp8 : eff.gemm_bf16);
  const double hbm_rate = roof.hbm * eff.hbm;
  const double tokens = static_cast<double>(c.micro_batch) * c.seq / std::max(1, c.cp);
  const double tp = std::max(1, c.tp);
  const double d = m.head_size();
  const double q_dim = m.heads * d, kv_dim = m.kv_heads * d;
  auto gemm = [&](const char* name, double M, double K, double N) {
    RooflineOperation p;
    p.name = name;
    // An (M x K) by (K x N) GEMM: 2MKN FLOPs, and it reads both operands and writes the result once
    // (Williams et al. 2009, Sec. 2: operational intensity = FLOPs / DRAM bytes).
    p.flops = 2 * M * K * N;
    p.bytes = bpe * (M * K + K * N + M * N);
    p.t_compute = p.flops / gemm_rate;
    p.t_memory = p.bytes / hbm_rate;
    p.time_s = std::max(p.t_compute, p.t_memory) + eff.gemm_overhead_s;
    p.bound = p.t_compute >= p.t_memory ? RooflineBound::kCompute : RooflineBound::kHbm;
    out.push_back(p);
  };
  // Layer GEMM shapes of a Megatron-style TP layer (Narayanan et al. 2021, Sec. 3.1): column-parallel QKV and
  // MLP up, row-parallel attention output and MLP down.
  gemm("attention QKV GEMM", tokens, m.hidden, (q_dim + 2 * kv_dim) / tp);
  gemm("attention output GEMM", tokens, q_dim / tp, m.hidden);
  const double gate = m.gated_mlp ? 2.0 : 1.0;
  if (m.is_moe()) {
    const double per_expert = std::max(1.0, expert_rows_per_expert(m, c, tokens));
    const double etp = std::max(1, c.expert_tp());
    gemm("expert MLP up GEMM", per_expert, m.hidden, gate * m.moe_ffn / etp);
    gemm("expert MLP down GEMM", per_expert, m.moe_ffn / etp, m.hidden);
  } else {
    gemm("MLP up GEMM", tokens, m.hidden, gate * m.ffn / tp);
    gemm("MLP down GEMM", tokens, m.ffn / tp, m.hidden);
  }
  gemm("logits GEMM", tokens, m.hidden, m.vocab / tp);
  {
    RooflineOperation p;
    p.name = "attention core (fused)";
    // Flash attention reads Q, K, V and writes O once (Dao et al. 2022, Sec. 3.2); its FLOPs are the model's.
    p.flops = attention_flops_per_token(m, c.seq) * tokens / tp;
    p.bytes = bpe * tokens * (2 * q_dim + 2 * kv_dim) / tp;
    const double rate = eff.attention_flash_flops_per_s > 0 ? eff.attention_flash_flops_per_s : gemm_rate;
    p.t_compute = p.flops / rate;
    p.t_memory = p.bytes / hbm_rate;
    p.time_s = std::max(p.t_compute, p.t_memory);
    p.bound = p.t_compute >= p.t_memory ? RooflineBound::kCompute : RooflineBound::kHbm;
    out.push_back(p);
  }
  // One layer's forward compute on this GPU: what the layer's communication can hide behind.
  double layer_flops = 0, layer_time = 0, attn_flops = 0, attn_time = 0;
  for (const auto& p : out) {
    if (p.name == "logits GEMM") continue;
    layer_flops += p.flops;
    layer_time += p.time_s;
    if (p.name == "attention core (fused)") attn_flops = p.flops, attn_time = p.time_s;
  }
  const Link intra = intra_node_link(eff), inter = inter_node_link(eff);
  auto comm = [&](const char* name, Collective op, double bytes, int n, int stride, double flops,
                  double t_compute, int times) {
    if (n < 2) return;
    const auto shape = group_shape(n, stride, hw.gpus_per_node);
    RooflineOperation p;
    p.name = name;
    p.comm = true;
    p.flops = flops;
    p.bytes = bytes * times;
    p.t_compute = t_compute;
    p.t_memory = times * hierarchical_time(op, bytes, shape, intra, inter);
    p.time_s = std::max(p.t_compute, p.t_memory);
    p.bound = p.t_memory <= p.t_compute ? RooflineBound::kCompute
              : shape.nodes() > 1       ? RooflineBound::kNetwork
                                        : RooflineBound::kNvlink;
    out.push_back(p);
  };
  // Message sizes per strategy as in docs/MODEL.md (Korthikanti et al. 2022, Sec. 4: two TP all-reduces of
  // the b·s·h activation per layer forward; ring attention's KV exchange for CP; top-k dispatch + combine for
  // EP; one activation per micro-batch between pipeline stages; the gradients once per step for DP).
  const double act_bytes = tokens * m.hidden * bpe;
  comm("TP all-reduce (per layer, forward)", Collective::kAllReduce, act_bytes, c.tp, 1, layer_flops,
       layer_time, 2);
  comm("CP KV all-gather (per layer)", Collective::kAllGather, 2 * tokens * kv_dim / tp * bpe * c.cp, c.cp,
       c.tp, attn_flops, attn_time, 1);
  if (m.is_moe()) {
    // The EP group's ranks are etp apart in the expert grid; with etp > 1 the dispatched tokens are gathered
    // over the expert-TP group (predict.cpp ep_per_layer).
    comm("EP all-to-all (dispatch + combine)", Collective::kAllToAll, act_bytes * m.top_k, c.ep,
         std::max(1, c.expert_tp()), layer_flops, layer_time, 2);
    const double dispatched = act_bytes * m.top_k / (c.sp() ? tp : 1.0);  // per GPU after the all-to-all
    comm("expert-TP all-gather (dispatch)", Collective::kAllGather, dispatched * c.expert_tp(), c.expert_tp(),
         1, layer_flops, layer_time, 1);
  }
  const double stage_layers = static_cast<double>(m.layers) / std::max(1, c.pp);
  comm("PP send/recv (per micro-batch)", Collective::kSendRecv, act_bytes / (c.sp() ? tp : 1.0), c.pp,
       c.tp * c.cp * c.dp, layer_flops * stage_layers, layer_time * stage_layers, 1);
  {
    const auto counts = count_parameters(m);
    const double params_per_gpu = counts.total() / (tp * std::max(1, c.pp));
    // Backward is twice the forward (Narayanan et al. 2021, Sec. 5.1): a step is 3x the forward compute.
    const double step_flops = 3.0 * layer_flops * stage_layers * c.micro_batches();
    const double step_time = 3.0 * layer_time * stage_layers * c.micro_batches();
    comm(c.zero >= 2 ? "DP gradient reduce-scatter (per step)" : "DP gradient all-reduce (per step)",
         c.zero >= 2 ? Collective::kReduceScatter : Collective::kAllReduce, params_per_gpu * 2.0, c.dp,
         c.tp * c.cp, step_flops, step_time, 1);
  }
  return out;
}

RooflineOperation predicted_step_point(const std::vector<RooflineOperation>& operations,
                                       const Prediction& prediction, int gpus) {
  double f = 0, b = 0;
  for (const auto& p : operations) {
    if (!p.comm && p.name != "logits GEMM") f += p.flops, b += p.bytes;
  }
  const double flops_per_gpu = prediction.model_flops / std::max(1, gpus);
  RooflineOperation step;
  step.name = "whole step (predicted)";
  step.flops = flops_per_gpu;
  step.bytes = b > 0 ? flops_per_gpu / (f / b) : 0;
  step.time_s = prediction.step_time_s;
  step.t_compute = prediction.time.compute;
  step.t_memory = step.time_s - step.t_compute;
  step.bound = RooflineBound::kCompute;
  return step;
}

}  // namespace meshscope::model
