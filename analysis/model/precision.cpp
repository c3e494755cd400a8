#include "analysis/model/precision.hpp"

#include <fmt/format.h>

namespace meshscope::model {
namespace {

// One BF16 element read once (2 bytes).
constexpr double kBf16Bytes = 2.0;
// FP8 with per-tensor current scaling (Transformer Engine Float8CurrentScaling): an amax pass over the BF16
// input (2 B), then the cast reads it again (2 B) and writes the FP8 copy and its transpose for the backward
// GEMMs (1 + 1 B; Hopper FP8 GEMMs take only the TN layout, TE docs "FP8 primer").
constexpr double kFp8TensorQuantizeBytes = kBf16Bytes + kBf16Bytes + 1.0 + 1.0;
// Block scaling (MXFP8: 32-element blocks with an E8M0 scale, OCP Microscaling spec v1.0 §5): the scale comes
// from the block being cast, so one read (2 B) writes the row-wise and column-wise copies (1 + 1 B) and their
// scales (2 x 1/32 B).
constexpr double kFp8BlockQuantizeBytes = kBf16Bytes + 2.0 * (1.0 + 1.0 / 32.0);
// NVFP4: 4-bit values in 16-element blocks with an E4M3 scale and an FP32 tensor scale (NVIDIA 2025,
// arXiv:2509.25149 §2): the tensor scale needs the tensor's amax first (one read, 2 B), then the cast reads
// again (2 B) and writes row-wise and column-wise copies of 0.5 + 1/16 B each (the random Hadamard transform
// of the weight-gradient inputs is fused into that cast).
constexpr double kNvfp4OperandBytes = 0.5 + 1.0 / 16.0;
constexpr double kNvfp4QuantizeBytes = kBf16Bytes + kBf16Bytes + 2.0 * kNvfp4OperandBytes;

}  // namespace

double quantized_operand_bytes(Precision p) {
  switch (p) {
    case Precision::kBF16:
      return kBf16Bytes;
    case Precision::kFP8:
      return 1.0;
    case Precision::kFP8Block:
      return 1.0 + 1.0 / 32.0;
    case Precision::kNVFP4:
      return kNvfp4OperandBytes;
  }
  return kBf16Bytes;
}

std::string check_precision(Precision p, const HardwareSpec& hw) {
  if ((p == Precision::kFP8 || p == Precision::kFP8Block) && hw.peak_tflops_fp8 <= 0)
    return fmt::format("{} has no FP8 tensor cores: use --precision bf16", hw.name);
  if (p == Precision::kNVFP4 && hw.peak_tflops_fp4 <= 0)
    return fmt::format("{} has no FP4 tensor cores: use --precision bf16, fp8 or fp8-block", hw.name);
  return {};
}

PrecisionRecipe precision_recipe(Precision p, const HardwareSpec& hw, const Efficiencies& eff) {
  const std::string problem = check_precision(p, hw);
  if (!problem.empty()) throw InvalidInput(problem);
  PrecisionRecipe r;
  r.precision = p;
  r.bf16_peak_flops = hw.peak_tflops_bf16 * 1e12;
  r.bf16_efficiency = eff.gemm_bf16;
  switch (p) {
    case Precision::kBF16:
      r.peak_flops = r.bf16_peak_flops;
      r.efficiency = eff.gemm_bf16;
      r.operand_bytes = kBf16Bytes;
      break;
    case Precision::kFP8:
      r.peak_flops = hw.peak_tflops_fp8 * 1e12;
      r.efficiency = eff.gemm_fp8;
      r.operand_bytes = quantized_operand_bytes(p);
      r.quantize_bytes = kFp8TensorQuantizeBytes;
      break;
    case Precision::kFP8Block:
      r.peak_flops = hw.peak_tflops_fp8 * 1e12;
      r.efficiency = eff.gemm_fp8;
      r.operand_bytes = quantized_operand_bytes(p);
      r.quantize_bytes = kFp8BlockQuantizeBytes;
      break;
    case Precision::kNVFP4:
      r.peak_flops = hw.peak_tflops_fp4 * 1e12;
      r.efficiency = eff.gemm_fp4;
      r.operand_bytes = quantized_operand_bytes(p);
      r.quantize_bytes = kNvfp4QuantizeBytes;
      break;
  }
  return r;
}

}  // namespace meshscope::model
