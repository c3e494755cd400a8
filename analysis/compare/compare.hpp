// Prediction next to measurement (DESIGN.md `meshscope compare`; docs/COMPARE.md).
//
// The measured step of each rank splits exactly into compute + exposed communication + exposed memory
// traffic + idle (= its GPU span; analysis/measure definitions). The prediction's parts are mapped onto
// those as follows (the same rows, in order, are `kParts`):
//   compute      <- predicted compute + recompute + optimizer   | measured compute (recomputed forward and
//                   optimizer kernels are compute kernels like any other: not separable in a measurement)
//   tp_exposed, cp_exposed, ep_exposed, pp_p2p_exposed, dp_exposed
//                <- the same predicted parts                   | measured exposed communication of the
//                   collectives whose process group is that parallel dimension's (by its member ranks
//                   against the CONFIG's Megatron rank order, else group size, else its description)
//   comm_other   <- 0                                           | exposed communication of other groups or of
//                   kernels without metadata
//   idle         <- predicted pp_bubble                         | measured idle (also data loading, host
//                   overhead, synchronisation: more than the bubble)
//   memory       <- 0 (the model has no copies)                 | exposed memcpy/memset time
// Both columns sum to the step time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare/calibrate.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/predict.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

enum class Part : std::uint8_t {
  kCompute,
  kTp,
  kCp,
  kEp,
  kPp,
  kDp,
  kCommOther,
  kIdle,
  kMemory,
};
inline constexpr int kPartCount = 9;
inline constexpr std::array<Part, kPartCount> kParts = {Part::kCompute,   Part::kTp,   Part::kCp,
                                                        Part::kEp,        Part::kPp,   Part::kDp,
                                                        Part::kCommOther, Part::kIdle, Part::kMemory};
// Row names: compute, tp_exposed, cp_exposed, ep_exposed, pp_p2p_exposed, dp_exposed, comm_other, idle,
// memory.
const char* to_string(Part part);
// What the prediction puts in the row ("compute + recompute + optimizer", "pp_bubble", ...).
const char* predicted_source(Part part);

using PartSeconds = std::array<double, kPartCount>;

// The prediction's step split into the rows (sums to its step_time_s).
PartSeconds predicted_parts(const model::Prediction& prediction);

// Which parallel dimension a process group belongs to under CONFIG (Megatron rank order: tp fastest, then
// cp, dp, pp; ep carved out of dp). MEMBERS may be empty (then GROUP_SIZE and DESC decide).
Part group_part(std::span<const int> members, int group_size, std::string_view op, std::string_view desc,
                const model::ParallelConfig& config);

// One step number, averaged over the ranks that ran it.
struct MeasuredStep {
  std::int64_t step = 0;  // ProfilerStep number; -1 for "the whole profile" when there are no step markers
  int ranks = 0;
  double dur_s = 0;  // mean GPU span
  double max_dur_s = 0;
  std::int32_t slowest_rank = -1;
  double compute_s = 0, comm_s = 0, exposed_comm_s = 0, idle_s = 0, memory_s = 0;
  double memory_exposed_s = 0;  // memory traffic with neither compute nor communication running
  PartSeconds parts{};          // sums to dur_s
};

struct Measured {
  std::vector<MeasuredStep> steps;  // by step number
  MeasuredStep mean;                // over the steps (step = -1)
  bool whole_profile = false;       // no step markers: one pseudo-step per rank
};

// The measured steps of ANALYSIS, exposed communication attributed to CONFIG's parallel dimensions.
Measured measure_steps(const Profile& profile, const measure::Analysis& analysis,
                       const model::ParallelConfig& config);

struct PartDifference {
  double predicted_s = 0, measured_s = 0;
  double diff_s = 0;    // predicted − measured
  double diff_pct = 0;  // diff / measured × 100; NaN when measured is 0
};
std::array<PartDifference, kPartCount> difference(const PartSeconds& predicted, const PartSeconds& measured);
PartDifference difference(double predicted, double measured);

// How much of a step the measurement holds: the work its kernels did (the FLOPs of the operators recorded
// with shapes, measure::ProfileWork) per rank-step against the prediction's model FLOPs per GPU and step
// without the output logits (a prefill often computes the logits of the last position only, which would make
// a whole forward pass of a small model look like two thirds of one), and the measured work without the
// output layer's GEMMs (without_output_layer) likewise. A trace of a whole step does about the layers' work
// (the operators without a FLOPs formula keep it near, not at, 1); one that holds part of a step (a capture
// window, some of the layers) does a fraction of it.
struct Coverage {
  double measured_flops_per_rank_step = 0;
  double predicted_flops_per_gpu_step = 0;
  double share = 0;      // measured / predicted
  bool partial = false;  // share below kPartialStepShare: the measured step is part of a step
};
// Below this share of the predicted work, a measured step is taken to be part of a step.
inline constexpr double kPartialStepShare = 0.6;

// The FLOPs per rank-step of WORK's counted operators whose kernels started inside a rank-step's GPU window
// (each rank's whole GPU span when WHOLE_PROFILE: no step markers), mean over rank-steps; 0 without any.
// PLOTTED, when given, keeps only the operators it marks (by index into WORK.ops). RANK_STEPS, when given,
// receives how many rank-steps the mean is over; BYTES_PER_STEP the mean bytes likewise.
double flops_per_rank_step(const Profile& profile, const measure::Analysis& analysis,
                           const measure::ProfileWork& work, bool whole_profile,
                           const std::vector<bool>* plotted = nullptr, std::int64_t* rank_steps = nullptr,
                           double* bytes_per_step = nullptr);

// Which of WORK's operators to count when the work is compared without the logits: every one but the
// output layer's GEMMs (forward and backward: any GEMM with an operand as wide as the vocabulary, whole or
// split over CONFIG's TP). When the vocabulary is as wide as a width the layers use, or as many as the tokens
// of a sequence or a micro-batch, every operator is kept.
std::vector<bool> without_output_layer(const measure::ProfileWork& work, const model::ModelSpec& model,
                                       const model::ParallelConfig& config);

struct Comparison {
  std::int64_t profile_ranks = 0, world_size = 0;
  model::ParallelConfig config;
  model::Prediction predicted;
  model::Efficiencies efficiencies;
  Measured measured;
  std::optional<ProfileCalibration> calibration;
  std::optional<model::Prediction> calibrated;
  std::optional<Coverage> coverage;   // when the profile recorded shapes (WORK given to compare)
  std::vector<std::string> warnings;  // world-size mismatch and the like: shown, never fatal
  std::vector<std::string> notes;     // what the mapping could and could not separate
};

// CONFIG resolved for MODEL on HW (model::resolve), EFF from defaults_for/flags. Throws model::InvalidInput
// for a layout the model rejects. WORK (PROFILE's work per operator: job/profile_work.hpp), with shapes
// recorded, gives the coverage.
Comparison compare(const Profile& profile, const measure::Analysis& analysis, const model::ModelSpec& model,
                   const model::HardwareSpec& hw, const model::ParallelConfig& config,
                   const model::Efficiencies& eff, bool calibrate_first, const measure::ProfileWork& work);

// The coverage of measured FLOPS_PER_RANK_STEP against PREDICTION of MODEL on CONFIG's GPUs.
Coverage coverage_of(double flops_per_rank_step, const model::Prediction& prediction,
                     const model::ModelSpec& model, const model::ParallelConfig& config);

}  // namespace meshscope::compare
