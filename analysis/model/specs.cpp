#include "analysis/model/specs.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/model/pipeline.hpp"
#include "analysis/model/precision.hpp"

namespace meshscope::model {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw InvalidInput(message);
}

void note(ParallelConfig& config, const std::string& name) {
  config.defaulted.push_back(name);
}

}  // namespace

std::string_view to_string(Recompute value) {
  switch (value) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "none";
}

std::string_view to_string(Schedule value) {
  switch (value) {
    case Schedule::kGPipe:
      return "gpipe";
    case Schedule::k1F1B:
      return "1f1b";
    case Schedule::kInterleaved:
      return "interleaved";
  }
  return "1f1b";
}

std::string_view to_string(Precision value) {
  switch (value) {
    case Precision::kBF16:
      return "bf16";
    case Precision::kFP8:
      return "fp8";
    case Precision::kFP8Block:
      return "fp8-block";
    case Precision::kNVFP4:
      return "nvfp4";
  }
  return "bf16";
}
std::string_view to_string(StateBytes value) {
  return value == StateBytes::k18 ? "18" : "16";
}

std::string_view to_string(Mode value) {
  return value == Mode::kInference ? "inference" : "training";
}

std::string_view to_string(CpComm value) {
  switch (value) {
    case CpComm::kRing:
      return "ring";
    case CpComm::kAllGather:
      return "all-gather";
    case CpComm::kAllToAll:
      return "all-to-all";
  }
  return "ring";
}

CpComm parse_cp_comm(std::string_view text) {
  if (text == "ring" || text == "p2p") return CpComm::kRing;
  if (text == "all-gather" || text == "all_gather" || text == "allgather") return CpComm::kAllGather;
  if (text == "all-to-all" || text == "a2a" || text == "ulysses") return CpComm::kAllToAll;
  invalid(fmt::format("--cp-comm {}: use ring (p2p), all-gather or all-to-all (a2a)", text));
}

Mode parse_mode(std::string_view text) {
  if (text == "training") return Mode::kTraining;
  if (text == "inference") return Mode::kInference;
  invalid(fmt::format("--mode {}: use training or inference", text));
}

Recompute parse_recompute(std::string_view text) {
  if (text == "none") return Recompute::kNone;
  if (text == "selective") return Recompute::kSelective;
  if (text == "full") return Recompute::kFull;
  invalid(fmt::format("--recompute {}: use none, selective or full", text));
}

Schedule parse_schedule(std::string_view text) {
  if (text == "gpipe") return Schedule::kGPipe;
  if (text == "1f1b") return Schedule::k1F1B;
  if (text == "interleaved") return Schedule::kInterleaved;
  invalid(fmt::format("--schedule {}: use gpipe, 1f1b or interleaved", text));
}

Precision parse_precision(std::string_view text) {
  if (text == "bf16" || text == "fp16") return Precision::kBF16;
  if (text == "fp8" || text == "fp8-cs" || text == "fp8-tensor" || text == "fp8-delayed")
    return Precision::kFP8;
  if (text == "fp8-block" || text == "mxfp8" || text == "fp8-mx") return Precision::kFP8Block;
  if (text == "nvfp4" || text == "fp4") return Precision::kNVFP4;
  invalid(fmt::format(
      "--precision {}: use bf16, fp8 (per-tensor scaling), fp8-block (MXFP8 / block scaling) or nvfp4",
      text));
}

StateBytes parse_state_bytes(std::string_view text) {
  if (text == "16") return StateBytes::k16;
  if (text == "18") return StateBytes::k18;
  invalid(fmt::format("--state-bytes {}: use 16 (ZeRO memory equation) or 18 (Megatron-LM)", text));
}

Efficiencies defaults_for(const HardwareSpec& hw) {
  Efficiencies e;
  e.gemm_bf16 = hw.gemm_efficiency_bf16;
  e.gemm_fp8 = hw.gemm_efficiency_fp8;
  e.gemm_fp4 = hw.gemm_efficiency_fp4;
  e.gemm_overhead_s = hw.gemm_overhead_us * 1e-6;
  e.flash_attention = true;
  e.attention_flash_flops_per_s = hw.attention_tflops_flash * 1e12;
  e.attention_fused_flops_per_s =
      (hw.attention_tflops_fused > 0 ? hw.attention_tflops_fused : hw.attention_tflops_flash) * 1e12;
  e.attention_standard_flops_per_s = hw.attention_tflops_standard * 1e12;
  e.attention_fused_backward_ratio = hw.attention_fused_backward_ratio;
  e.hbm = hw.hbm_efficiency;
  e.intra_node_alpha_s = hw.intra_node_alpha_us * 1e-6;
  e.intra_node_Bps = hw.intra_node_gbps * 1e9 * hw.intra_node_efficiency;
  e.inter_node_alpha_s = hw.inter_node_alpha_us * 1e-6;
  e.inter_node_Bps = hw.inter_node_gbps * 1e9 * hw.inter_node_efficiency;
  e.reserved_bytes = hw.reserved_gib * double(1ull << 30);
  e.sustained_fraction = hw.sustained_fraction;
  return e;
}

