#include "analysis/model/specs.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

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
  return value == Precision::kFP8 ? "fp8" : "bf16";
}
std::string_view to_string(StateBytes value) {
  return value == StateBytes::k18 ? "18" : "16";
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
  if (text == "fp8") return Precision::kFP8;
  invalid(fmt::format("--precision {}: use bf16 or fp8", text));
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
  e.gemm_overhead_s = hw.gemm_overhead_us * 1e-6;
  e.flash_attention = true;
  e.attention_flash_flops_per_s = hw.attention_tflops_flash * 1e12;
  e.attention_standard_flops_per_s = hw.attention_tflops_standard * 1e12;
  e.hbm = hw.hbm_efficiency;
  e.intra_node_alpha_s = hw.intra_node_alpha_us * 1e-6;
  e.intra_node_Bps = hw.intra_node_gbps * 1e9 * hw.intra_node_efficiency;
  e.inter_node_alpha_s = hw.inter_node_alpha_us * 1e-6;
  e.inter_node_Bps = hw.inter_node_gbps * 1e9 * hw.inter_node_efficiency;
  e.reserved_bytes = hw.reserved_gib * double(1ull << 30);
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
  }
  if (m.is_mla() && (m.qk_nope_dim <= 0 || m.qk_rope_dim <= 0 || m.v_head_dim <= 0))
    invalid(
        fmt::format("{}: multi-head latent attention needs qk_nope_dim, qk_rope_dim and v_head_dim", name));
}

void check_hardware(const HardwareSpec& hw) {
  const std::string name = hw.name.empty() ? "hardware" : hw.name;
  if (hw.peak_tflops_bf16 <= 0) invalid(fmt::format("{}: peak_tflops_bf16 must be positive", name));
  if (hw.hbm_capacity_gib <= 0) invalid(fmt::format("{}: hbm_capacity_gib must be positive", name));
  if (hw.hbm_tbps <= 0) invalid(fmt::format("{}: hbm_tbps must be positive", name));
  if (hw.gpus_per_node <= 0) invalid(fmt::format("{}: --gpus-per-node must be positive", name));
  if (hw.intra_node_gbps <= 0) invalid(fmt::format("{}: --intra-node-gbps must be positive", name));
  if (hw.inter_node_gbps <= 0) invalid(fmt::format("{}: --inter-node-gbps must be positive", name));
  for (double f : {hw.gemm_efficiency_bf16, hw.gemm_efficiency_fp8, hw.hbm_efficiency,
                   hw.intra_node_efficiency, hw.inter_node_efficiency})
    if (!(f > 0 && f <= 1.5)) invalid(fmt::format("{}: efficiencies must be in (0, 1.5]", name));
  if (hw.attention_tflops_flash <= 0 || hw.attention_tflops_standard <= 0)
    invalid(fmt::format("{}: attention_tflops_flash and attention_tflops_standard must be positive", name));
}

