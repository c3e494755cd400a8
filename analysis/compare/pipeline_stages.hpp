// `whatif --pp N` from a profile of pp 1: the run cut into N pipeline stages as Megatron-Core cuts the model
// (model::stage_layers: the embedding with the first stage, the output layer and the loss with the last) and
// scheduled as Megatron-Core's non-interleaved 1F1B schedule runs it (Narayanan et al., "Efficient
// Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", SC 2021, §2.2.1; PipeDream-Flush):
// each micro-batch's forward and backward pass of the replay (their passes read from the kernels, as
// compare::step_kernels reads them) split at the share of the pass's GEMM and attention work each stage's
// layers hold, the stages' pieces list-scheduled with a send of the micro-batch's activations between
// neighbouring stages (model::schedule_pipeline), the step's work before the first pass kept on every
// stage, of its work after the last the optimizer's span and the communication (the gradients'
// all-reduces) taken by each stage in its share of the parameters, after the pipeline has drained.
// docs/WHATIF.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measure/intervals.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/model/specs.hpp"
#include "analysis/model/timeline.hpp"
#include "profiler/profile.hpp"

namespace meshscope::compare {

// How MODEL splits over PP stages (Megatron-Core's layer counts, model::stage_layers).
struct StageShares {
  std::vector<int> layers;  // per stage
  // The share of a pass's GEMM and attention work done when each stage but the last hands on: forward in
  // stage order (stage s's end), backward in the backward's order (the end of stage pp - 1 - s's backward).
  std::vector<double> forward, backward;
  std::vector<double> parameters;  // per stage, its share of the model's parameters
};
// SEQ: the sequence the attention's work is counted at. Throws meshscope::Error (model::check_stage_layers's
// reason) when MODEL's layers cannot fill PP stages.
StageShares stage_shares(const model::ModelSpec& model, int seq, int pp);

struct PipelineRequest {
  int pp = 2;
  // Sent between neighbouring stages per micro-batch: its tokens × hidden × the activations' element size.
  double message_bytes = 0;
  // Global ranks between two neighbouring stages (Megatron-LM's order puts the pipeline outermost: tp × cp ×
  // dp of the new layout); with the GPU's gpus_per_node it says which sends cross nodes.
  std::int64_t stride = 1;
  // Each measured micro-batch run as this many (its kernels already re-timed for the smaller one): each
  // piece of it scheduled this many times.
  int micro_batch_split = 1;
};

// One stage's step.
struct PipelinedStep {
  std::int32_t rank = 0;  // the new layout's: stage × Pipelined::world + the measured rank
  std::int32_t measured_rank = 0, stage = 0;
  std::int64_t step = -1;
  TimeNs measured_ns = 0;   // the measured rank's step
  TimeNs predicted_ns = 0;  // before + the pipeline's drain on every stage + this stage's share after
  TimeNs forward_ns = 0, backward_ns = 0;  // this stage's pieces of every micro-batch's passes
  TimeNs bubble_ns = 0;                    // waiting on the other stages, to the drain
  TimeNs send_ns = 0;                      // its sends to the next (forward) and previous (backward) stage
  TimeNs before_ns = 0, after_ns = 0;      // the step's work before the first pass; this stage's share after
  std::int32_t micro_batches = 0;
};

struct PipelinedRank {
  std::int32_t rank = 0, measured_rank = 0, stage = 0;
  // As measure::ReplayedRank's: GPU span, busy and exposed communication (the sends counted as exposed).
  TimeNs span_ns = 0, busy_ns = 0, exposed_comm_ns = 0;
};

// One measured step as the pipeline runs it: where each stage's pieces came from in the replay and when the
// schedule runs them (what pipelined_profile draws).
struct PipelinedSchedule {
  std::size_t rank_index = 0;  // into Profile::ranks()
  std::int64_t step = -1;
  TimeNs replayed_start_ns = 0, replayed_ns = 0;
  measure::Interval before{0, 0}, after{0, 0};  // the replayed step's work before the passes and after
  std::vector<std::vector<measure::Interval>> forward, backward;  // [stage][micro-batch], replayed time
  model::Timeline timeline;                                       // the pipeline, from the end of BEFORE
  std::vector<TimeNs> predicted_ns;                               // per stage
  std::vector<double> after_scale;  // per stage: its time after the passes over the replay's
};

struct Pipelined {
  int stages = 0;
  // Stage s of measured rank r is rank s × world + r: one more than the largest measured rank's number.
  std::int32_t world = 0;
  int micro_batch_split = 1;                 // PipelineRequest::micro_batch_split
  std::vector<PipelinedStep> steps;          // by measured rank, step, then stage
  std::vector<PipelinedRank> ranks;          // by stage, then measured rank (the new layout's rank order)
  std::vector<PipelinedSchedule> schedules;  // by measured rank, then step
  std::vector<std::string> notes;
};

// The pipeline of REQUEST over REPLAY (a run with the edits EDITS and ReplayOptions::keep_times) of PROFILE,
// cut by SHARES; each send timed on HW's links (the α-β fit of the profile's own collectives where there is
// one, as compare::group_links). Throws meshscope::Error naming TITLE when no step holds a pass.
Pipelined pipeline_stages(const Profile& profile, const measure::Analysis& analysis,
                          const measure::ReplayEdits& edits, const measure::Replay& replay,
                          const StageShares& shares, const model::HardwareSpec& hw,
                          const PipelineRequest& request, std::string_view title);

// REPLAYED (measure::replayed_profile of the replay PIPELINED was cut from) drawn as PIPELINED's stages: per
// measured rank and stage a rank (PipelinedStep::rank's number) holding that stage's pieces of each pass at
// the times the schedule runs them, the work before the passes as replayed, its share of the work after
// (each activity's time × the stage's share of the parameters, SHARES), the sends on a stream of their own
// ("pipeline sends (added by the what-if)"), and its steps; CPU calls, ranges and collective records left
// out. The steps of later ranks move by what the pipeline changed of the earlier ones.
Profile pipelined_profile(const Profile& replayed, const Pipelined& pipelined, const StageShares& shares);

// PIPELINED's stage steps as replayed steps (rank: the stage's rank; replayed_ns: its predicted step): what
// the view labels each drawn step with.
std::vector<measure::ReplayedStep> pipelined_steps(const Pipelined& pipelined);

}  // namespace meshscope::compare