void check_model(const ModelSpec& m) {
  const std::string name = m.name.empty() ? "model" : m.name;
  if (m.layers <= 0) invalid(fmt::format("{}: --layers must be positive", name));
  if (m.hidden <= 0) invalid(fmt::format("{}: --hidden must be positive", name));
  if (m.heads <= 0) invalid(fmt::format("{}: --heads must be positive", name));
  if (m.kv_heads <= 0 || m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    invalid(fmt::format("{}: --kv-heads {} must divide --heads {}", name, m.kv_heads, m.heads));
  if (m.head_dim == 0 && !m.is_mla() && m.hidden % m.heads != 0)
    invalid(fmt::format("{}: --heads {} does not divide --hidden {}: set head_dim or change heads", name,
                        m.heads, m.hidden));
  if (m.ffn <= 0) invalid(fmt::format("{}: --ffn must be positive", name));
  if (m.vocab <= 0) invalid(fmt::format("{}: --vocab must be positive", name));
  if (m.seq <= 0) invalid(fmt::format("{}: --seq must be positive", name));
  if (m.experts < 1) invalid(fmt::format("{}: --experts must be at least 1", name));
  if (m.is_moe()) {
    if (m.top_k < 1 || m.top_k > m.experts)
      invalid(fmt::format("{}: --top-k {} must be between 1 and --experts {}", name, m.top_k, m.experts));
    if (m.moe_ffn <= 0)
      invalid(fmt::format("{}: moe_ffn (expert width) must be positive for a MoE model", name));
    if (m.dense_layers < 0 || m.dense_layers >= m.layers)
      invalid(fmt::format("{}: dense_layers {} must be below layers {}", name, m.dense_layers, m.layers));
    if (m.moe_layer_freq < 1 || m.moe_layer_freq > m.layers)
      invalid(fmt::format("{}: moe_layer_freq {} must be between 1 and layers {}", name, m.moe_layer_freq,
                          m.layers));
  }
  if (m.mtp_layers < 0 || m.mtp_layers > m.layers)
    invalid(fmt::format("{}: mtp_layers {} must be between 0 and layers {}", name, m.mtp_layers, m.layers));
  if (m.is_mla() && (m.qk_nope_dim <= 0 || m.qk_rope_dim <= 0 || m.v_head_dim <= 0))
    invalid(
        fmt::format("{}: multi-head latent attention needs qk_nope_dim, qk_rope_dim and v_head_dim", name));
}

double expert_rows_per_expert(const ModelSpec& m, const ParallelConfig& c, double tokens) {
  return tokens * std::max(1, c.ep) * std::max(1, c.expert_tp()) / std::max(1, c.tp) * m.top_k / m.experts;
}

int ModelSpec::moe_layers_between(int first, int layers) const {
  if (!is_moe() || layers <= 0) return 0;
  const int begin = std::max(first, dense_layers), end = first + layers;
  if (end <= begin) return 0;
  // MoE layers are dense_layers + k x moe_layer_freq: count the k that land in [begin, end).
  auto first_k_at_or_after = [&](int layer) {
    return (layer - dense_layers + moe_layer_freq - 1) / moe_layer_freq;
  };
  return first_k_at_or_after(end) - first_k_at_or_after(begin);
}

// Efficiencies above 1 are allowed up to this bound: a calibrated or measured bus bandwidth can exceed the
// nominal link rate (NVLS all-reduce reaches 480 GB/s bus bandwidth on 450 GB/s NVLink4, nccl-tests #212),
// and anything beyond 1.5x nominal is a typo.
constexpr double kMaxEfficiency = 1.5;

void check_hardware(const HardwareSpec& hw) {
  const std::string name = hw.name.empty() ? "hardware" : hw.name;
  if (hw.peak_tflops_bf16 <= 0) invalid(fmt::format("{}: peak_tflops_bf16 must be positive", name));
  if (hw.hbm_capacity_gib <= 0) invalid(fmt::format("{}: hbm_capacity_gib must be positive", name));
  if (hw.hbm_tbps <= 0) invalid(fmt::format("{}: hbm_tbps must be positive", name));
  if (hw.gpus_per_node <= 0) invalid(fmt::format("{}: --gpus-per-node must be positive", name));
  if (hw.intra_node_gbps <= 0) invalid(fmt::format("{}: --intra-node-gbps must be positive", name));
  if (hw.inter_node_gbps <= 0) invalid(fmt::format("{}: --inter-node-gbps must be positive", name));
  for (double f :
       {hw.sustained_fraction, hw.gemm_efficiency_bf16, hw.gemm_efficiency_fp8, hw.gemm_efficiency_fp4,
        hw.hbm_efficiency, hw.intra_node_efficiency, hw.inter_node_efficiency})
    if (!(f > 0 && f <= kMaxEfficiency))
      invalid(fmt::format("{}: efficiencies must be in (0, {}]", name, kMaxEfficiency));
  if (hw.peak_tflops_fp8 < 0 || hw.peak_tflops_fp4 < 0)
    invalid(fmt::format("{}: peak_tflops_fp8 and peak_tflops_fp4 must not be negative", name));
  if (!(hw.attention_fused_backward_ratio > 0 && hw.attention_fused_backward_ratio <= kMaxEfficiency))
    invalid(fmt::format("{}: attention_fused_backward_ratio must be in (0, {}]", name, kMaxEfficiency));
  if (hw.attention_tflops_fused < 0)
    invalid(fmt::format("{}: attention_tflops_fused must not be negative", name));
  if (hw.attention_tflops_flash <= 0 || hw.attention_tflops_standard <= 0)
    invalid(fmt::format("{}: attention_tflops_flash and attention_tflops_standard must be positive", name));
  if (hw.sm_count < 0) invalid(fmt::format("{}: sm_count must not be negative", name));
  if (!hw.compute_capability.empty()) {
    const std::string& cc = hw.compute_capability;
    const auto dot = cc.find('.');
    const bool digits =
        dot != std::string::npos && dot > 0 && dot + 1 < cc.size() &&
        std::all_of(cc.begin(), cc.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); }) &&
        cc.find('.', dot + 1) == std::string::npos;
    if (!digits)
      invalid(fmt::format("{}: compute_capability must read MAJOR.MINOR (\"8.0\"), got '{}'", name, cc));
  }
}

