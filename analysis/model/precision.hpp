// Number formats of training: the peak and achievable fraction that the linear-layer GEMMs run at, the bytes
// their operands occupy in HBM, and the quantisation work each recipe adds. What stays in BF16 in every
// recipe (Transformer Engine defaults, which Megatron-Core uses): the attention core (FlashAttention in
// BF16), the embedding and the output (logits) layer, norms, the MoE router, the optimizer with FP32 master
// weights.
#pragma once

#include "analysis/model/specs.hpp"

namespace meshscope::model {

struct PrecisionRecipe {
  Precision precision = Precision::kBF16;
  double peak_flops = 0;       // dense tensor-core peak of the linear-layer GEMMs, per GPU
  double efficiency = 0;       // achievable fraction of that peak for large GEMMs
  double operand_bytes = 2;    // HBM bytes per GEMM input element (with block scales)
  double quantize_bytes = 0;   // HBM bytes moved to quantise one BF16 input element of a GEMM
  double bf16_peak_flops = 0;  // for the GEMMs that stay in BF16 (logits, BF16-kept layers)
  double bf16_efficiency = 0;
};

// The recipe of PRECISION on HW with EFF's achievable fractions. Throws InvalidInput when HW lacks the
// format (FP8 before Hopper, FP4 before Blackwell).
PrecisionRecipe precision_recipe(Precision precision, const HardwareSpec& hw, const Efficiencies& eff);

// HBM bytes per element of a GEMM operand quantized to PRECISION (with its block scales); 2 for BF16.
double quantized_operand_bytes(Precision precision);

// Empty when HW runs PRECISION, else the one-line reason.
std::string check_precision(Precision precision, const HardwareSpec& hw);

}  // namespace meshscope::model
