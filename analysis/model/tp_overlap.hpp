// Tensor-parallel collectives overlapped with the GEMMs beside them, as Transformer Engine's userbuffers run
// them under Megatron-Core's --tp-comm-overlap (sequence parallelism: all-gathers and reduce-scatters). Each
// collective is paired with one GEMM, split into chunks that alternate with the collective's chunks, so what
// the overlap leaves exposed follows from the chunk times, the per-kernel overhead every chunk pays again and
// the SMs the communication kernels take from the GEMM — not from a flat share of the GEMM time.
//
// The pairing and the settings are TE's defaults (transformer_engine/pytorch/module/base.py, initialize_ub,
// get_default_config, TE 1.x-2.x):
//   ring_exchange  qkv_fprop, fc1_fprop (all-gather of the input), proj_dgrad, fc2_dgrad (all-gather of the
//                  output gradient): tp chunks, peer-to-peer copies on the copy engines (one SM, no margin);
//   pipeline       proj_fprop, fc2_fprop (reduce-scatter of the output): 4 chunks, the communication kernel
//                  on 16 SMs with the GEMM kept off them (set_sm_margin);
//   bulk           qkv_dgrad, fc1_dgrad (all-gather of the saved input shard for the weight gradient) beside
//                  the input-gradient GEMM, qkv_wgrad, fc1_wgrad (reduce-scatter of the input gradient)
//                  beside the weight-gradient GEMM: the whole collective on 16 SMs next to the whole GEMM.
#pragma once

#include "analysis/model/compute.hpp"

namespace meshscope::model {

struct UserbufferSettings {
  int tp = 1;                  // chunks of a ring exchange
  int pipeline_chunks = 4;     // num_splits of the pipelined reduce-scatter
  int comm_sms = 16;           // num_sm of the pipelined and bulk collectives
  int sm_count = 0;            // the GPU's SMs (0: unknown, the GEMM keeps them all)
  double gemm_overhead_s = 0;  // paid by every chunk
  // MXFP8: the output gradient is all-gathered a second time, column-wise, beside the row-parallel layers'
  // weight-gradient GEMMs (TE linear.py / layernorm_mlp.py: bulk_overlap_ag_with_external_gemm).
  bool second_gradient_gather = false;
  // How much longer a GEMM runs without the communication SMs: sm_count / (sm_count - comm_sms).
  double sm_slowdown() const;
};

// Each returns the time of GEMM_S (one kernel, with its overhead) and its collective COMM_S together.
// Ring exchange: tp chunks of the GEMM, each beside one of the tp - 1 peer transfers,
// (tp - 1) max(chunk, COMM_S / (tp - 1)) + chunk, chunk = (GEMM_S - overhead) / tp + overhead.
double ring_exchange_time(double gemm_s, double comm_s, const UserbufferSettings& s);
// Pipelined reduce-scatter: chunk i's part of the collective beside chunk i + 1 of the GEMM, the GEMM without
// the communication SMs: chunk + (n - 1) max(chunk, COMM_S / n) + COMM_S / n.
double pipelined_reduce_scatter_time(double gemm_s, double comm_s, const UserbufferSettings& s);
// Bulk: the whole collective beside the whole GEMM (without the communication SMs): max(GEMM', COMM_S).
double bulk_time(double gemm_s, double comm_s, const UserbufferSettings& s);

// What the overlapped collectives of one layer add to its GEMMs (seconds, one micro-batch): the forward pass
// (QKV and MLP-up all-gathers, attention-output and MLP-down reduce-scatters) and the backward pass (the
// output gradients' all-gathers, the saved inputs' all-gathers and the input gradients' reduce-scatters;
// under MXFP8 the output gradients' second gather beside the weight-gradient GEMMs). ALL_GATHER_S and
// REDUCE_SCATTER_S are one collective of the layer's activations over the TP group. A MoE layer's MLP has no
// projection here (LayerTimes::mlp_up is zero) and adds nothing for it.
struct OverlappedLayer {
  double forward = 0, backward = 0;
};
OverlappedLayer overlapped_tp_layer(const LayerTimes& layer, double all_gather_s, double reduce_scatter_s,
                                    const UserbufferSettings& s);

}  // namespace meshscope::model