namespace {

// Interleaved 1F1B as Megatron-Core enforces it (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_with_interleaving): micro-batches run in groups of N =
// microbatch_group_size_per_vp_stage with pp <= N <= m, and m mod N must be 0 or at least pp. Layers per
// virtual stage need not be equal, and a virtual stage may hold only the embedding or the loss
// (pipeline_model_parallel_layout; Llama 3.1 405B runs 126 layers on PP 16 x VP 8 in Megatron-Bridge).
std::string check_interleaved(const ParallelConfig& c) {
  if (c.pp < 2) return "--schedule interleaved needs --pp 2 or more";
  if (c.virtual_stages < 2) return "--schedule interleaved needs --virtual-stages 2 or more";
  const int micro = c.micro_batches();
  if (micro < c.pp)
    return fmt::format(
        "interleaved 1F1B needs at least --pp {} micro-batches per pipeline, got {}: raise --global-batch or "
        "lower --micro-batch",
        c.pp, micro);
  if (c.microbatch_group > 0) {
    const int n = c.microbatch_group, rest = micro % c.microbatch_group;
    if (n < c.pp || n > micro)
      return fmt::format("--microbatch-group {} must be between --pp {} and the {} micro-batches", n, c.pp,
                         micro);
    if (rest > 0 && rest < c.pp)
      return fmt::format(
          "--microbatch-group {}: the last group of {} micro-batches is smaller than --pp {} (Megatron-Core "
          "refuses it)",
          n, rest, c.pp);
  }
  return {};
}

}  // namespace

