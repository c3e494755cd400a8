// What-if on other hardware (`whatif --hardware PRESET`): each kernel re-timed from the work its operator's
// shapes give it (measure::ProfileWork's kernel shares: FLOPs and bytes) against the target's ceilings,
// keeping the efficiency it reached on the source: its time × (roofline bound on the target) / (bound on the
// source); an FP32 operator's kernel keeps how it did its multiply-adds (fp32_math), and from a GPU without
// TF32 takes PyTorch's defaults on one with it (convolutions TF32, matrix products FP32). A kernel without
// work takes the time-weighted factor of the kernels with work of its kind (gemm, attention, …, read from
// its name), else of all compute kernels; device copies and memsets the HBM ratio; communication
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

// How a kernel of an FP32-typed operator did its multiply-adds, read from its name: on the 16-bit tensor
// cores (autocast ran the product in BF16 or FP16: "bf16", "fp16", "hgemm", "h1688", ...), on the TF32 tensor
// cores (cuBLAS's and cuDNN's "tf32" kernels, "s1688gemm": the TF32 MMA shape of Ampere's cuBLAS, AMD's
// "xf32"), on the FP32 units ("sgemm", "scudnn", "f32f32_f32f32", CUTLASS's "simt": PyTorch's default for
// matmul since 1.12, torch.backends.cuda.matmul.allow_tf32 = False), or unknown.
enum class Fp32Math : std::uint8_t { kUnknown, kSixteenBit, kTf32, kFp32Units };
Fp32Math fp32_math(std::string_view kernel_name);

// PROFILE (analysed as ANALYSIS, its work WORK) run on SOURCE, re-timed for TARGET.
HardwareRetiming retime_hardware(const Profile& profile, const measure::Analysis& analysis,
                                 const measure::ProfileWork& work, const model::HardwareSpec& source,
                                 const model::HardwareSpec& target);

}  // namespace meshscope::compare
