// Memory per GPU: model state by ZeRO stage and bytes-per-parameter convention, activations by recompute mode
// with tensor/sequence/context parallelism and pipeline in-flight micro-batches (Korthikanti et al. 2022),
// the embeddings and logits, and reserved buffers.
#pragma once

#include "analysis/model/specs.hpp"

namespace meshscope::model {

struct MemoryBreakdown {  // bytes per GPU on the most loaded pipeline stage
  double params = 0;
  double grads = 0;
  double optimizer = 0;
  double activations = 0;
  double other = 0;
  double capacity = 0;
  int stage = 0;  // which pipeline stage (0 = first, pp-1 = last) is the most loaded
  double total() const { return params + grads + optimizer + activations + other; }
  bool fits() const { return total() <= capacity; }
};

// Bytes of the KV cache per token of context on all layers, unsharded (BF16 keys and values).
double kv_cache_bytes_per_token(const ModelSpec& m);

// Bytes of weights, gradients and optimizer state per parameter before ZeRO sharding.
struct StateBytesPerParam {
  double weights = 2;
  double grads = 2;
  double optimizer = 12;
};
StateBytesPerParam state_bytes(StateBytes convention);

// Model state of PARAMS parameters sharded over DP ranks with ZeRO stage ZERO (Rajbhandari et al. 2020 §5,
// Figure 1): stage 1 shards the optimizer state, 2 also the gradients, 3 also the weights.
MemoryBreakdown model_state_bytes(double params, int dp, int zero, StateBytes convention);

// Activation bytes stored for one transformer layer and one micro-batch on one GPU (Korthikanti et al. 2022
// §4, eqs. 1-2 generalised to GQA, gated MLPs and MoE): seq/cp tokens of micro_batch sequences.
double layer_activation_bytes(const ModelSpec& model, const ParallelConfig& config, bool flash_attention);

// Number of layer-activations (layers x micro-batches) the first pipeline stage holds at its peak.
double inflight_layer_activations(const ModelSpec& model, const ParallelConfig& config);

// The most loaded pipeline stage (every stage is evaluated: uneven layouts can load any of them most).
MemoryBreakdown memory_per_gpu(const ModelSpec& model, const HardwareSpec& hw, const ParallelConfig& config,
                               const Efficiencies& eff);

}  // namespace meshscope::model