std::string check_layout(const ParallelConfig& c, const ModelSpec& m, const HardwareSpec& hw) {
  for (auto [name, v] : {std::pair{"--gpus", c.gpus},
                         {"--tp", c.tp},
                         {"--pp", c.pp},
                         {"--dp", c.dp},
                         {"--cp", c.cp},
                         {"--ep", c.ep},
                         {"--etp", c.etp},
                         {"--micro-batch", c.micro_batch},
                         {"--global-batch", c.global_batch},
                         {"--seq", c.seq},
                         {"--virtual-stages", c.virtual_stages}})
    if (v < 1) return fmt::format("{} {} must be at least 1", name, v);
  if (std::string precision = check_precision(c.precision, hw); !precision.empty()) return precision;
  if (c.zero < 0 || c.zero > 3) return fmt::format("--zero {}: use a ZeRO stage from 0 to 3", c.zero);
  if (c.offload_layers < 0)
    return fmt::format("--cpu-offload-layers {} must not be negative", c.offload_layers);
  if (long(c.tp) * c.pp * c.cp * c.dp != c.gpus)
    return fmt::format(
        "--tp {} x --pp {} x --cp {} x --dp {} = {} is not --gpus {}: make the product equal the GPU count",
        c.tp, c.pp, c.cp, c.dp, long(c.tp) * c.pp * c.cp * c.dp, c.gpus);
  if (m.heads % c.tp != 0)
    return fmt::format("--tp {} does not divide --heads {}: use a divisor of {}", c.tp, m.heads, m.heads);
  if (!m.is_mla() && m.kv_heads % c.tp != 0 && c.tp % m.kv_heads != 0)
    return fmt::format("--tp {} and --kv-heads {}: one must divide the other", c.tp, m.kv_heads);
  // Shared experts are split over the attention's TP (their width shared_experts x moe_ffn), routed experts
  // over --etp (below).
  const long shared_width = m.is_moe() ? long(m.shared_experts) * m.moe_ffn : 0;
  if (m.ffn % c.tp != 0 || shared_width % c.tp != 0)
    return fmt::format("--tp {} does not divide the MLP width {}: use a divisor", c.tp,
                       m.ffn % c.tp != 0 ? long(m.ffn) : shared_width);
  if (std::string stages = check_stage_layers(m, c); !stages.empty()) return stages;
  if (c.seq % c.cp != 0)
    return fmt::format("--cp {} does not divide --seq {}: use a divisor of the sequence length", c.cp, c.seq);
  if (c.cp > 1 && c.cp_comm == CpComm::kAllToAll) {
    // Each rank takes heads / (tp x cp) of the query heads and of the key/value heads for the whole sequence
    // (Transformer Engine's a2a context parallelism requires both head counts divisible by cp).
    const long heads = m.heads / c.tp, kv = std::max(1, (m.is_mla() ? m.heads : m.kv_heads) / c.tp);
    if (heads % c.cp != 0 || kv % c.cp != 0)
      return fmt::format(
          "--cp-comm all-to-all with --cp {}: each rank's {} query and {} key/value heads (after --tp {}) "
          "must "
          "split {} ways; use ring or all-gather, or a --cp that divides both",
          c.cp, heads, kv, c.tp, c.cp);
  }
  if (c.global_batch % (c.dp * c.micro_batch) != 0)
    return fmt::format(
        "--global-batch {} is not divisible by --dp {} x --micro-batch {} = {}: change one of them",
        c.global_batch, c.dp, c.micro_batch, c.dp * c.micro_batch);
  if (c.ep > 1 && !m.is_moe())
    return fmt::format("--ep {} needs a mixture-of-experts model (--experts > 1)", c.ep);
  if (c.etp != c.tp && !m.is_moe())
    return fmt::format("--etp {} needs a mixture-of-experts model (--experts > 1)", c.etp);
  if (m.is_moe()) {
    if (m.experts % c.ep != 0)
      return fmt::format("--ep {} does not divide --experts {}: use a divisor of {}", c.ep, m.experts,
                         m.experts);
    if (m.moe_ffn % c.etp != 0)
      return fmt::format("--etp {} does not divide the expert width {}: use a divisor", c.etp, m.moe_ffn);
    // The expert layers of a stage run on its tp x cp x dp GPUs, regrouped as etp x ep x expert data
    // parallel (Megatron-Core requires world size divisible by pp x etp x ep).
    const long stage_gpus = long(c.tp) * c.cp * c.dp;
    if (stage_gpus % (long(c.ep) * c.etp) != 0) {
      // The widest expert TP that fits beside this EP, when one does (Megatron-Core's default expert TP is
      // TP, which an EP spanning TP x DP leaves no room for: its recipes then set
      // --expert-tensor-parallel-size 1).
      std::string fits;
      if (stage_gpus % c.ep == 0) {
        int widest = 1;
        for (int e = c.etp - 1; e > 1; --e) {
          if ((stage_gpus / c.ep) % e == 0 && m.moe_ffn % e == 0) {
            widest = e;
            break;
          }
        }
        const bool defaulted = std::find(c.defaulted.begin(), c.defaulted.end(), "etp") != c.defaulted.end();
        fits = fmt::format("; {}pass --etp {}", defaulted ? "--etp is --tp unless given: " : "", widest);
      }
      return fmt::format(
          "--ep {} x --etp {} = {} does not divide --tp {} x --cp {} x --dp {} = {}: the expert layers "
          "regroup the GPUs of a pipeline stage{}",
          c.ep, c.etp, long(c.ep) * c.etp, c.tp, c.cp, c.dp, stage_gpus, fits);
    }
  }
  if (c.schedule == Schedule::kInterleaved) return check_interleaved(c);
  if (c.virtual_stages != 1)
    return fmt::format("--virtual-stages {} needs --schedule interleaved", c.virtual_stages);
  if (c.microbatch_group > 0) return "--microbatch-group needs --schedule interleaved";
  return {};
}

