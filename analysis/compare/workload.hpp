// What a profile ran, inferred from the profile itself (docs/COMPARE.md "What the
// profile ran"): transformer or not and its sizes from the recorded shapes of its GEMMs, attention and
// embedding (the op_work table), its parallel layout from the process groups (distributedInfo) and the
// sharded shapes, and the hardware preset from the GPU's name. `info --json` writes it; `compare PROFILE`
// without model flags predicts it; the GUI's Explorer opens on it. Every field is unset (null) when the
// profile does not show it, and `evidence` says, one sentence per fact, where each value came from.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare/recorded_hardware.hpp"
#include "analysis/compare/statement.hpp"
#include "analysis/measure/summary.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/predict.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

// How sure a value of the Workload is (docs/COMPARE.md "Confidence"): high, read from one recorded shape or
// name; medium, derived from several by a stated rule; low, assumed where the profile shows nothing against
// it; stated, what the user stored in the profile.
enum class Confidence : std::uint8_t { kLow, kMedium, kHigh, kStated };
const char* to_string(Confidence confidence);  // "low", "medium", "high", "stated"

struct Workload {
  bool transformer = false;  // kind: "transformer" or "unknown"
  std::optional<std::int64_t> hidden, layers, ffn, heads, kv_heads, vocab, experts, top_k;
  // A head size of the model's own (heads × head size is not the hidden size: Qwen3, Gemma, latent
  // attention), the values' where it differs from the queries' and keys', and multi-head latent attention's
  // ranks (DeepSeek-V2/V3: queries through a rank of Q_LORA_RANK, 0 for none; keys and values from a latent
  // of KV_LORA_RANK; QK_ROPE_DIM of each query and key head rotary); unset for ordinary attention.
  std::optional<std::int64_t> head_dim, v_head_dim, q_lora_rank, kv_lora_rank, qk_rope_dim;
  std::optional<std::int64_t> tokens_per_micro_batch;
  std::optional<std::int64_t> micro_batch, seq;  // the attention's batch and sequence length
  bool gated_mlp = false;                        // two up-projections per layer (SwiGLU)
  // "transformer", "vision transformer" (a patch embedding, no vocabulary: CLASSES is its classifier's
  // width) or "encoder-decoder" (LAYERS = ENCODER_LAYERS + DECODER_LAYERS); empty when not recognised.
  std::string structure;
  std::optional<std::int64_t> encoder_layers, decoder_layers, classes;
  // How the attention was computed: "fused", "eager" or "eager, heads folded into the batch".
  std::string attention;
  // Other models the trace holds (a text encoder beside a decoder), one phrase each; the fields above
  // describe the one of most GEMM work.
  std::vector<std::string> other_models;
  bool shapes_recorded = false;  // some operator was recorded with shapes
  // Backward operators recorded (autograd's *Backward* functions): a training step; false: forward passes
  // only (inference); unset when the profile holds no CPU operators.
  std::optional<bool> training;
  std::optional<std::int64_t> tp, pp, dp, cp, ep;
  // The hardware's name: a preset's (assets/hardware), or, for a GPU no preset names, the name of
  // RECORDED_HARDWARE, its description from the profile's records.
  std::optional<std::string> hardware;
  std::optional<model::HardwareSpec> recorded_hardware;
  // The precision of most of the recorded GEMM and attention FLOPs (their first floating-point input type),
  // and that share; unset without shapes.
  std::optional<measure::WorkPrecision> precision;
  double precision_share = 0;
  std::string gpu;  // the device name the profile gives, "" when none
  std::vector<std::string> evidence;
  // Why the shapes show no transformer when a more precise reason than kNotATransformer is known (one
  // sentence saying what to pass); empty otherwise.
  std::string not_recognised;
  // Per value set above, by its name in `info --json` (hidden, layers, tp, hardware, ...), how sure it is.
  std::map<std::string, Confidence> confidence;
  // What the user stated the job ran (statement.hpp), stored in the profile: the stated layout's values are
  // also in the fields above (tp ... seq, training), where they replace what was inferred. STATED says so,
  // one sentence per value (EVIDENCE is what was inferred).
  std::optional<model::ModelSpec> stated_model;
  std::optional<model::HardwareSpec> stated_hardware;
  StatedLayout stated_layout;
  std::vector<std::string> stated;
  const char* kind() const { return transformer ? "transformer" : "unknown"; }
};

