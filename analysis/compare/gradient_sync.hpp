// `whatif --dp N` from a profile of one data-parallel replica: the work that N replicas would add, put into
// the replay (measure::AddedActivity) as PyTorch's DistributedDataParallel runs it (Li et al., "PyTorch
// Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020, §3.2-3.3; the reducer,
// torch/csrc/distributed/c10d/reducer.cpp): the gradients gathered in buckets in the reverse order of the
// model's parameters (about the order the backward pass produces them), 25 MiB each after a first of 1 MiB
// (kDefaultBucketBytesCap, kDefaultFirstBucketBytes); each gradient, once ready, scaled by 1/N into its
// bucket on the backward's stream (mark_variable_ready_dense), each bucket all-reduced on a stream of its
// own once its last gradient is in, overlapping the rest of the backward pass; at the end of the backward
// the backward's stream waits for each bucket's all-reduce and copies it back to the gradients
// (finalize_backward, copy_bucket_to_grad; gradient_as_bucket_view off, the default), and the step's next
// work follows. docs/WHATIF.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/specs.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

// The links a group of members spans (SHAPE): the α-β fit of the profile's own collectives on each link it
// uses where there is one, else HW's efficiencies; NOTE says which.
struct GroupLinks {
  model::Link intra, inter;
  std::string note;
};
GroupLinks group_links(const Profile& profile, const measure::Analysis& analysis,
                       const model::HardwareSpec& hw, const model::GroupShape& shape);

// One step's compute kernels of a rank, in start order: those launched from inside a backward range, and
// the others (the forward passes) but the optimizer's; and the passes they make, each a run of one kind in
// start order (several of each with gradient accumulation: a micro-batch's forward, then its backward).
struct StepKernels {
  std::vector<std::uint32_t> forward, backward;
  std::vector<std::vector<std::uint32_t>> forward_passes, backward_passes;
};

// The steps of rank RI of PROFILE (one when the rank has no steps), in the order of the analysis's steps;
// LAUNCHED_IN: per activity, 1 when launched from a backward range.
std::vector<StepKernels> step_kernels(const Profile& profile, const measure::Analysis& analysis,
                                      std::size_t ri, std::vector<std::uint8_t>& launched_in);

// The element size of the parameters (and so of their gradients, which DDP all-reduces): from the weights
// the recorded linear and convolution operators took. One FP32 weight means FP32 parameters (autocast casts
// them to 16 bits per use, so the same layer is also recorded with a 16-bit weight); 16-bit weights alone,
// a model held in 16 bits. REASON says which, in one phrase.
struct ParameterPrecision {
  double bytes = 4;
  std::string reason;
};
ParameterPrecision parameter_precision(const measure::ProfileWork& work);

struct GradientSyncRequest {
  int dp = 2;          // data-parallel replicas after the edit
  int tp = 1, cp = 1;  // after the edit: each rank holds 1/tp of the parameters; members tp × cp apart
  double bytes_per_gradient = 4;  // the parameters' element size (FP32 modules, also under autocast)
  double first_bucket_bytes = 1 << 20;
  double bucket_bytes = 25 << 20;
  bool gradient_as_bucket_view = false;  // DDP's option: on, the gradients are the buckets (no copy back)
};

// One bucket of gradients: its size and when it is ready, as the share of the backward pass's work done.
struct GradientBucket {
  double bytes = 0;
  double ready_share = 0;  // 0..1 of the backward's GEMM and attention work: when its last gradient is ready
  // Its gradients in the order they become ready: each one's bytes and share (the reducer copies each into
  // the bucket as it comes).
  std::vector<std::pair<double, double>> gradients;
};

// The buckets of MODEL's gradients under REQUEST, in the order they are all-reduced: the output layer's
// (untied) first, then the layers from the last (each its MLP's then its attention's weights), the
// embeddings last (their backward does no GEMM work, so they are ready with the backward's end). SEQ: the
// sequence the attention's work is counted at.
std::vector<GradientBucket> gradient_buckets(const model::ModelSpec& model, int seq,
                                             const GradientSyncRequest& request);

