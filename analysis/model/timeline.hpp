// A predicted timeline of one step: per pipeline stage, the forward and backward of every micro-batch (and
// virtual stage), the sends between stages, the bubbles, and the end-of-step data-parallel communication and
// optimizer. Built by list-scheduling the schedule's per-stage order with its cross-stage dependencies, using
// the per-micro-batch costs of a Prediction. The front end draws it; `predict --timeline` exports it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/model/predict.hpp"

namespace meshscope::model {

enum class TimelineKind { kForward, kBackward, kSend, kBubble, kDataParallel, kOptimizer };
std::string_view to_string(TimelineKind kind);

struct TimelineEvent {
  int stage = 0;  // pipeline stage (a GPU row)
  TimelineKind kind = TimelineKind::kForward;
  int micro_batch = -1;  // -1 when not tied to one
  int chunk = 0;         // virtual stage (model chunk) for the interleaved schedule
  double start_s = 0;
  double duration_s = 0;
};

struct Timeline {
  int stages = 1;
  double step_time_s = 0;             // end of the last event
  std::vector<TimelineEvent> events;  // sorted by (stage, start)
};

// The operation order of one stage: +k = forward of op k, -k-1 = backward; op = micro_batch * chunks + chunk.
// GPipe: all forwards then all backwards (Huang et al. 2019); 1F1B: p - s - 1 warm-up forwards then one
// forward one backward (Narayanan et al. 2021 §2.2.1); interleaved: Megatron-Core's order with
// (p - s - 1) x 2 + (v - 1) x N warm-up forwards over groups of N micro-batches per chunk (N = GROUP, 0 = p).
struct StageOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
};
std::vector<StageOp> stage_order(Schedule schedule, int stage, int stages, int micro_batches, int chunks,
                                 int group = 0);

// The list schedule of ORDERS (one per stage; CHUNKS model chunks, MICRO_BATCHES micro-batches): each stage
// runs its operations in order, a forward once the previous virtual stage's forward of its micro-batch has
// ended and HOP(from, to) has passed, a backward once the next virtual stage's backward has (the last one's
// once its own forward has). DURATION gives each operation's time. The events: forwards, backwards, the
// bubbles before them and a send after each operation that feeds another stage; step_time_s the last end.
Timeline schedule_pipeline(const std::vector<std::vector<StageOp>>& orders, int chunks, int micro_batches,
                           const std::function<double(int stage, const StageOp& op)>& duration,
                           const std::function<double(int from_stage, int to_stage)>& hop);

Timeline build_timeline(const Prediction& prediction);

}  // namespace meshscope::model
