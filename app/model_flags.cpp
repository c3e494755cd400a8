// The MODEL / HARDWARE / CONFIG flags that predict, search, plan and compare share, and the prediction output
// (model_flags.hpp). Not a command: it registers none.
#include <fmt/format.h>

#include "analysis/model/framework.hpp"
#include "app/model_flags.hpp"

namespace meshscope::app {
namespace {

double gib(double bytes) {
  return bytes / double(1ull << 30);
}

double gemm_efficiency(model::Precision p, const model::Efficiencies& eff) {
  if (p == model::Precision::kBF16) return eff.gemm_bf16;
  return p == model::Precision::kNVFP4 ? eff.gemm_fp4 : eff.gemm_fp8;
}

template <typename T>
void optional_option(CLI::App& cmd, const std::string& name, std::optional<T>& target,
                     const std::string& help) {
  cmd.add_option_function<T>(
      name, [&target](const T& v) { target = v; }, help);
}

}  // namespace

void add_model_flags(CLI::App& cmd, ModelFlags& f) {
  cmd.add_option("--model", f.model,
                 "Model preset (" + fmt::format("{}", fmt::join(model::model_presets(), ", ")) +
                     ") or FILE.toml; default gpt")
      ->group("MODEL");
  optional_option(cmd, "--layers", f.overrides.layers, "Override: transformer layers");
  optional_option(cmd, "--hidden", f.overrides.hidden, "Override: hidden size");
  optional_option(cmd, "--heads", f.overrides.heads, "Override: attention heads");
  optional_option(cmd, "--kv-heads", f.overrides.kv_heads, "Override: key/value heads (GQA)");
  optional_option(cmd, "--ffn", f.overrides.ffn, "Override: MLP hidden size");
  optional_option(cmd, "--vocab", f.overrides.vocab, "Override: vocabulary size");
  optional_option(cmd, "--experts", f.overrides.experts, "Override: MoE experts (1 = dense)");
  optional_option(cmd, "--top-k", f.overrides.top_k, "Override: experts active per token");
  for (const char* name :
       {"--layers", "--hidden", "--heads", "--kv-heads", "--ffn", "--vocab", "--experts", "--top-k"})
    cmd.get_option(name)->group("MODEL");
  cmd.add_option("--hardware", f.hardware,
                 "Hardware preset (" + fmt::format("{}", fmt::join(model::hardware_presets(), ", ")) +
                     ") or FILE.toml; default h100-sxm")
      ->group("HARDWARE");
  optional_option(cmd, "--gpus-per-node", f.hardware_overrides.gpus_per_node,
                  "Override: GPUs per scale-up domain (NVLink, Infinity Fabric)");
  optional_option(cmd, "--intra-node-gbps", f.hardware_overrides.intra_node_gbps,
                  "Override: scale-up link (NVLink, Infinity Fabric, PCIe) GB/s per GPU per direction");
  optional_option(cmd, "--inter-node-gbps", f.hardware_overrides.inter_node_gbps,
                  "Override: network GB/s per GPU per direction");
  for (const char* name : {"--gpus-per-node", "--intra-node-gbps", "--inter-node-gbps"})
    cmd.get_option(name)->group("HARDWARE");
}

void add_config_flags(CLI::App& cmd, ConfigFlags& f, bool with_layout) {
  auto& c = f.config;
  cmd.add_option("--gpus", c.gpus, "Number of GPUs")->group("CONFIG");
  if (with_layout) {
    cmd.add_option("--tp", c.tp, "Tensor-parallel degree (default 1)")->group("CONFIG");
    cmd.add_option("--pp", c.pp, "Pipeline-parallel degree (default 1)")->group("CONFIG");
    cmd.add_option("--dp", c.dp, "Data-parallel degree (default gpus/(tp*pp*cp))")->group("CONFIG");
    cmd.add_option("--cp", c.cp, "Context-parallel degree (default 1)")->group("CONFIG");
    cmd.add_option(
           "--ep", c.ep,
           "Expert-parallel degree: the expert layers regroup a stage's tp x cp x dp GPUs as etp x ep x "
           "expert data parallel (default 1)")
        ->group("CONFIG");
    cmd.add_option("--etp", c.etp,
                   "Expert tensor-parallel degree: each expert's width split over etp GPUs (default tp, as "
                   "Megatron-Core; its MoE recipes often use 1)")
        ->group("CONFIG");
    cmd.add_option("--micro-batch", c.micro_batch, "Sequences per micro-batch (default 1)")->group("CONFIG");
    cmd.add_option("--zero", c.zero, "ZeRO stage 0..3; 3 = FSDP (default 1 when dp > 1)")->group("CONFIG");
    cmd.add_option("--recompute", f.recompute, "none|selective|full (default none)")->group("CONFIG");
    cmd.add_option("--schedule", f.schedule, "gpipe|1f1b|interleaved (default 1f1b)")->group("CONFIG");
    cmd.add_option("--virtual-stages", c.virtual_stages, "Virtual stages per GPU for interleaved 1F1B")
        ->group("CONFIG");
    cmd.add_option("--microbatch-group", c.microbatch_group,
                   "Interleaved 1F1B: micro-batches per virtual-stage group (Megatron-Core "
                   "microbatch_group_size_per_vp_stage; default pp)")
        ->group("CONFIG");
    cmd.add_option("--first-stage-layers", c.first_stage_layers,
                   "Transformer layers on the first pipeline stage (default: balanced)")
        ->group("CONFIG");
    cmd.add_option("--last-stage-layers", c.last_stage_layers,
                   "Transformer layers on the last pipeline stage (default: balanced)")
        ->group("CONFIG");
    cmd.add_option("--sequence-parallel", f.sequence_parallel, "on|off (default on when tp > 1)")
        ->group("CONFIG");
    cmd.add_option(
           "--cp-comm", f.cp_comm,
           "ring|all-gather|all-to-all: how context parallelism exchanges keys and values (Megatron-Core "
           "--cp-comm-type p2p|all_gather|a2a; default ring)")
        ->group("CONFIG");
    cmd.add_option(
           "--cpu-offload-layers", c.offload_layers,
           "Transformer layers per stage whose activations are offloaded to host memory (Megatron-Core "
           "--cpu-offloading-num-layers; default 0)")
        ->group("CONFIG");
  }
  cmd.add_option("--global-batch", c.global_batch, "Sequences per step (default: the model preset's)")
      ->group("CONFIG");
  cmd.add_option("--seq", c.seq, "Sequence length (default: the model preset's)")->group("CONFIG");
  cmd.add_option("--precision", f.precision,
                 "bf16|fp8 (per-tensor scaling)|fp8-block (MXFP8, block scaling)|nvfp4 (default bf16)")
      ->group("CONFIG");
  cmd.add_option("--mode", f.mode,
                 "training (forward, backward, optimizer) | inference (forward passes only, as a prefill); "
                 "default training, or what a profile ran")
      ->group("CONFIG");
}

void add_assumption_flags(CLI::App& cmd, AssumptionFlags& f) {
  std::string names;
  for (const auto& p : model::framework_presets()) names += (names.empty() ? "" : "|") + p.name;
  cmd.add_option("--framework", f.framework,
                 names + ": a documented set of the assumptions below (docs/MODEL.md); flags override it")
      ->group("ASSUMPTIONS");
  cmd.add_option("--state-bytes", f.state_bytes,
                 "Model-state bytes per parameter: 16 (ZeRO) or 18 (Megatron)")
      ->group("ASSUMPTIONS");
  cmd.add_option("--attention", f.attention,
                 "flash (FlashAttention-2) | flash1 (the 2022 FlashAttention CUDA kernel) | triton "
                 "(FlashAttention in Triton, 2022-23) | cudnn (Transformer Engine's cuDNN kernel) | standard "
                 "(unfused) attention (default flash; cudnn with --framework megatron-core)")
      ->group("ASSUMPTIONS");
  cmd.add_flag("--moe-a2a-overlap", f.moe_a2a_overlap,
               "MoE: Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm): one micro-batch's "
               "expert all-to-alls hide behind another's compute in the opposite direction")
      ->group("ASSUMPTIONS");
  cmd.add_flag("--fp8-param-gather", f.fp8_param_gather,
               "FP8 recipes: weights kept and all-gathered in FP8 (Megatron-Core --fp8-param-gather)")
      ->group("ASSUMPTIONS");
  optional_option(cmd, "--moe-imbalance", f.moe_imbalance,
                  "Tokens on the busiest expert-parallel rank over the mean (default 1)");
  optional_option(cmd, "--nvfp4-bf16-layers", f.nvfp4_bf16_layers,
                  "NVFP4: last transformer layers kept in BF16 (default 0)");
  for (const char* name : {"--moe-imbalance", "--nvfp4-bf16-layers"})
    cmd.get_option(name)->group("ASSUMPTIONS");
  optional_option(cmd, "--gemm-efficiency", f.gemm_efficiency, "Achievable fraction of peak for GEMMs");
  optional_option(
      cmd, "--sustained-fraction", f.sustained_fraction,
      "Fraction of microbenchmark GEMM/attention rates sustained in training (default: the hardware "
      "preset's, fitted per GPU family; docs/ACCURACY.md)");
  optional_option(cmd, "--overlap-tp", f.overlap_tp,
                  "TP collectives overlapped with their GEMMs as Transformer Engine chunks them, 0-1 (1: "
                  "--tp-comm-overlap; without sequence parallelism the share of GEMM time they hide behind; "
                  "default 0, megatron-core 1)");
  optional_option(cmd, "--overlap-cp", f.overlap_cp, "Fraction of CP communication hideable (default 1)");
  optional_option(cmd, "--overlap-ep", f.overlap_ep, "Fraction of EP all-to-all hidden (default 0)");
  optional_option(cmd, "--overlap-pp", f.overlap_pp, "Fraction of PP sends hidden (default 0)");
  optional_option(cmd, "--overlap-dp", f.overlap_dp, "Fraction of DP communication hideable (default 1)");
  for (const char* name : {"--gemm-efficiency", "--sustained-fraction", "--overlap-tp", "--overlap-cp",
                           "--overlap-ep", "--overlap-pp", "--overlap-dp"})
    cmd.get_option(name)->group("ASSUMPTIONS");
}

model::ModelSpec resolve_model(const ModelFlags& f, const ConfigFlags& config) {
  return with_model_errors([&] {
    model::ModelSpec m = model::load_model(f.model);
    model::ModelOverrides o = f.overrides;
    if (config.config.seq > 0) o.seq = config.config.seq;
    model::apply_overrides(m, o);
    return m;
  });
}

model::HardwareSpec resolve_hardware(const ModelFlags& f) {
  return with_model_errors([&] {
    model::HardwareSpec h = model::load_hardware(f.hardware);
    model::apply_overrides(h, f.hardware_overrides);
    return h;
  });
}

model::ParallelConfig parse_config(const ConfigFlags& f) {
  return with_model_errors([&] {
    model::ParallelConfig c = f.config;
    if (!f.recompute.empty()) c.recompute = model::parse_recompute(f.recompute), c.recompute_set = true;
    if (!f.schedule.empty()) c.schedule = model::parse_schedule(f.schedule), c.schedule_set = true;
    c.precision = model::parse_precision(f.precision);
    if (!f.cp_comm.empty()) c.cp_comm = model::parse_cp_comm(f.cp_comm);
    if (!f.mode.empty()) c.mode = model::parse_mode(f.mode), c.mode_set = true;
    if (f.sequence_parallel == "on") {
      c.sequence_parallel = 1;
    } else if (f.sequence_parallel == "off") {
      c.sequence_parallel = 0;
    } else if (!f.sequence_parallel.empty()) {
      throw model::InvalidInput("--sequence-parallel " + f.sequence_parallel + ": use on or off");
    }
    return c;
  });
}

model::Efficiencies resolve_efficiencies(const AssumptionFlags& f, const model::HardwareSpec& hw,
                                         model::ParallelConfig* config) {
  return with_model_errors([&] {
    model::Efficiencies e = model::defaults_for(hw);
    if (!f.framework.empty()) {
      model::ParallelConfig scratch;
      model::apply_framework(model::framework_preset(f.framework), e, config != nullptr ? *config : scratch);
    }
    if (!f.state_bytes.empty()) e.state_bytes = model::parse_state_bytes(f.state_bytes);
    if (!f.attention.empty()) model::set_attention_kernel(e, f.attention);
    if (f.fp8_param_gather) e.fp8_param_gather = true;
    if (f.moe_a2a_overlap) e.moe_a2a_overlap = true;
    if (f.sustained_fraction) {
      if (!(*f.sustained_fraction > 0 && *f.sustained_fraction <= 1.5))
        throw model::InvalidInput(
            fmt::format("--sustained-fraction {}: use a value in (0, 1.5]", *f.sustained_fraction));
      e.sustained_fraction = *f.sustained_fraction;
    }
    auto fraction = [](const char* name, std::optional<double> v, double& target, double max) {
      if (!v) return;
      if (!(*v >= 0 && *v <= max))
        throw model::InvalidInput(fmt::format("{} {}: use a value in [0, {}]", name, *v, max));
      target = *v;
    };
    if (f.gemm_efficiency) {
      if (!(*f.gemm_efficiency > 0 && *f.gemm_efficiency <= 1))
        throw model::InvalidInput(
            fmt::format("--gemm-efficiency {}: use a value in (0, 1]", *f.gemm_efficiency));
      e.gemm_bf16 = e.gemm_fp8 = e.gemm_fp4 = *f.gemm_efficiency;
    }
    fraction("--overlap-tp", f.overlap_tp, e.overlap_tp, 1);
    fraction("--overlap-cp", f.overlap_cp, e.overlap_cp, 1);
    fraction("--overlap-ep", f.overlap_ep, e.overlap_ep, 1);
    fraction("--overlap-pp", f.overlap_pp, e.overlap_pp, 1);
    fraction("--overlap-dp", f.overlap_dp, e.overlap_dp, 1);
    if (f.moe_imbalance) {
      if (!(*f.moe_imbalance >= 1))
        throw model::InvalidInput(
            fmt::format("--moe-imbalance {}: use a value of at least 1", *f.moe_imbalance));
      e.moe_imbalance = *f.moe_imbalance;
    }
    if (f.nvfp4_bf16_layers) {
      if (*f.nvfp4_bf16_layers < 0)
        throw model::InvalidInput(fmt::format("--nvfp4-bf16-layers {}: use 0 or more", *f.nvfp4_bf16_layers));
      e.nvfp4_bf16_layers = *f.nvfp4_bf16_layers;
    }
    return e;
  });
}

std::string describe_layout(const model::ParallelConfig& c) {
  // etp only where it differs from its default (tp): the expert layers' own tensor parallelism.
  const std::string etp = c.etp > 0 && c.etp != c.tp ? fmt::format(" etp={}", c.etp) : std::string();
  std::string s = fmt::format("tp={} pp={} dp={} cp={} ep={}{} mb={} zero={} recompute={} {}", c.tp, c.pp,
                              c.dp, c.cp, c.ep, etp, c.micro_batch, c.zero, model::to_string(c.recompute),
                              model::to_string(c.schedule));
  if (c.schedule == model::Schedule::kInterleaved) s += fmt::format(" v={}", c.virtual_stages);
  if (c.first_stage_layers >= 0) s += fmt::format(" first-stage-layers={}", c.first_stage_layers);
  if (c.last_stage_layers >= 0) s += fmt::format(" last-stage-layers={}", c.last_stage_layers);
  if (c.offload_layers > 0) s += fmt::format(" cpu-offload-layers={}", c.offload_layers);
  if (c.cp > 1 && c.cp_comm != model::CpComm::kRing)
    s += fmt::format(" cp-comm={}", model::to_string(c.cp_comm));
  if (c.sp()) s += " sp";
  if (c.inference()) s += " inference";
  return s;
}

void write_prediction(JsonWriter& json, const model::Prediction& p, const model::ModelSpec& m,
                      const model::HardwareSpec& hw, const model::Efficiencies& eff) {
  const auto& c = p.config;
  json.field("fits", p.fits);
  json.key("memory_gib").begin_object();
  json.field("params", gib(p.memory.params));
  json.field("grads", gib(p.memory.grads));
  json.field("optimizer", gib(p.memory.optimizer));
  json.field("activations", gib(p.memory.activations));
  json.field("other", gib(p.memory.other));
  json.field("total", gib(p.memory.total()));
  json.field("capacity", gib(p.memory.capacity));
  json.end_object();
  json.field("step_time_s", p.step_time_s);
  json.key("time_s").begin_object();
  json.field("compute", p.time.compute);
  json.field("recompute", p.time.recompute);
  json.field("tp_exposed", p.time.tp_exposed);
  json.field("cp_exposed", p.time.cp_exposed);
  json.field("ep_exposed", p.time.ep_exposed);
  json.field("pp_p2p_exposed", p.time.pp_p2p_exposed);
  json.field("pp_bubble", p.time.pp_bubble);
  json.field("dp_exposed", p.time.dp_exposed);
  json.field("optimizer", p.time.optimizer);
  json.end_object();
  json.field("model_tflops_per_gpu", p.model_tflops_per_gpu);
  json.field("hardware_tflops_per_gpu", p.hardware_tflops_per_gpu);
  json.field("mfu", p.mfu);
  json.field("tokens_per_s", p.tokens_per_s);
  json.field("bubble_fraction", p.bubble_fraction);
  json.key("comm_s").begin_object();
  json.field("tp", p.comm.tp);
  json.field("cp", p.comm.cp);
  json.field("ep", p.comm.ep);
  json.field("pp", p.comm.pp);
  json.field("dp", p.comm.dp);
  json.end_object();
  json.key("config").begin_object();
  json.field("model", m.name);
  json.field("hardware", hw.name);
  json.field("gpus", c.gpus);
  json.field("tp", c.tp);
  json.field("pp", c.pp);
  json.field("dp", c.dp);
  json.field("cp", c.cp);
  json.field("ep", c.ep);
  json.field("etp", c.etp);
  json.field("micro_batch", c.micro_batch);
  json.field("global_batch", c.global_batch);
  json.field("micro_batches", c.micro_batches());
  json.field("seq", c.seq);
  json.field("zero", c.zero);
  json.field("recompute", model::to_string(c.recompute));
  json.field("schedule", model::to_string(c.schedule));
  json.field("virtual_stages", c.virtual_stages);
  json.key("stage_layers").begin_array();
  for (int n : p.stage_layers) json.value(n);
  json.end_array();
  json.field("pacing_stage", p.pacing_stage);
  json.field("precision", model::to_string(c.precision));
  json.field("cp_comm", model::to_string(c.cp_comm));
  json.field("mode", model::to_string(c.mode));
  json.field("sequence_parallel", c.sp());
  json.key("defaulted").begin_array();
  for (const auto& name : c.defaulted) json.value(name);
  json.end_array();
  json.end_object();
  json.key("assumptions").begin_object();
  json.field("state_bytes_per_param", model::to_string(eff.state_bytes));
  json.field("attention", model::attention_kernel_name(eff));
  json.field("sustained_fraction", eff.sustained_fraction);
  json.field("fp8_param_gather", eff.fp8_param_gather);
  json.field("moe_a2a_overlap", eff.moe_a2a_overlap);
  json.field("gemm_efficiency", gemm_efficiency(c.precision, eff));
  json.field("moe_imbalance", eff.moe_imbalance);
  json.field("hbm_efficiency", eff.hbm);
  json.field("intra_node_gbps_effective", eff.intra_node_Bps / 1e9);
  json.field("inter_node_gbps_effective", eff.inter_node_Bps / 1e9);
  json.field("overlap_tp", eff.overlap_tp);
  json.field("overlap_cp", eff.overlap_cp);
  json.field("overlap_ep", eff.overlap_ep);
  json.field("overlap_pp", eff.overlap_pp);
  json.field("overlap_dp", eff.overlap_dp);
  json.end_object();
}

std::string format_explanation(const model::Prediction& p) {
  std::string out =
      fmt::format("step time {:.4g} s = sum of the parts below (time_s keys in brackets)\n", p.step_time_s);
  double sum = 0;
  for (const auto& t : p.terms) {
    sum += t.seconds;
    out +=
        fmt::format("  [{}] {}: {:.4g} s ({:.1f} %)\n      = {}\n      with {}\n", t.part, t.name, t.seconds,
                    p.step_time_s > 0 ? 100 * t.seconds / p.step_time_s : 0.0, t.formula, t.inputs);
  }
  out += fmt::format("  sum of the parts: {:.4g} s\n", sum);
  return out;
}

void write_explanation(JsonWriter& json, const model::Prediction& p) {
  json.key("explain").begin_array();
  for (const auto& t : p.terms) {
    json.begin_object();
    json.field("part", t.part).field("name", t.name).field("seconds", t.seconds);
    json.field("formula", t.formula).field("inputs", t.inputs);
    json.end_object();
  }
  json.end_array();
}

std::string format_prediction(const model::Prediction& p, const model::ModelSpec& m,
                              const model::HardwareSpec& hw, const model::Efficiencies& eff) {
  const auto& c = p.config;
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  line(fmt::format("{} on {} x {}: {}", m.name, c.gpus, hw.name, describe_layout(c)));
  line(fmt::format("  global batch {} x seq {} = {} micro-batches of {} per pipeline, {}", c.global_batch,
                   c.seq, c.micro_batches(), c.micro_batch, model::to_string(c.precision)));
  if (!c.defaulted.empty()) line(fmt::format("  defaults chosen: {}", fmt::join(c.defaulted, ", ")));
  line(fmt::format("memory per GPU: {:.1f} GiB of {:.1f} GiB -> {}", gib(p.memory.total()),
                   gib(p.memory.capacity), p.fits ? "fits" : "DOES NOT FIT"));
  line(fmt::format(
      "  params {:.2f}  grads {:.2f}  optimizer {:.2f}  activations {:.2f}  other {:.2f} GiB (stage {})",
      gib(p.memory.params), gib(p.memory.grads), gib(p.memory.optimizer), gib(p.memory.activations),
      gib(p.memory.other), p.memory.stage));
  if (c.pp > 1) {
    std::string layers;
    for (int n : p.stage_layers) layers += (layers.empty() ? "" : " ") + std::to_string(n);
    line(fmt::format("pipeline: layers per stage [{}], stage {} sets the pace", layers, p.pacing_stage));
  }
  line(fmt::format("step time: {:.4g} s", p.step_time_s));
  auto part = [&](const char* name, double v) {
    line(fmt::format("  {:<15} {:>10.4g} s {:>6.1f} %", name, v, 100.0 * v / p.step_time_s));
  };
  part("compute", p.time.compute);
  part("recompute", p.time.recompute);
  part("tp_exposed", p.time.tp_exposed);
  part("cp_exposed", p.time.cp_exposed);
  part("ep_exposed", p.time.ep_exposed);
  part("pp_p2p_exposed", p.time.pp_p2p_exposed);
  part("pp_bubble", p.time.pp_bubble);
  part("dp_exposed", p.time.dp_exposed);
  part("optimizer", p.time.optimizer);
  line(fmt::format("MFU {:.1f} %  model {:.1f} TFLOP/s/GPU  hardware {:.1f} TFLOP/s/GPU  {:.4g} tokens/s",
                   100 * p.mfu, p.model_tflops_per_gpu, p.hardware_tflops_per_gpu, p.tokens_per_s));
  line(fmt::format(
      "assumptions: {}-byte model state, {} attention, GEMM {:.0f} % of peak x sustained {:.2f}, HBM {:.0f} "
      "%, "
      "{} {:.0f} "
      "GB/s, network {:.0f} GB/s per GPU, overlap tp {:.1f} dp {:.1f} pp {:.1f} ep {:.1f} cp {:.1f}",
      model::to_string(eff.state_bytes), model::attention_kernel_name(eff),
      100 * gemm_efficiency(c.precision, eff), eff.sustained_fraction, 100 * eff.hbm, hw.intra_node_link,
      eff.intra_node_Bps / 1e9, eff.inter_node_Bps / 1e9, eff.overlap_tp, eff.overlap_dp, eff.overlap_pp,
      eff.overlap_ep, eff.overlap_cp));
  return out;
}

}  // namespace meshscope::app
