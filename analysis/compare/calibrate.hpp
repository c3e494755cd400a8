// Calibration of the prediction's inputs from a measured profile (DESIGN.md "Prediction": "fit α, β and
// compute efficiency from what the profile shows"; docs/COMPARE.md "Calibration").
//
//   * Links: every collective with a known operation, group size and message size becomes a (bytes,
//     seconds) point. In an instance matched on every peer the time is the transfer (the member's duration
//     after the last peer arrived, median over the members); otherwise it is the whole duration, wait
//     included, and of repeats of one message the shortest is kept. Each point is put in a link class:
//     intra-node when all members of its group sit in one NVLink domain, inter-node otherwise. Per class one
//     α-β line is fitted with model::fit_alpha_beta in the model's own form (t = steps × α + factor × S / B),
//     so the fitted link reproduces model::collective_time.
//   * Compute: the profile has no per-kernel FLOP counts, so the FLOPs come from the model: the hardware
//     FLOPs the prediction executes per GPU and step (recompute counted) over the measured compute time per
//     step is the effective compute efficiency (model::fit_compute on one point per rank and step). The GEMM
//     efficiency applied to the prediction is the one that makes the model's compute + recompute + optimizer
//     (the prediction's "compute" row in compare.hpp) equal the measured compute time.
// Whatever cannot be fitted (or fits with R² < 0.5) keeps its default, and a note says why.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/calibration.hpp"
#include "analysis/model/predict.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

enum class LinkClass : std::uint8_t { kIntraNode, kInterNode };
const char* to_string(LinkClass link);  // "intra_node", "inter_node"

// One measured collective as a calibration point.
struct LinkPoint {
  model::Collective op = model::Collective::kAllReduce;
  int group_size = 0;
  LinkClass link = LinkClass::kIntraNode;
  double bytes = 0;       // nccl-tests size: the larger of the input and output buffers
  double seconds = 0;     // transfer time (matched instances) or the whole duration
  bool transfer = false;  // true: the wait for peers was taken out
};

// The model's collective for a profile's normalised op name ("allreduce", "_allgather_base",
// "reduce_scatter_tensor_coalesced", "all_to_all", "send", ...); false when it has no counterpart.
bool collective_of(std::string_view op, model::Collective& out);

// nccl-tests message size of a collective record (0 when unknown): the measured analysis' definition.
using measure::message_bytes;

// Link class of a group: inter-node when its MEMBERS sit on more than one node (by the ranks' host names
// when the profile has all of them, else rank / GPUS_PER_NODE in launcher order), intra-node otherwise;
// without a member list, by GROUP_SIZE > GPUS_PER_NODE.
LinkClass link_class_of(const Profile& profile, std::span<const int> members, int group_size,
                        int gpus_per_node);

// Member ranks of a collective's process group ("[0, 1, 2]" or "0,1,2"); empty when the profile does not
// say.
std::vector<int> group_members(const Profile& profile, const meshscope::Collective& c);

// The calibration points of PROFILE (ANALYSIS is measure::analyze of it).
std::vector<LinkPoint> collect_link_points(const Profile& profile, const measure::Analysis& analysis,
                                           const model::HardwareSpec& hw);

struct LinkFit {
  LinkClass link = LinkClass::kIntraNode;
  bool fitted = false;
  bool applied = false;     // calibrate(): fitted with R² >= 0.5 and used by the calibrated prediction
  model::AlphaBetaFit fit;  // alpha_step_s and busbw_Bps are what the prediction uses
  int points = 0;           // points of this class (with a size and a duration)
  int sizes = 0;            // distinct message sizes among them
  int transfer_points = 0;  // of which with the wait taken out
  double r2 = 0;            // coefficient of determination of the fitted times against the measured
  double mean_error = 0;    // mean |predicted / measured − 1|
  std::string reason;       // why not fitted (empty when fitted)
};

