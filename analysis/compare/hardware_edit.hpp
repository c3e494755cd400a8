// What-if on other hardware (`whatif --hardware PRESET`): each kernel re-timed from the work its operator's
// shapes give it (measure::ProfileWork's kernel shares: FLOPs and bytes) against the target's ceilings,
// keeping the efficiency it reached on the source: its time × (roofline bound on the target) / (bound on the
// source); an FP32 kernel keeps its math mode (TF32 tensor cores or the FP32 units: tf32_kernel), and from a
// GPU without TF32 takes PyTorch's defaults on one with it (convolutions TF32, matrix products FP32). A
// kernel without work takes the time-weighted factor of the kernels with work of its kind (gemm, attention,
// …, read from its name), else of all compute kernels; device copies and memsets the HBM ratio; communication
// the ratio of the links' nominal bandwidths (the networks' for a collective whose group spans nodes, the
// scale-up links' for the others). The factors go to measure::replay (ReplayEdits::transfer_factor).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/specs.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

struct HardwareRetiming {
  std::vector<std::vector<double>> factor;  // per Profile::ranks() index, per Rank::activities
  std::int64_t from_work = 0;               // kernels re-timed from their own work
  std::int64_t from_kind = 0;               // kernels without work, scaled by their kind's factor
  std::vector<std::string> notes;           // what each kind was scaled by, and what stayed
};

// Whether an FP32 operator's kernel ran on tensor cores in TF32, read from its name: cuBLAS and cuDNN name
// their TF32 kernels ("sm80_xmma_gemm_f32f32_tf32f32_f32_...", "ampere_s1688gemm_..." and
// "..._s16816gemm_...": the TF32 MMA shapes), AMD's libraries their XF32 ones; "ampere_sgemm_...",
// "volta_sgemm_..." and the rest ran on the FP32 units (PyTorch's default for matmul since 1.12:
// torch.backends.cuda.matmul.allow_tf32 = False).
bool tf32_kernel(std::string_view kernel_name);

// PROFILE (analysed as ANALYSIS, its work WORK) run on SOURCE, re-timed for TARGET.
HardwareRetiming retime_hardware(const Profile& profile, const measure::Analysis& analysis,
                                 const measure::ProfileWork& work, const model::HardwareSpec& source,
                                 const model::HardwareSpec& target);

}  // namespace meshscope::compare
