// Compute time of one transformer layer (and of the embedding and output layer) for one micro-batch on one
// GPU, from the shapes of its GEMMs: each GEMM on the roofline of its own shape (Williams et al. 2009) with a
// fixed per-kernel cost, the attention core at the measured attention rate, element-wise kernels at
// achievable HBM bandwidth, and the quantisation casts of FP8/FP4 recipes.
#pragma once

#include "analysis/model/precision.hpp"
#include "analysis/model/specs.hpp"

namespace meshscope::model {

// C[m x n] = A[m x k] B[k x n].
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * m * n * k; }
};

// Roofline of one GEMM: max(2mnk / (peak x efficiency), bytes / HBM) + per-kernel overhead, where the bytes
// are both operands at OPERAND_BYTES per element and a BF16 result (Williams, Waterman & Patterson 2009; the
// overhead is fitted to the cuBLASLt square-GEMM sweep of the Azure AI-benchmarking-guide). Small and skinny
// GEMMs reach a small fraction of peak through both terms.
double gemm_time(const GemmShape& gemm, double peak_flops, double efficiency, double operand_bytes,
                 double overhead_s, double hbm_Bps);

// One linear layer's GEMMs, seconds each with its per-kernel overhead: forward, input gradient, weight
// gradient.
struct ProjectionTimes {
  double forward = 0, dgrad = 0, wgrad = 0;
};

struct LayerTimes {                             // seconds, one layer, one micro-batch, one GPU
  double gemm_fwd = 0, gemm_bwd = 0;            // linear layers (QKV, output projection, MLP or experts)
  double attention_fwd = 0, attention_bwd = 0;  // QK^T, softmax, AV
  double elementwise_fwd = 0, elementwise_bwd = 0;
  double quantize_fwd = 0, quantize_bwd = 0;  // FP8/FP4 casts of the GEMM inputs
  double gemm_flops_fwd = 0;                  // for --explain
  // The tensor-parallel projections whose collectives Transformer Engine can overlap (tp_overlap.hpp): QKV
  // and the attention output, and the dense MLP's up (with its gate) and down. Zero in a MoE layer's MLP: its
  // tokens reach the experts through the expert-parallel dispatcher, not a tensor-parallel collective.
  ProjectionTimes qkv, out, mlp_up, mlp_down;
  double forward() const { return gemm_fwd + attention_fwd + elementwise_fwd + quantize_fwd; }
  double backward() const { return gemm_bwd + attention_bwd + elementwise_bwd + quantize_bwd; }
};

// One layer of MODEL (MoE when MOE_LAYER) under CONFIG; BF16_LAYER forces BF16 GEMMs (layers an NVFP4 recipe
// keeps in high precision).
LayerTimes layer_times(const ModelSpec& model, const ParallelConfig& config, const Efficiencies& eff,
                       const PrecisionRecipe& recipe, double hbm_Bps, bool moe_layer, bool bf16_layer);

// Forward and backward rates of a flash-attention kernel over FlashAttention-2's: 1 for FlashAttention-2 and
// the cuDNN kernel, 1/2 both ways for the 2022 CUDA FlashAttention, 1/1.4 forward and 1/2 backward for
// FlashAttention in Triton (Dao 2023, FlashAttention-2 §4.1).
struct FlashKernelRates {
  double forward = 1.0, backward = 1.0;
};
FlashKernelRates flash_kernel_rates(const Efficiencies& eff);

// Forward time of the attention core of one layer for one micro-batch on one GPU: FlashAttention-2, the
// cuDNN fused kernel (Efficiencies::cudnn_attention) or unfused attention, by head dim, sequence length and
// mask (see compute.cpp for the published rates each factor comes from).
double attention_forward_time(const ModelSpec& model, const ParallelConfig& config, const Efficiencies& eff);

// The output projection and the cross-entropy on the last stage (BF16 GEMM, vocabulary-parallel over TP),
// forward; the backward pass costs twice as much (Narayanan et al. 2021 eq. 3).
double logits_forward_time(const ModelSpec& model, const ParallelConfig& config, const Efficiencies& eff,
                           const PrecisionRecipe& recipe, double hbm_Bps);

}  // namespace meshscope::model
