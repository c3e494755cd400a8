// predict(): memory, step time (as a sum of named parts), FLOPs, MFU and throughput of one layout.
//
//   Prediction p = predict(model, hw, resolve(config, model, hw), defaults_for(hw));
//
// step_time_s == time.total() always holds: the parts are what the slowest pipeline stage spends per step.
#pragma once

#include <string>
#include <vector>

#include "analysis/model/collectives.hpp"
#include "analysis/model/memory.hpp"
#include "analysis/model/specs.hpp"

namespace meshscope::model {

// The parts of one step (seconds) named as in DESIGN.md's predict --json `time_s`.
struct TimeBreakdown {
  double compute = 0;         // forward + backward of all micro-batches on the slowest stage
  double recompute = 0;       // activation recomputation
  double tp_exposed = 0;      // tensor-parallel collectives not hidden behind compute
  double cp_exposed = 0;      // context-parallel ring-attention exchange not hidden
  double ep_exposed = 0;      // expert-parallel all-to-all not hidden
  double pp_p2p_exposed = 0;  // pipeline sends/receives on the critical path
  double pp_bubble = 0;       // pipeline fill and drain
  double dp_exposed = 0;      // data-parallel gradient/parameter collectives not hidden
  double optimizer = 0;       // optimizer step
  double total() const {
    return compute + recompute + tp_exposed + cp_exposed + ep_exposed + pp_p2p_exposed + pp_bubble +
           dp_exposed + optimizer;
  }
};

// What one micro-batch costs on the slowest pipeline stage (seconds); the timeline is built from these.
struct MicroBatchTimes {
  double forward = 0;
  double backward = 0;
  double recompute = 0;
  double tp_exposed = 0;  // forward + backward
  double cp_exposed = 0;
  double ep_exposed = 0;
  double p2p = 0;  // one send of activations (or gradients) to the neighbouring stage
  double total() const { return forward + backward + recompute + tp_exposed + cp_exposed + ep_exposed; }
};

// Raw (un-overlapped) communication per step, for display next to the exposed part.
struct CommTotals {
  double tp = 0;
  double cp = 0;
  double ep = 0;
  double pp = 0;
  double dp = 0;
};

// One named part of the step time for `predict --explain`: PART is the time_s key it belongs to (the terms of
// a part sum to it), FORMULA how it is computed and INPUTS the numbers that went in.
struct ExplainTerm {
  std::string part;
  std::string name;
  double seconds = 0;
  std::string formula;
  std::string inputs;
};

struct Prediction {
  ParallelConfig config;
  MemoryBreakdown memory;
  TimeBreakdown time;
  MicroBatchTimes micro_batch;
  CommTotals comm;
  double step_time_s = 0;
  double model_flops = 0;     // per step, all GPUs
  double hardware_flops = 0;  // per step, all GPUs, with recompute
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;
  double tokens_per_s = 0;
  double peak_flops = 0;  // per GPU at the chosen precision
  double bubble_fraction = 0;
  bool fits = false;
  std::vector<int> stage_layers;        // transformer layers per pipeline stage
  std::vector<MicroBatchTimes> stages;  // per-micro-batch costs of every stage (micro_batch = the pacing one)
  int pacing_stage = 0;                 // the stage whose micro-batch time sets the pace
  std::vector<ExplainTerm> terms;       // filled when asked for (predict(..., explain = true))
};

// CONFIG must be resolved (see resolve()); throws InvalidInput if its layout is impossible. EXPLAIN fills
// Prediction::terms.
Prediction predict(const ModelSpec& model, const HardwareSpec& hw, const ParallelConfig& config,
                   const Efficiencies& eff, bool explain = false);

// The same without validation, for callers that enumerate valid layouts themselves (search); MEMORY, when
// given, is memory_per_gpu of the same layout, already computed.
void predict_into(const ModelSpec& model, const HardwareSpec& hw, const ParallelConfig& config,
                  const Efficiencies& eff, Prediction& out, bool explain = false,
                  const MemoryBreakdown* memory = nullptr);

// Empty when EFF's combined 1F1B (Efficiencies::moe_a2a_overlap) can run CONFIG, else the one-line reason.
std::string check_moe_a2a_overlap(const ParallelConfig& config, const ModelSpec& model,
                                  const Efficiencies& eff);

// Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm; core.pipeline_parallel.combined_1f1b):
// the share of STAGE's micro-batch chunks whose forward runs paired with another's backward. Without
// pipelining the first forward and the last backward run alone (m - 1 of m paired); interleaved, the
// warm-up forwards and the cool-down backwards of the interleaved schedule, min(v m, 2 (p - stage - 1) +
// (v - 1) GROUP), run alone. Megatron-Core runs it only without pipelining or interleaved (v > 1).
double combined_1f1b_share(int pp, int virtual_stages, int micro_batches, int group, int stage);

// What one MoE layer's expert all-to-alls leave exposed per micro-batch under combined 1F1B: paired, the
// forward's (dispatch and combine) hide behind the other micro-batch's backward compute of the layer and the
// backward's behind its forward compute; unpaired (1 - SHARE), all of them are exposed.
double combined_1f1b_exposed(double a2a_forward_s, double a2a_backward_s, double layer_forward_s,
                             double layer_backward_s, double share);

// Pipeline bubble fraction of the schedule with balanced stages: (p-1)/(m+p-1) for GPipe and 1F1B (Huang et
// al. 2019; Narayanan et al. 2021 §2.2.1), (p-1)/(v m + p-1) for interleaved 1F1B with v virtual stages
// (Narayanan et al. 2021 §2.2.2).
double bubble_fraction(Schedule schedule, int pp, int micro_batches, int virtual_stages);

// The link classes the efficiencies describe.
Link intra_node_link(const Efficiencies& eff);
Link inter_node_link(const Efficiencies& eff);

}  // namespace meshscope::model
