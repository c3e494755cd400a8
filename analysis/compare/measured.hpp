// The measured side of a profile, computed once (docs/COMPARE.md "The measured model"):
// what the profile ran (Workload), its steps as `compare` defines them (per step: GPU span, compute,
// communication, exposed communication, exposed memory traffic, idle; exposed communication split over the
// parallel dimensions of the layout), the measured roofline of its kernels against the profile's own
// hardware, and the measured FLOPs per step. `compare` and `info` read it; the GUI's Explorer, Summary and
// Roofline read the same object instead of measuring anything themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/compare.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/work.hpp"

namespace meshscope::compare {

struct MeasuredModel {
  measure::ProfileWork work;                    // op_work / kernel_work of the profile
  Workload workload;                            // inferred from the profile, what the user stated applied
  Workload recorded;                            // inferred from the profile's records alone
  std::optional<model::HardwareSpec> hardware;  // the preset of workload.hardware, when known
  // The layout the steps' exposed communication is split by: LAYOUT when given to measure_profile, else
  // the inferred one (tp, pp, dp, cp, ep of the workload, 1 where unknown).
  model::ParallelConfig layout;
  bool layout_inferred = true;
  Measured steps;                      // compare's measured steps (the one definition: measure_steps)
  std::int64_t rank_steps = 0;         // rank-steps (or whole ranks without steps) averaged into steps.mean
  measure::MeasuredRoofline roofline;  // against hardware's ceilings (unchecked when unknown)
  // Measured FLOPs and bytes per step: the work of the kernels that started inside each rank-step's GPU
  // window, mean over rank-steps (0 without shapes).
  double flops_per_step = 0, bytes_per_step = 0;
  // The same over every counted operator but the output layer's GEMMs (compare::without_output_layer, for the
  // workload's model): the measured side of compare::Coverage.
  double work_flops_per_step = 0;
};

// The ceilings of HW for the measured roofline: the 16-bit tensor peak, FP8, and for FP32 operands the TF32
// tensor peak where HW has one (else FP32's).
measure::WorkCeilings ceilings_of(const model::HardwareSpec& hw);

// The layout of WORKLOAD as a ParallelConfig (1 for every dimension it does not know), with gpus = the
// product; the model fields (global batch, sequence) are left for model::resolve.
model::ParallelConfig inferred_layout(const Workload& workload);

// Which fields of a layout were taken from what the profile states (`annotate --layout`) and which from what
// it shows, by name ("tp", "micro_batch", "global_batch", ...), in the order they were taken.
struct LayoutOrigins {
  std::vector<std::string> stated, shown;
};

// The layout a profile is predicted with (`compare`, and the Explorer's start): each field GIVEN sets (0: not
// given; the command's flags) stays; else what WORKLOAD states; else, when SHOWN (the model predicted is the
// profile's own), what it shows — TP, PP, DP, CP, EP, micro-batch and sequence; the global batch is one
// micro-batch per step and data-parallel rank when the profile shows both and nothing sets it; the GPUs are
// WORLD_SIZE when neither they nor DP are set. Everything else is left to model::resolve (and the mode and
// precision to the caller). ORIGINS receives the fields taken.
model::ParallelConfig profile_layout(const Workload& workload, std::int64_t world_size,
                                     model::ParallelConfig given, bool shown, LayoutOrigins& origins);

// profile_layout's layout with what the profile ran: the mode (training or inference) where GIVEN does not
// set it, and the precision of its GEMMs where PRECISION_GIVEN is false (FP8 is predicted in FP8; FP32, which
// the model does not predict, leaves 16 bits and a warning). ORIGINS receives "mode" (stated or shown) and
// "precision" after the layout's fields. What `compare` predicts a profile with, and where the Explorer
// starts.
struct ProfileConfig {
  model::ParallelConfig config;
  std::optional<model::Mode> ran;  // what the profile ran, when known
  std::string precision_warning;   // why the prediction is not of the profile's own precision
};
ProfileConfig profile_config(const Workload& workload, std::int64_t world_size, model::ParallelConfig given,
                             bool shown, bool precision_given, LayoutOrigins& origins);

// Measures PROFILE (ANALYSIS is measure::analyze of it, WORK its work per operator read with
// uncounted_shapes: job/profile_work.hpp). LAYOUT, when given, splits exposed communication by its parallel
// dimensions instead of the inferred layout's.
MeasuredModel measure_profile(const Profile& profile, const measure::Analysis& analysis,
                              measure::ProfileWork work, const model::ParallelConfig* layout = nullptr);

// MEASURED as if STATEMENT were what its profile states (the Explorer, after the user saved a statement into
// the open profile): the workload re-stated from MEASURED.recorded, the hardware, the layout (when it was
// inferred) and the measured roofline against the hardware. The steps keep the split of exposed communication
// by the layout they were measured with (measure_steps again with the new layout, where the events are at
// hand), and the measured FLOPs per step the operators plotted before.
void restate(MeasuredModel& measured, const Statement& statement);

}  // namespace meshscope::compare