ParallelConfig resolve(ParallelConfig c, const ModelSpec& m, const HardwareSpec& hw) {
  check_model(m);
  check_hardware(hw);
  c.defaulted.clear();
  if (c.tp == 0) c.tp = 1, note(c, "tp");
  if (c.pp == 0) c.pp = 1, note(c, "pp");
  if (c.cp == 0) c.cp = 1, note(c, "cp");
  if (c.tp > 0 && m.heads % c.tp != 0)
    invalid(fmt::format("--tp {} does not divide --heads {}: use a divisor of {}", c.tp, m.heads, m.heads));
  if (c.gpus == 0) {
    if (c.dp == 0) invalid("--gpus N is required (or give --dp with --tp, --pp and --cp)");
    c.gpus = c.tp * c.pp * c.cp * c.dp;
  }
  if (c.gpus < 1) invalid(fmt::format("--gpus {} must be at least 1", c.gpus));
  if (c.dp == 0) {
    const int mp = c.tp * c.pp * c.cp;
    if (mp < 1 || c.gpus % mp != 0)
      invalid(fmt::format("--gpus {} is not divisible by --tp {} x --pp {} x --cp {} = {}: change the layout",
                          c.gpus, c.tp, c.pp, c.cp, mp));
    c.dp = c.gpus / mp;
    note(c, "dp");
  }
  if (c.ep == 0) c.ep = 1, note(c, "ep");
  if (c.etp == 0) {
    c.etp = c.tp;
    if (m.is_moe()) note(c, "etp");  // a dense model has no expert layers to split
  }
  if (c.seq == 0) c.seq = m.seq, note(c, "seq");
  if (c.micro_batch == 0) c.micro_batch = 1, note(c, "micro_batch");
  if (c.global_batch == 0) {
    const int unit = c.dp * c.micro_batch;
    const int wanted = m.global_batch > 0 ? m.global_batch : unit;
    c.global_batch = std::max(unit, (wanted + unit - 1) / unit * unit);
    note(c, "global_batch");
  }
  if (c.inference()) {
    // Nothing to shard or recompute without gradients and optimizer state.
    if (c.zero > 0)
      invalid(fmt::format("--zero {}: inference holds no optimizer state: leave --zero out", c.zero));
    if (c.recompute_set && c.recompute != Recompute::kNone)
      invalid(fmt::format("--recompute {}: inference keeps no activations for a backward pass: leave it out",
                          to_string(c.recompute)));
  }
  if (c.zero < 0) c.zero = c.dp > 1 && !c.inference() ? 1 : 0, note(c, "zero");
  if (!c.recompute_set) c.recompute = Recompute::kNone, c.recompute_set = true, note(c, "recompute");
  if (!c.schedule_set) {
    c.schedule = c.virtual_stages > 1 ? Schedule::kInterleaved : Schedule::k1F1B;
    c.schedule_set = true;
    note(c, "schedule");
  }
  if (c.virtual_stages == 0) {
    c.virtual_stages = 1;
    if (c.schedule == Schedule::kInterleaved && c.pp > 0 && m.layers / std::max(1, c.pp) >= 2)
      c.virtual_stages = 2;
    note(c, "virtual_stages");
  }
  if (c.sequence_parallel < 0) c.sequence_parallel = c.tp > 1 ? 1 : 0, note(c, "sequence_parallel");
  if (c.tp == 1) c.sequence_parallel = 0;
  const std::string problem = check_layout(c, m, hw);
  if (!problem.empty()) invalid(problem);
  return c;
}

}  // namespace meshscope::model
