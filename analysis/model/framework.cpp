#include "analysis/model/framework.hpp"

#include <fmt/format.h>

namespace meshscope::model {

const std::vector<FrameworkPreset>& framework_presets() {
  static const std::vector<FrameworkPreset> presets = [] {
    std::vector<FrameworkPreset> p;
    // Megatron-LM as published 2020-2022 (Narayanan et al. 2021 §5; Korthikanti et al. 2022 §5): unfused
    // softmax attention, FP32 gradient accumulation (18 B/param), the gradient all-reduce after the backward
    // pass, no overlap of TP or pipeline sends, no distributed optimizer.
    p.push_back(
        {"megatron-2021",
         "unfused attention, 18 B/param (fp32 grads), no TP/PP/DP overlap, ZeRO 0 (Narayanan et al. 2021; "
         "Korthikanti et al. 2022)",
         false, StateBytes::k18, 0, 1, 0, 0, 0, 0});
    // Megatron-Core (2024-): Transformer Engine fused attention (the cuDNN kernel on Hopper and Blackwell,
    // TE's default attention backend there), FP32 main gradients (18 B/param) with the
    // distributed optimizer (ZeRO-1, docs/distrib_optimizer.md), --overlap-grad-reduce/--overlap-param-gather
    // (DP hidden behind compute), --tp-comm-overlap (TE userbuffers: TP collectives pipelined with the GEMMs
    // next to them), overlapped P2P in the interleaved schedule (overlap_p2p_comm). MoE all-to-all overlap is
    // off by default (--overlap-moe-expert-parallel-comm).
    p.push_back({"megatron-core",
                 "fused attention, 18 B/param, distributed optimizer (ZeRO 1), DP and P2P overlapped, TP "
                 "collectives hidden behind their GEMMs (--tp-comm-overlap), EP exposed",
                 true, StateBytes::k18, 1, 1, 0, 1, 1, 1, true});
    // DeepSpeed ZeRO-3 (Rajbhandari et al. 2020 §5.3, overlap_comm + prefetch): parameters, gradients and
    // optimizer state sharded, 16 B/param (fp16 grads), gathers prefetched behind compute.
    p.push_back({"deepspeed-zero3",
                 "ZeRO 3, 16 B/param, gathers and reduce-scatters prefetched behind compute", true,
                 StateBytes::k16, 0, 1, 0, 0, 1, 3});
    // PyTorch FSDP2 (fully_shard; Zhao et al. 2023 §3-4 for FSDP): full sharding, 16 B/param with mixed
    // precision, all-gathers prefetched and reduce-scatters overlapped with backward, SDPA flash attention.
    p.push_back({"fsdp2", "full sharding (ZeRO 3), 16 B/param, prefetched gathers, SDPA flash attention",
                 true, StateBytes::k16, 0, 1, 0, 0, 1, 3});
    return p;
  }();
  return presets;
}

const FrameworkPreset& framework_preset(std::string_view name) {
  std::string names;
  for (const auto& p : framework_presets()) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw InvalidInput(fmt::format("--framework {}: use one of {}", name, names));
}

void set_attention_kernel(Efficiencies& eff, std::string_view name) {
  if (name != "flash" && name != "flash1" && name != "triton" && name != "cudnn" && name != "standard")
    throw InvalidInput(fmt::format("--attention {}: use flash, flash1, triton, cudnn or standard", name));
  eff.flash_attention = name != "standard";
  eff.cudnn_attention = name == "cudnn";
  eff.flash_v1 = name == "flash1";
  eff.flash_triton = name == "triton";
}

std::string_view attention_kernel_name(const Efficiencies& eff) {
  if (!eff.flash_attention) return "standard";
  if (eff.cudnn_attention) return "cudnn";
  if (eff.flash_triton) return "triton";
  return eff.flash_v1 ? "flash1" : "flash";
}

void apply_framework(const FrameworkPreset& f, Efficiencies& eff, ParallelConfig& config) {
  eff.flash_attention = f.flash_attention;
  eff.cudnn_attention = f.cudnn_attention;
  eff.flash_v1 = false;
  eff.flash_triton = false;
  eff.state_bytes = f.state_bytes;
  eff.overlap_tp = f.overlap_tp;
  eff.overlap_cp = f.overlap_cp;
  eff.overlap_ep = f.overlap_ep;
  eff.overlap_pp = f.overlap_pp;
  eff.overlap_dp = f.overlap_dp;
  if (config.zero < 0 && f.zero >= 0) config.zero = f.zero;
}

}  // namespace meshscope::model