// The α-β fit of one link class over POINTS (those of other classes are skipped). Never throws: too few
// points, one message size, or times that do not grow with size leave fitted false and say so in reason.
LinkFit fit_link(std::span<const LinkPoint> points, LinkClass link);

// Per (operation, group size) fit, for display beside the pooled fit of the class.
struct GroupFit {
  model::Collective op = model::Collective::kAllReduce;
  int group_size = 0;
  LinkClass link = LinkClass::kIntraNode;
  LinkFit fit;
};

struct ComputeCalibration {
  bool fitted = false;
  double flops_per_gpu_step = 0;    // hardware FLOPs the prediction runs per GPU per step
  double measured_compute_s = 0;    // mean over ranks and steps of the measured compute time
  double effective_efficiency = 0;  // flops_per_gpu_step / measured_compute_s / peak
  double gemm_efficiency = 0;       // GEMM efficiency that makes the predicted compute row = measured
  double default_gemm_efficiency = 0;
  int samples = 0;  // rank-steps used
  std::string reason;
};

// GEMM efficiency measured on the profile's own kernels: the GEMM operators whose shapes
// give their FLOPs (analysis/measure/op_work.hpp), grouped by FLOPs per call in decades ("1e9-1e10"), each
// class's efficiency = its FLOPs / its kernels' time / the peak of the precision (model::fit_compute).
struct GemmClass {
  std::string name;  // "<1e8", "1e8-1e9", ..., ">=1e11" FLOPs per call
  double min_flops = 0, max_flops = 0;
  std::int64_t ops = 0;
  double flops = 0, seconds = 0;
  double efficiency = 0;  // of the peak
};
struct KernelCompute {
  bool fitted = false;
  std::vector<GemmClass> classes;  // with at least one operator
  double gemm_flops = 0, gemm_seconds = 0;
  double gemm_efficiency = 0;     // all GEMMs: FLOPs / time / peak
  double applied_efficiency = 0;  // gemm_efficiency / the hardware's sustained fraction (the model's factor)
  double attention_flops = 0, attention_seconds = 0;
  double attention_flops_per_s = 0;  // achieved by the attention kernels (0: none measured)
  std::string reason;                // why not fitted
};

// Fits KernelCompute from WORK (job/profile_work.hpp) against PEAK_FLOPS (BF16) and PEAK_FP8 (0: none).
KernelCompute fit_kernel_compute(const measure::ProfileWork& work, double peak_flops, double peak_fp8,
                                 double sustained_fraction);

struct ProfileCalibration {
  std::vector<LinkPoint> points;
  LinkFit intra, inter;  // applied when fitted with R² >= 0.5 (see calibration.intra_node / inter_node)
  std::vector<GroupFit> groups;
  ComputeCalibration compute;
  // From the kernels' own FLOPs when the profile has shapes; when fitted, its GEMM efficiency (and the
  // attention rate) is what the calibrated prediction applies instead of compute.gemm_efficiency.
  KernelCompute kernels;
  model::Calibration calibration;    // what apply_calibration receives
  model::Efficiencies efficiencies;  // the defaults with the calibration applied
  std::vector<std::string> notes;    // what was fitted, what fell back to defaults and why
};

// Measured compute time per rank and step (seconds): the steps of every rank with GPU work, or the whole
// rank when it has no step markers.
std::vector<double> compute_seconds_per_step(const measure::Analysis& analysis);

// Fits links and compute from PROFILE for predicting MODEL on HW with CONFIG (resolved) starting from EFF.
// WORK: PROFILE's work per operator (job/profile_work.hpp).
ProfileCalibration calibrate(const Profile& profile, const measure::Analysis& analysis,
                             const model::ModelSpec& model, const model::HardwareSpec& hw,
                             const model::ParallelConfig& config, const model::Efficiencies& eff,
                             const measure::ProfileWork& work);

}  // namespace meshscope::compare
