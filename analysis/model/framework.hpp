// Software presets: what a training framework does that the model needs to know (attention kernels, bytes of
// model state per parameter, which communication it overlaps, how it shards), as one named set of assumptions
// instead of five flags. Flags given explicitly override the preset.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/model/specs.hpp"

namespace meshscope::model {

struct FrameworkPreset {
  std::string name;
  std::string summary;  // one line: what the preset assumes, with its sources
  bool flash_attention = true;
  StateBytes state_bytes = StateBytes::k16;
  double overlap_tp = 0, overlap_cp = 1, overlap_ep = 0, overlap_pp = 0, overlap_dp = 1;
  int zero = -1;                 // default ZeRO stage when dp > 1 (-1: leave resolve()'s default)
  bool cudnn_attention = false;  // Transformer Engine's cuDNN fused attention instead of FlashAttention-2
};

// megatron-2021, megatron-core, deepspeed-zero3, fsdp2.
const std::vector<FrameworkPreset>& framework_presets();
// Throws InvalidInput naming the presets for an unknown NAME.
const FrameworkPreset& framework_preset(std::string_view name);
// The attention kernel by its CLI name: flash (FlashAttention-2), flash1 (the 2022 FlashAttention CUDA
// kernel), triton (FlashAttention in Triton), cudnn (Transformer Engine's cuDNN kernel), standard (unfused);
// throws InvalidInput naming them otherwise.
void set_attention_kernel(Efficiencies& eff, std::string_view name);
std::string_view attention_kernel_name(const Efficiencies& eff);

// EFF with the preset's assumptions; CONFIG's ZeRO stage when it was left to the default.
void apply_framework(const FrameworkPreset& preset, Efficiencies& eff, ParallelConfig& config);

}  // namespace meshscope::model
