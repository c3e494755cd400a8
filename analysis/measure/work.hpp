// The measured work of a profile: the op_work and kernel_work tables the Kineto
// importer writes (docs/PROFILE.md "Work per operator"), read back, and the measured roofline built from
// them: per kernel its share of the FLOPs and bytes of the operator that launched it, per operator name and
// category the totals and their kernel time. `report --json` writes the roofline; the GUI's Roofline plots
// its points.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/measure/op_work.hpp"
#include "profiler/profile.hpp"
#include "profiler/work_records.hpp"

namespace meshscope::measure {

// The element type an operator's work ran in: its first floating-point input as recorded (Kineto's "Input
// type": float, c10::Half, c10::BFloat16, c10::Float8_e4m3fn, ...).
enum class WorkPrecision : std::uint8_t { kOther, kFP32, kFP16, kBF16, kFP8 };
const char* to_string(WorkPrecision precision);  // "other", "FP32", "FP16", "BF16", "FP8"
WorkPrecision precision_of_types(std::string_view input_types);

// One operator of op_work whose work is counted (status "counted").
struct CountedOp {
  std::int64_t id = 0;         // op_work.id
  std::size_t rank_index = 0;  // into Profile::ranks()
  std::int64_t external_id = kNull;
  std::string name;
  WorkCategory category = WorkCategory::kOther;
  double flops = 0, bytes = 0;
  std::string input_dims, input_types;  // as recorded ("[[8944, 1024], [1024, 2816]]")
  std::int64_t pid = 0, tid = 0;        // the thread it ran on
  std::int64_t kernels = 0;
  TimeNs kernel_ns = 0;
  bool fp8 = false;  // an operand is an 8-bit float: its ceiling is the FP8 peak
  WorkPrecision precision = WorkPrecision::kOther;
};

// An operator recorded with shapes whose work is undetermined (its input types not recorded): what its
// shapes show of the model is still read (WorkLoadOptions::uncounted_shapes).
struct ShapedOp {
  std::size_t rank_index = 0;
  std::string name;
  std::string input_dims;
  std::int64_t pid = 0, tid = 0;  // the thread it ran on
};

// One kernel's share of a counted operator.
struct KernelShare {
  std::size_t rank_index = 0;
  std::uint32_t activity = 0;  // index into Rank::activities
  std::uint32_t op = 0;        // index into ProfileWork::ops
  double flops = 0, bytes = 0;
};

struct ProfileWork {
  bool has_tables = false;       // the profile has op_work (profiles written before it do not)
  bool shapes_recorded = false;  // some operator was recorded with shapes (else: record_shapes=True)
  std::vector<CountedOp> ops;
  std::vector<KernelShare> kernels;
  std::vector<ShapedOp> uncounted;                            // with WorkLoadOptions::uncounted_shapes
  std::int64_t nested = 0, unparsable = 0, undetermined = 0;  // op_work rows of the other statuses
};

struct WorkLoadOptions {
  // Each kernel's share (ProfileWork::kernels): needs the profile's activities. Off for a profile loaded
  // without its events (LoadOptions::events off).
  bool kernel_shares = true;
  // Only the counted operators of the lowest rank that has any (what the workload inference reads).
  bool lowest_rank_only = false;
  // Also the operators whose work is undetermined, with their shapes (ProfileWork::uncounted).
  bool uncounted_shapes = false;
};

// What to read of PROFILE's work tables for OPTIONS: in a profile of which only some ranks' events are
// loaded, those ranks' rows. The Job reads them (profiler/work_store.hpp, job/profile_work.hpp).
WorkReadOptions work_read_options(const Profile& profile, const WorkLoadOptions& options);

// PROFILE's work per operator from STORED, its work tables read with work_read_options(PROFILE, ...). Throws
// meshscope::Error naming the file when a row names a rank, operator or activity the profile does not have.
ProfileWork work_of(const Profile& profile, const StoredWork& stored);

// Ceilings to check the achieved rates against (0: unknown).
struct WorkCeilings {
  std::string hardware;       // preset name, empty when the GPU is not known
  double peak_flops = 0;      // dense BF16/FP16 tensor peak per GPU, FLOP/s (the ceiling of every other op)
  double peak_fp8_flops = 0;  // dense FP8 peak, FLOP/s (0: none; FP8 ops then use peak_flops)
  // FP32 operands: the TF32 tensor peak where the GPU has one (PyTorch may run FP32 GEMMs and convolutions in
  // TF32), else the FP32 peak; 0: unknown, FP32 ops then use peak_flops.
  double peak_fp32_flops = 0;
  bool fp32_is_tf32 = false;  // peak_fp32_flops is the TF32 tensor peak
  bool bf16 = true;           // the GPU has BF16 (a V100's 16-bit peak is FP16's)
};

// The ceiling an operator of PRECISION is checked against.
double peak_for(WorkPrecision precision, const WorkCeilings& ceilings);
// What that ceiling is called ("FP8", "TF32", "FP32", "BF16", "FP16").
const char* peak_name(WorkPrecision precision, const WorkCeilings& ceilings);

struct RooflineOpRow {
  std::string op;
  WorkCategory category = WorkCategory::kOther;
  WorkPrecision precision = WorkPrecision::kOther;  // of its operands: the ceiling it is checked against
  std::int64_t count = 0;                           // operator instances
  double flops = 0, bytes = 0;
  double kernel_s = 0;
};

struct MeasuredRoofline {
  bool shapes_recorded = false;
  std::int64_t kernels = 0;  // kernels with work, those left out not counted
  double flops = 0, bytes = 0;
  double kernel_s = 0;
  std::vector<RooflineOpRow> ops;     // by kernel time, longest first
  std::vector<std::uint32_t> points;  // indices into ProfileWork::ops of the operators plotted
  std::int64_t left_out = 0;          // operators above the ceiling (or with work but no kernel time)
  std::vector<std::string> notes;
};

// The measured roofline of WORK against CEILINGS: operators whose achieved FLOP/s exceed the peak of their
// precision are left out and counted in a note, never plotted above the ceiling.
MeasuredRoofline measured_roofline(const ProfileWork& work, const WorkCeilings& ceilings);

// "no shapes recorded (record with record_shapes=True)".
extern const char* const kNoShapesNote;

}  // namespace meshscope::measure
