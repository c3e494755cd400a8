// What changed between two profiles of a job (`meshscope diff A B`): per class, per kernel (grouped by a
// normalised name), per CPU operator and per collective (operation, group size, message size), counts and
// time in A and in B over the whole profile and per step, and a headline of the few changes that explain most
// of the difference in step time.
//
// Per step means are means over rank-steps: the time of the work each profile's steps launched (by
// correlation id, as measure.hpp attributes work to steps), divided by the number of (rank, step) pairs that
// launched GPU work, so that runs with different step or rank counts compare. A profile without steps counts
// each rank's whole profile as one step. docs/ANALYSIS.md ("Diff") has the definitions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "analysis/measure/summary.hpp"
#include "profiler/profile.hpp"

namespace meshscope::measure {

// A kernel name with what changes between builds of the same kernel taken out: the parameter list, scalar
// and numeric template arguments (dtypes, tile and block sizes, flags), tile shapes spelt into the name
// ("tilesize128x256x64" -> "tilesizeN", "_128x128_32x3_" -> "_N_N_"), lambda signatures, anonymous
// namespaces, a leading "void " and Triton's numeric suffix ("triton_poi_fused_add_3" ->
// "triton_poi_fused_add"). What stays names the kernel: its qualified name and the functors and traits it is
// instantiated with ("at::native::vectorized_elementwise_kernel<at::native::CUDAFunctor_add,std::array>").
std::string normalise_kernel_name(std::string_view name);

struct DiffOptions {
  // Below this weighted overlap of the two kernel-time mixes (0..1) the runs ran different kernels:
  // unrelated, unless their CPU operators say they did the same work.
  double unrelated_below = 0.2;
  // From this share of CPU operator calls of operators both ran (0..1), runs of different kernels did the
  // same work (another vendor or library version). Unrelated PyTorch runs share the common operators
  // (aten::add, aten::copy_, ...): ResNet-50 (kineto/resnet50_num_workers_0) and the model of hta/trace_diff
  // share 31 % of their calls.
  double same_operators_from = 0.5;
  std::size_t headline_items = 6;  // at most this many lines under the step-time line
};

// One side of the diff.
struct DiffSide {
  std::string path;
  std::int64_t ranks = 0;
  std::int64_t world_size = 0;
  std::int64_t steps = 0;       // distinct step numbers over all ranks
  std::int64_t rank_steps = 0;  // (rank, step) pairs that launched GPU work: the per-step denominator
  bool has_steps = false;       // false: each rank's whole profile counts as one step
  TimeNs step_ns = 0;           // mean GPU span per rank-step (report's step "dur")
  TimeNs cpu_step_ns = 0;       // mean CPU duration of the step ranges
  std::int64_t activities = 0;  // GPU activities
  std::int64_t cpu_ops = 0;     // CPU operator ranges
  TimeNs kernel_ns = 0;         // Σ duration of all GPU activities
};

// One class of time: compute, comm, memory, sync, idle, exposed_comm, memory_only, step (GPU span).
struct ClassDiff {
  std::string name;
  TimeNs a_ns = 0, b_ns = 0;            // Σ over ranks (whole profile)
  TimeNs a_step_ns = 0, b_step_ns = 0;  // mean per rank-step
};

// One kernel group, CPU operator or collective in A and in B.
struct DiffRow {
  std::string name;                  // normalised kernel name / CPU op name / "op group size"
  std::string a_example, b_example;  // the raw name with the most time on each side ("" when absent)
  std::int32_t a_variants = 0, b_variants = 0;  // raw names grouped under this row on each side
  ActivityClass cls = ActivityClass::kCompute;  // kernels: the class with the most time
  std::string op;                               // collectives: operation
  std::int64_t group_size = 0, bytes = 0;       // collectives: 0 when unknown
  std::int64_t a_count = 0, b_count = 0;        // whole profile
  TimeNs a_ns = 0, b_ns = 0;                    // whole profile, Σ of durations
  TimeNs a_step_ns = 0, b_step_ns = 0;          // launched inside steps, mean per rank-step
  // CPU ops: self time (without the CPU ops nested in them), whole profile and per rank-step.
  TimeNs a_self_ns = 0, b_self_ns = 0, a_self_step_ns = 0, b_self_step_ns = 0;
  // CPU ops: the GPU time of the activities launched from inside them (summary.hpp OpSummary::gpu_ns), whole
  // profile and per rank-step, and of those launched from them directly (self) per rank-step: how operators
  // compare across GPU vendors or library versions whose kernels differ.
  TimeNs a_gpu_ns = 0, b_gpu_ns = 0, a_gpu_step_ns = 0, b_gpu_step_ns = 0;
  TimeNs a_gpu_self_step_ns = 0, b_gpu_self_step_ns = 0;
  // Operators by input shapes: the shapes recorded on each side ("" when the side has none of this row). They
  // differ when the operator ran with other shapes in B and the rows were paired by name.
  std::string a_input_dims, b_input_dims;
  TimeNs delta_ns() const { return b_ns - a_ns; }
  TimeNs step_delta_ns() const { return b_step_ns - a_step_ns; }
};

// One line of the headline: what changed and by how much per step (B − A).
struct HeadlineItem {
  std::string kind;  // "step", "class", "kernel", "collective", "cpu_op", "unrelated", "different_kernels"
  std::string name;  // class name, row name; "" for the step line
  TimeNs delta_ns = 0;
  int level = 0;     // 0: the step, 1: a class, 2: a row that explains part of its class
  std::string text;  // the line as printed
};

struct Diff {
  DiffSide a, b;
  std::vector<ClassDiff> classes;
  std::vector<DiffRow> kernels;      // by |whole-profile delta|, descending (DESIGN.md's JSON order)
  std::vector<DiffRow> cpu_ops;      // by |whole-profile delta|, descending
  std::vector<DiffRow> collectives;  // by |whole-profile delta|, descending
  // CPU operators by name and recorded input shapes (summary.hpp OpShapeSummary), their GPU time in the
  // time fields (ns, step_ns) and the gpu ones: matched on name and shapes; an operator that ran with other
  // shapes in B (another batch or sequence length) is paired by name, largest GPU time with largest. By
  // |whole-profile delta|, descending.
  std::vector<DiffRow> op_shapes;
  TimeNs step_delta_ns = 0;  // b.step_ns − a.step_ns
  // Without steps on a side each run is a window of however many iterations it caught: A's per-step figures
  // are then A's window scaled to B's iterations, by the ratio of the calls of the kernels both ran (B's over
  // A's, the median weighted by time). 1 when both runs have steps.
  double iteration_ratio = 1.0;
  double similarity = 1.0;  // Σ over kernel groups of min(share of A's time, share of B's time), 0..1
  // Σ over CPU operator names of min(share of A's calls, share of B's calls), 0..1; -1 when a side has no CPU
  // operators. Two runs of one model on two GPU vendors (or two library versions) run the same operators
  // through different kernels: this says they are the same work where `similarity` cannot.
  double operator_similarity = -1.0;
  // similarity < DiffOptions::unrelated_below and the operators do not say the work is the same
  bool unrelated = false;
  // similarity < unrelated_below but operator_similarity ≥ DiffOptions::same_operators_from: the same
  // operators through different kernels.
  bool different_kernels = false;
  std::vector<HeadlineItem> headline;
  std::vector<std::string> notes;  // what could not be compared, and why
};

// A and B with their analyses (measure::analyze with the same options). The profiles must be loaded with CPU
// operators for the CPU-op rows (otherwise they are empty and a note says so).
Diff diff_profiles(const Profile& a, const Analysis& analysis_a, const Profile& b, const Analysis& analysis_b,
                   const DiffOptions& options = {});

// The same from the two profiles' summaries (summary.hpp): what `meshscope diff` uses when both profiles
// carry them, reading kilobytes instead of the events. diff_profiles summarises and calls this.
Diff diff_summaries(const ProfileSummary& a, const ProfileSummary& b, const DiffOptions& options = {});

}  // namespace meshscope::measure
