// MODEL, HARDWARE and CONFIG flags shared by `predict`, `search`, `compare` and the GUI's command line:
//   MODEL:    --model NAME|FILE.toml --layers --hidden --heads --kv-heads --ffn --vocab --experts --top-k
//   HARDWARE: --hardware NAME|FILE.toml --gpus-per-node --intra-node-gbps --inter-node-gbps
//   CONFIG:   --gpus --tp --pp --dp --cp --ep --micro-batch --global-batch --seq --zero --recompute
//   --schedule
//             --virtual-stages --microbatch-group --first-stage-layers --last-stage-layers --precision
//             --cpu-offload-layers --mode training|inference (+ --sequence-parallel on|off, --cp-comm)
//   ASSUMPTIONS: --framework NAME, then --state-bytes 16|18 --attention flash|cudnn|standard
//   --gemm-efficiency
//             --sustained-fraction --overlap-{tp,cp,ep,pp,dp} --moe-imbalance --nvfp4-bf16-layers
//             --fp8-param-gather override it
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "analysis/model/predict.hpp"
#include "analysis/model/presets.hpp"
#include "profiler/json_writer.hpp"

namespace meshscope::app {

struct ModelFlags {
  std::string model = "gpt";
  model::ModelOverrides overrides;
  std::string hardware = "h100-sxm";
  model::HardwareOverrides hardware_overrides;
};

struct ConfigFlags {
  model::ParallelConfig config;
  std::string recompute, schedule, precision = "bf16", sequence_parallel, mode, cp_comm;
};

struct AssumptionFlags {
  std::string framework;    // empty: the defaults of Efficiencies (see docs/MODEL.md)
  std::string state_bytes;  // empty: the framework's (16 without one)
  std::string attention;    // empty: the framework's (flash without one)
  std::optional<double> gemm_efficiency, sustained_fraction, overlap_tp, overlap_cp, overlap_ep, overlap_pp,
      overlap_dp, moe_imbalance;
  std::optional<int> nvfp4_bf16_layers;
  bool fp8_param_gather = false;
  bool moe_a2a_overlap = false;
};

void add_model_flags(CLI::App& cmd, ModelFlags& flags);
// WITH_LAYOUT false leaves out the layout flags (--tp ... --virtual-stages) that `search` enumerates itself.
void add_config_flags(CLI::App& cmd, ConfigFlags& flags, bool with_layout = true);
void add_assumption_flags(CLI::App& cmd, AssumptionFlags& flags);

// Loads the presets and applies the overrides; throws meshscope::Error (exit 1) on bad input.
model::ModelSpec resolve_model(const ModelFlags& flags, const ConfigFlags& config);
model::HardwareSpec resolve_hardware(const ModelFlags& flags);
// The parsed CONFIG flags (not yet resolved: see model::resolve).
model::ParallelConfig parse_config(const ConfigFlags& flags);
// The hardware's defaults, then --framework, then the explicit assumption flags. CONFIG (when given) takes
// the framework's ZeRO stage if --zero was not given.
model::Efficiencies resolve_efficiencies(const AssumptionFlags& flags, const model::HardwareSpec& hw,
                                         model::ParallelConfig* config = nullptr);

// Runs FN, turning model::InvalidInput into meshscope::Error so the command exits 1 with its one line.
template <typename Fn>
auto with_model_errors(Fn&& fn) -> decltype(fn());

// Writes a Prediction as the keys of DESIGN.md's `predict --json` (into an open object).
void write_prediction(JsonWriter& json, const model::Prediction& prediction, const model::ModelSpec& model,
                      const model::HardwareSpec& hw, const model::Efficiencies& eff);
// `predict --explain`: the step time as a sum of named parts, each with its formula and inputs.
std::string format_explanation(const model::Prediction& prediction);
void write_explanation(JsonWriter& json, const model::Prediction& prediction);
// Human-readable form of the same.
std::string format_prediction(const model::Prediction& prediction, const model::ModelSpec& model,
                              const model::HardwareSpec& hw, const model::Efficiencies& eff);
// One line describing a layout ("tp=8 pp=4 dp=32 cp=1 ep=1 mb=1 zero=1 recompute=selective 1f1b").
std::string describe_layout(const model::ParallelConfig& config);

}  // namespace meshscope::app

#include "profiler/error.hpp"

template <typename Fn>
auto meshscope::app::with_model_errors(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const model::InvalidInput& e) {
    throw meshscope::Error(e.what());
  }
}
