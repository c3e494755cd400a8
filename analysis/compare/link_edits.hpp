// What-if edits of the network (`whatif --link`, `--latency`): each collective of the profile re-timed from
// the α-β fit of the profile's own collectives on its link (compare::fit_link: intra-node NVLink, inter-node
// network), then with the link changed. The result is a factor on each communication kernel's transfer, which
// measure::replay applies (ReplayEdits::transfer_factor).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/compare/calibrate.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/model/specs.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

struct LinkEdit {
  LinkClass link = LinkClass::kIntraNode;
  double bandwidth_Bps = 0;  // bus bandwidth (nccl-tests); 0: as fitted
  double latency_s = -1;     // per ring step; below 0: as fitted
  std::string text;          // as given
};

// "DOMAIN=GB/s" (LATENCY false) or "DOMAIN=µs" (true); DOMAIN intra_node or nvlink, inter_node or network.
// False with ERROR set otherwise.
bool parse_link_edit(std::string_view text, bool latency, LinkEdit& out, std::string& error);

struct LinkRetiming {
  // Per Profile::ranks() index, per Rank::activities: the factor on the activity's transfer (1: unchanged).
  std::vector<std::vector<double>> factor;
  std::int64_t retimed = 0;        // communication kernels whose time changed
  std::vector<std::string> notes;  // per link edited: the fit it starts from, or what stands in for it
};

// EDITS applied to every collective of PROFILE with a message size whose group's link they name. A link whose
// collectives cannot be fitted (one message size, fewer than two collectives) is re-timed from each
// collective's own measured bus bandwidth, its latency taken as 0, and the note says so. GPUS_PER_NODE places
// ranks on nodes where their host names do not.
LinkRetiming retime_links(const Profile& profile, const measure::Analysis& analysis,
                          std::span<const LinkEdit> edits, int gpus_per_node);

// `whatif --tp N --dp M`: the job with each tensor-parallel group N GPUs wide and M data-parallel replicas
// instead of LAYOUT's tp and dp (0: as measured), pp and cp as measured, each rank's micro-batch as measured
// (so the global batch grows with M). Both the measured and the new degree must be 2 or more: the replay
// re-times the collectives the profile holds and cannot add or remove a group.
//   * tp: GEMM and attention kernels (by name, measure::kernel_work_category) take tp / N of their time, at
//   the
//     efficiency each reached; with sequence parallelism (tensor-parallel reduce-scatters and all-gathers),
//     element-wise and norm kernels too. The tensor-parallel collectives are re-timed for N members (the same
//     activations).
//   * dp: each collective of the data-parallel group (compare::group_part under LAYOUT) is re-timed for M
//     members tp' × cp apart (Megatron-LM rank order), with a gradient shard tp / N as large.
// Each group is re-timed on the link it then spans (within a node while its members' span fits
// GPUS_PER_NODE): from the α-β fit of the profile's own collectives on that link, else, where the link stays,
// from each collective's own measured bus bandwidth, else from its own link times HW's ratio of the two links
// (the profile's GPU). The measured ranks stay coupled as they were measured. Throws meshscope::Error, naming
// TITLE, when a degree is below 2 or no link is known for a group that changes link.
//   * batch_scale: each rank's sequences per step × this (`--batch F`; `--keep-global-batch` with --dp M:
//     dp / M, the measured global batch over M replicas): every compute kernel outside the optimizer × F
//     (a GEMM keeping its fixed cost per kernel), the tensor-, context-, expert-parallel and pipeline
//     collectives for F × their message; gradients, copies, launches and host work as measured.
// Kernels launched inside the optimizer's ranges take the share of the parameters a rank updates: tp / N, and
// dp / M where the profile's data-parallel collectives show a sharded optimizer (reduce-scatters,
// all-gathers).
struct LayoutEdit {
  int tp = 0, dp = 0;              // 0: as measured
  double batch_scale = 1;          // each rank's sequences per step × this
  bool keep_global_batch = false;  // batch_scale came from --keep-global-batch (how refusals name the edit)
  // tp 1 -> N: the kernels split here, the tensor-parallel collectives added by the caller
  // (compare::plan_tensor_sync) instead of refused.
  bool tensor_parallel_added = false;
  // dp 1 -> M: the caller adds the gradients' collectives (compare::plan_gradient_sync) instead of re-timing
  // the profile's.
  bool data_parallel_added = false;
  // batch_scale is of a micro-batch, and each step runs this many times as many (whatif --pp
  // --micro-batches): the sequences per step are batch_scale × this (how the notes name the edit).
  int micro_batch_split = 1;
};

// The time of a compute kernel measured at T whose work is scaled by SHARE (its part of a split GEMM, a batch
// of another size): FIXED of it, the kernel's cost that does not depend on its size (a GEMM's per-kernel
// overhead, 0 for others), stays, and the rest scales, FIXED + (T - FIXED) × SHARE (FIXED at most T).
double scaled_kernel_time(double t, double share, double fixed);

// SHARDED_KERNELS (null: not known, and element-wise and norm kernels split only with sequence parallelism):
// per Profile::ranks() index, per Rank::activities, 1 for a kernel whose operator's input tensor parallelism
// shards (compare::tensor_sharded_kernels), split with the GEMMs under a tp edit.
LinkRetiming retime_layout(const Profile& profile, const measure::Analysis& analysis,
                           const model::ParallelConfig& layout, const LayoutEdit& edit,
                           const std::optional<model::HardwareSpec>& hw, std::string_view title,
                           const std::vector<std::vector<std::uint8_t>>* sharded_kernels = nullptr);
// retime_layout with only dp, or only tp, changed.
LinkRetiming retime_data_parallel(const Profile& profile, const measure::Analysis& analysis,
                                  const model::ParallelConfig& layout, int new_dp,
                                  const std::optional<model::HardwareSpec>& hw, std::string_view title);
LinkRetiming retime_tensor_parallel(const Profile& profile, const measure::Analysis& analysis,
                                    const model::ParallelConfig& layout, int new_tp,
                                    const std::optional<model::HardwareSpec>& hw, std::string_view title);

}  // namespace meshscope::compare