std::string check_layout(const ParallelConfig& c, const ModelSpec& m, const HardwareSpec& hw) {
  for (auto [name, v] : {std::pair{"--gpus", c.gpus},
                         {"--tp", c.tp},
                         {"--pp", c.pp},
                         {"--dp", c.dp},
                         {"--cp", c.cp},
                         {"--ep", c.ep},
                         {"--micro-batch", c.micro_batch},
                         {"--global-batch", c.global_batch},
                         {"--seq", c.seq},
                         {"--virtual-stages", c.virtual_stages}})
    if (v < 1) return fmt::format("{} {} must be at least 1", name, v);
  if (c.precision == Precision::kFP8 && hw.peak_tflops_fp8 <= 0)
    return fmt::format("{} has no FP8 tensor cores: use --precision bf16", hw.name);
  if (c.zero < 0 || c.zero > 3) return fmt::format("--zero {}: use a ZeRO stage from 0 to 3", c.zero);
  if (long(c.tp) * c.pp * c.cp * c.dp != c.gpus)
    return fmt::format(
        "--tp {} x --pp {} x --cp {} x --dp {} = {} is not --gpus {}: make the product equal the GPU count",
        c.tp, c.pp, c.cp, c.dp, long(c.tp) * c.pp * c.cp * c.dp, c.gpus);
  if (m.heads % c.tp != 0)
    return fmt::format("--tp {} does not divide --heads {}: use a divisor of {}", c.tp, m.heads, m.heads);
  if (!m.is_mla() && m.kv_heads % c.tp != 0 && c.tp % m.kv_heads != 0)
    return fmt::format("--tp {} and --kv-heads {}: one must divide the other", c.tp, m.kv_heads);
  if (m.ffn % c.tp != 0 || (m.is_moe() && m.moe_ffn % c.tp != 0))
    return fmt::format("--tp {} does not divide the MLP width {}: use a divisor", c.tp,
                       m.ffn % c.tp != 0 ? m.ffn : m.moe_ffn);
  if (m.layers % c.pp != 0)
    return fmt::format("--pp {} does not divide --layers {}: use a divisor of {}", c.pp, m.layers, m.layers);
  if (c.seq % c.cp != 0)
    return fmt::format("--cp {} does not divide --seq {}: use a divisor of the sequence length", c.cp, c.seq);
  if (c.global_batch % (c.dp * c.micro_batch) != 0)
    return fmt::format(
        "--global-batch {} is not divisible by --dp {} x --micro-batch {} = {}: change one of them",
        c.global_batch, c.dp, c.micro_batch, c.dp * c.micro_batch);
  if (c.ep > 1) {
    if (!m.is_moe()) return fmt::format("--ep {} needs a mixture-of-experts model (--experts > 1)", c.ep);
    if (m.experts % c.ep != 0)
      return fmt::format("--ep {} does not divide --experts {}: use a divisor of {}", c.ep, m.experts,
                         m.experts);
    if (c.dp % c.ep != 0)
      return fmt::format(
          "--ep {} does not divide --dp {}: expert parallelism is carved out of data parallelism", c.ep,
          c.dp);
  }
  if (c.schedule == Schedule::kInterleaved) {
    if (c.pp < 2) return "--schedule interleaved needs --pp 2 or more";
    if (c.virtual_stages < 2) return "--schedule interleaved needs --virtual-stages 2 or more";
    if ((m.layers / c.pp) % c.virtual_stages != 0)
      return fmt::format("--virtual-stages {} does not divide the {} layers per stage: use a divisor",
                         c.virtual_stages, m.layers / c.pp);
    if (c.micro_batches() % c.pp != 0)
      return fmt::format(
          "interleaved 1F1B needs micro-batches per pipeline ({}) divisible by --pp {}: change "
          "--global-batch or --micro-batch",
          c.micro_batches(), c.pp);
  } else if (c.virtual_stages != 1) {
    return fmt::format("--virtual-stages {} needs --schedule interleaved", c.virtual_stages);
  }
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
  if (c.pp > 0 && m.layers % c.pp != 0)
    invalid(
        fmt::format("--pp {} does not divide --layers {}: use a divisor of {}", c.pp, m.layers, m.layers));
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
  if (c.seq == 0) c.seq = m.seq, note(c, "seq");
  if (c.micro_batch == 0) c.micro_batch = 1, note(c, "micro_batch");
  if (c.global_batch == 0) {
    const int unit = c.dp * c.micro_batch;
    const int wanted = m.global_batch > 0 ? m.global_batch : unit;
    c.global_batch = std::max(unit, (wanted + unit - 1) / unit * unit);
    note(c, "global_batch");
  }
  if (c.zero < 0) c.zero = c.dp > 1 ? 1 : 0, note(c, "zero");
  if (!c.recompute_set) c.recompute = Recompute::kNone, c.recompute_set = true, note(c, "recompute");
  if (!c.schedule_set) {
    c.schedule = c.virtual_stages > 1 ? Schedule::kInterleaved : Schedule::k1F1B;
    c.schedule_set = true;
    note(c, "schedule");
  }
  if (c.virtual_stages == 0) {
    c.virtual_stages = 1;
    if (c.schedule == Schedule::kInterleaved && c.pp > 0 && (m.layers / std::max(1, c.pp)) % 2 == 0)
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
