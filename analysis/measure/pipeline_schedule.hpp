// The measured pipeline schedule: for a profile with pipeline parallelism, its stages, the forward and
// backward micro-batches each stage ran in each step, the schedule they follow (GPipe, 1F1B, interleaved
// 1F1B) and each stage's bubble, next to the bubble the schedule predicts, (p − 1) / (v·m + p − 1) (Narayanan
// et al. 2021 §2.2; v = 1 without interleaving; analysis/model/predict.hpp bubble_fraction()).
//
// Stages: a process group described as a pipeline group (its description names "pipeline", or is "pp" or
// ends in "_pp", as Megatron-LM's PIPELINE_MODEL_PARALLEL_GROUP and torch DeviceMesh's mesh_pp do), stage
// order = the order of its member list; otherwise a communicator used only for send/recv, in the order of the
// ranks it lists. Micro-batches: the GPU work a rank launched (kernels, communication other than the
// pipeline's send/recv; no copies) in CPU launch order, cut at every pipeline send/recv and wherever the work
// switches between forward and backward; backward = launched from inside a CPU range of the autograd engine
// (autograd::engine::evaluate_function) or one whose name says backward (backward_step, *Backward0); the
// rest is forward. Forward blocks after a step's last backward block (optimizer, gradient sync) are not
// micro-batches. docs/ANALYSIS.md ("Pipeline schedule") has the definitions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"

namespace meshscope::measure {

// One forward or backward block of one stage in one step.
struct PipelineBlock {
  bool forward = true;
  std::int32_t unit = 0;            // k-th forward (or backward) block of the stage in this step
  std::int32_t chunk = 0;           // model chunk (interleaved; else 0), from the inferred schedule
  std::int32_t micro_batch = 0;     // micro-batch, from the inferred schedule (else = unit)
  TimeNs start_ns = 0, end_ns = 0;  // GPU: first start and last end of its work
  std::int64_t activities = 0;
};

struct StageStep {
  std::int64_t step = 0;
  std::vector<PipelineBlock> blocks;  // in launch order
  std::int32_t forwards = 0, backwards = 0;
  std::int32_t warmup = 0;  // forward blocks before the first backward block
  TimeNs busy_ns = 0;       // |∪ of its blocks' spans| inside the group's window
  TimeNs bubble_ns = 0;     // window − busy: waiting for a neighbour (fill, drain, imbalance)
  double bubble_fraction = 0;
};

struct PipelineStage {
  std::int32_t stage = 0;        // position in the group
  std::int32_t rank = 0;         // global rank
  std::int64_t rank_index = -1;  // into Profile::ranks(); -1 when the rank is not in the profile
  std::vector<StageStep> steps;
  double mean_bubble_fraction = 0;  // over its steps
};

struct PipelineStep {
  std::int64_t step = 0;
  TimeNs start_ns = 0, end_ns = 0;  // the window: first block start to last block end over the stages
  double mean_bubble_fraction = 0;  // over the stages
};

struct PipelineGroup {
  std::vector<std::int32_t> ranks;    // stage order
  std::string source;                 // how the stages were found ("process group 9 (pp)", "send/recv ...")
  std::vector<PipelineStage> stages;  // one per rank in stage order
  std::vector<PipelineStep> steps;
  std::string schedule;              // "1f1b", "interleaved", "gpipe", or "unknown"
  std::int32_t micro_batches = 0;    // m
  std::int32_t virtual_stages = 1;   // v
  std::int32_t stages_matching = 0;  // stages whose warm-up the inferred schedule predicts
  double predicted_bubble = 0;       // (p − 1) / (v·m + p − 1): balanced stages, free sends
  // The same schedule with each stage's measured work (t_s = its busy time / m per micro-batch): the step
  // takes Σ t_s / v + (v·m − 1) · max t_s / v, and a stage idles for the rest (mean over stages). Next to the
  // prediction it shows how much of the bubble comes from unequal stages.
  double imbalanced_bubble = 0;
  std::int32_t slowest_stage = -1;  // the stage with the most work per step
  double imbalance = 1;             // its work over the mean stage's
  double measured_bubble = 0;       // mean over steps and stages
};

struct PipelineReport {
  bool found = false;
  std::vector<PipelineGroup> groups;
  std::vector<std::string> notes;  // "no pipeline parallelism found: ..." when there is none
};

PipelineReport measure_pipeline(const Profile& profile, const Analysis& analysis);
// The same for a profile whose ranks hold no events any more (`report` streaming a large job's ranks: only
// their descriptions, collectives and analysis were kept). STAGE_EVENTS(RANK_INDEX) gives a profile in which
// that rank holds its events again; it is asked once for each pipeline stage in the profile.
using StageEvents = std::function<Profile(std::size_t rank_index)>;
// Whether measure_pipeline finds pipeline groups (process groups described so, communicators used only for
// send/recv): from the ranks' descriptions and collectives, without their events.
bool has_pipeline(const Profile& profile, const Analysis& analysis);
PipelineReport measure_pipeline(const Profile& profile, const Analysis& analysis,
                                const StageEvents& stage_events);

}  // namespace meshscope::measure