struct GradientSync {
  std::vector<std::vector<measure::AddedActivity>> added;  // per Profile::ranks() index
  std::vector<std::string> notes;
  double bucket_seconds = 0;  // the all-reduces of one step, added up
  int buckets = 0;
};

// The work of BUCKETS planned on every rank of PROFILE, step by step: a bucket is ready after the backward
// compute kernel (launched from inside a backward range: measure::backward_range_name) by which the
// backward's kernels have run its share of their time; its scaling copy follows that kernel on its stream,
// its all-reduce the copy; the copies back follow the backward's last kernel, and the first work on that
// stream launched after the backward waits for them. An all-reduce is timed for REQUEST.dp members
// REQUEST.tp × cp apart (model::hierarchical_time) on the links of HW: the α-β fit of the profile's own
// collectives on the link, else HW's efficiencies; a copy reads and writes its bytes at HW's achievable
// HBM bandwidth. Throws meshscope::Error naming TITLE when no rank recorded a backward pass.
GradientSync plan_gradient_sync(const Profile& profile, const measure::Analysis& analysis,
                                const std::vector<GradientBucket>& buckets, const model::HardwareSpec& hw,
                                const GradientSyncRequest& request, std::string_view title);

// Per Profile::ranks() index, per Rank::activities: 1 for a kernel of an operator of WORK whose inputs
// include a tensor that tensor parallelism shards, so that its work splits with the GEMMs (Shoeybi et al.
// 2019 §3: the attention's heads and the MLP's width are split): a 4-D tensor with MODEL's heads (or kv
// heads) second (attention scores and probabilities, per-head queries, keys and values), or a last dimension
// of the MLP's width (its activation), the fused query-key-value width or the vocabulary (the logits). Each
// size is taken over TP, the profile's own degree (its shapes are of its shards).
std::vector<std::vector<std::uint8_t>> tensor_sharded_kernels(const Profile& profile,
                                                              const measure::ProfileWork& work,
                                                              const model::ModelSpec& model, int tp);

// `whatif --tp N` from a profile of tp 1: the all-reduces of Megatron-LM's tensor parallelism (Shoeybi et al.
// 2019, "Megatron-LM", §3 and Fig. 3: the g operator after the attention's output projection and after the
// MLP's second GEMM in the forward pass, the f operator's after the attention's and the MLP's first GEMMs'
// input gradients in the backward pass), each of the layer's activations, tokens × hidden; the
// vocabulary-parallel embedding's in the forward and the output layer's input gradient's in the backward
// (Megatron-LM's VocabParallelEmbedding, ColumnParallelLinear). Synchronous: each queued on the compute
// stream right after the kernel it follows, the work behind that kernel waiting for it. The kernels' split
// is compare::retime_layout's (LayoutEdit::tensor_parallel_added).
struct TensorSyncRequest {
  int tp = 2;
  // Each all-reduce's message: the tokens of a micro-batch × hidden × the element size the GEMMs ran in.
  double message_bytes = 0;
};

// Where the all-reduces fall, as the share of a pass's GEMM and attention work done (forward, and backward in
// its own order: the output layer first), for MODEL at SEQ.
struct TensorSyncPoints {
  std::vector<double> forward, backward;
};
TensorSyncPoints tensor_sync_points(const model::ModelSpec& model, int seq);

// The all-reduces of REQUEST planned on every rank of PROFILE, step by step: each after the compute kernel
// of its pass (forward: launched outside backward and optimizer ranges; backward: inside a backward range)
// by which the pass's kernels have run its share of their time; timed for REQUEST.tp members on the links of
// HW as plan_gradient_sync times its own. One forward and one backward pass per step is assumed (the notes
// say so). A profile with no forward kernel is refused (meshscope::Error naming TITLE).
GradientSync plan_tensor_sync(const Profile& profile, const measure::Analysis& analysis,
                              const TensorSyncPoints& points, const model::HardwareSpec& hw,
                              const TensorSyncRequest& request, std::string_view title);

}  // namespace meshscope::compare