// The hardware preset of a GPU as profilers name it ("NVIDIA H100 80GB HBM3" -> h100-sxm, "NVIDIA H100 NVL"
// -> h100-nvl, "Tesla V100-SXM2-16GB" -> v100-16gb, "AMD Instinct MI300X VF" -> mi300x); where the name
// leaves the variant open, TRAITS decide (a V100's memory; an "MI250X/MI250" GCD's 110 or 104 compute units;
// a generic "AMD Radeon Graphics" that is a CDNA 2 die by its compute units, memory and gfx9.0). Empty when
// no preset describes that product for certain (an A100 PCIe or board name, an A800 PCIe). NOTE says what the
// choice rests on when the name alone did not settle it.
std::string hardware_preset_for(std::string_view device_name, std::string* note = nullptr,
                                const GpuTraits& traits = {});

// The GPU most of PROFILE's ranks ran work on (name empty when the profile names none) and its preset
// (hardware_preset_for, with what the profile records of the device), else its description from those records
// (hardware_from_traits). SUMMARY, when given, tells the devices used without the events.
struct ProfileGpu {
  std::string name, preset, note;
  std::optional<RecordedHardware> recorded;  // only without a preset
};
ProfileGpu profile_gpu(const Profile& profile, const ProfileSummary* summary = nullptr);

// Infers the workload of PROFILE from WORK (its work per operator: job/profile_work.hpp), then applies what
// the user stated in the profile (statement.hpp; a stored value that is not valid throws meshscope::Error
// naming the profile). With SUMMARY (a profile loaded without its events, LoadOptions::events off) training
// or inference is read from the summaries' operator names.
Workload infer_workload(const Profile& profile, const measure::ProfileWork& work,
                        const ProfileSummary* summary = nullptr);
// The same from the profile's records alone, whatever is stated.
Workload infer_recorded_workload(const Profile& profile, const measure::ProfileWork& work,
                                 const ProfileSummary* summary = nullptr);
// What STATEMENT states replaces what WORKLOAD inferred (stated_model, stated_hardware, stated_layout, and
// the layout, sequence and mode fields), each value said in WORKLOAD.stated.
void apply_statement(const Statement& statement, Workload& workload);

// The hardware to predict WORKLOAD on: the stated hardware, else the preset it names (model::load_hardware,
// which throws model::InvalidInput for a preset the assets folder lacks), else its recorded description;
// nullopt when the hardware is unknown.
std::optional<model::HardwareSpec> hardware_spec(const Workload& workload);

// The model to predict for WORKLOAD: the model the user stated (its sequence the stated one), else, for a
// transformer, the sizes it shows on the layout of a preset of the same
// family (llama3-8b for a gated MLP, gpt otherwise), that preset's other choices kept. False when WORKLOAD
// is not a recognised transformer or lacks a size the prediction needs (hidden, layers, heads, ffn, vocab).
bool inferred_model(const Workload& workload, model::ModelSpec& out, std::string* why = nullptr);

// What model WORKLOAD ran, in one phrase ("transformer: hidden 1024, 24 layers, ffn 2816, 16 heads (16 kv),
// vocab 151936", "encoder-decoder: ... 3 + 3 layers (encoder + decoder) ...", "vision transformer: ... 100
// classes"), with the tokens per micro-batch when TOKENS, the experts and the other models the trace holds;
// empty when it is not a recognised transformer. `info`, `compare` and the Explorer say it so.
std::string model_text(const Workload& workload, bool tokens);

// The values of WORKLOAD assumed where the profile does not show them (confidence low), among the model's
// sizes and the layout, as "pp 1", in that order; TAKEN, when given, keeps only those fields.
std::vector<std::string> assumed_values(const Workload& workload,
                                        const std::vector<std::string>* taken = nullptr);

// The one line `compare` and the GUI show for an unknown workload.
extern const char* const kNotATransformer;

}  // namespace meshscope::compare
