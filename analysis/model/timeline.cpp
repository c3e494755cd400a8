#include "analysis/model/timeline.hpp"

#include <algorithm>
#include <functional>
#include <limits>

#include "analysis/model/pipeline.hpp"

namespace meshscope::model {

std::string_view to_string(TimelineKind kind) {
  switch (kind) {
    case TimelineKind::kForward:
      return "forward";
    case TimelineKind::kBackward:
      return "backward";
    case TimelineKind::kSend:
      return "send";
    case TimelineKind::kBubble:
      return "bubble";
    case TimelineKind::kDataParallel:
      return "dp_comm";
    case TimelineKind::kOptimizer:
      return "optimizer";
  }
  return "forward";
}

std::vector<StageOp> stage_order(Schedule schedule, int stage, int stages, int micro_batches, int chunks,
                                 int group) {
  std::vector<StageOp> ops;
  const int m = micro_batches;
  const int p = stages;
  if (schedule == Schedule::kGPipe) {
    for (int i = 0; i < m; ++i) ops.push_back({true, i, 0});
    for (int i = m - 1; i >= 0; --i) ops.push_back({false, i, 0});
    return ops;
  }
  if (schedule == Schedule::k1F1B || chunks <= 1) {
    const int warmup = std::min(m, p - stage - 1);
    int f = 0, b = 0;
    for (; f < warmup; ++f) ops.push_back({true, f, 0});
    while (f < m) {
      ops.push_back({true, f++, 0});
      ops.push_back({false, b++, 0});
    }
    while (b < m) ops.push_back({false, b++, 0});
    return ops;
  }
  // Megatron-Core interleaved schedule (schedules.py get_schedule_table): micro-batches in groups of GROUP,
  // each group run through chunk 0, 1, ..., v-1; backwards walk the chunks in reverse.
  const int v = chunks;
  const int total = m * v;
  const int n = group > 0 ? group : p;
  std::vector<StageOp> table;
  table.reserve(static_cast<size_t>(total));
  for (int start = 0; start < m; start += n)
    for (int chunk = 0; chunk < v; ++chunk)
      for (int mb = start; mb < std::min(start + n, m); ++mb) table.push_back({true, mb, chunk});
  auto forward_op = [&](int k) { return table[static_cast<size_t>(k)]; };
  auto backward_op = [&](int k) {
    StageOp op = table[static_cast<size_t>(k)];
    return StageOp{false, op.micro_batch, v - 1 - op.chunk};
  };
  const int warmup = std::min(total, (p - stage - 1) * 2 + (v - 1) * n);
  int f = 0, b = 0;
  for (; f < warmup; ++f) ops.push_back(forward_op(f));
  while (f < total) {
    ops.push_back(forward_op(f++));
    ops.push_back(backward_op(b++));
  }
  while (b < total) ops.push_back(backward_op(b++));
  return ops;
}

Timeline schedule_pipeline(const std::vector<std::vector<StageOp>>& orders, int chunks, int micro_batches,
                           const std::function<double(int stage, const StageOp& op)>& duration,
                           const std::function<double(int from_stage, int to_stage)>& hop) {
  const int p = static_cast<int>(orders.size());
  const int m = micro_batches;
  const int v = std::max(1, chunks);
  Timeline tl;
  tl.stages = p;
  // Finish times per (virtual stage = chunk * p + stage, micro-batch), forward and backward.
  const int vstages = p * v;
  const double unset = -1.0;
  std::vector<double> fdone(size_t(vstages) * m, unset), bdone(size_t(vstages) * m, unset);
  std::vector<size_t> next(p, 0);
  std::vector<double> clock(p, 0.0);
  size_t remaining = 0;
  for (const auto& o : orders) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      while (next[s] < orders[s].size()) {
        const StageOp op = orders[s][next[s]];
        const int vs = op.chunk * p + s;
        double ready = clock[s];
        // A forward waits for the previous virtual stage's forward and the transfer from it; a backward for
        // the next one's backward (or, on the last, its own forward).
        const int from = op.forward ? vs - 1 : vs + 1;
        if (from >= 0 && from < vstages) {
          const double dep = (op.forward ? fdone : bdone)[size_t(from) * m + op.micro_batch];
          if (dep < 0) break;
          ready = std::max(ready, dep + hop(from % p, s));
        } else if (!op.forward) {
          const double dep = fdone[size_t(vs) * m + op.micro_batch];
          if (dep < 0) break;
          ready = std::max(ready, dep);
        }
        if (ready > clock[s])
          tl.events.push_back({s, TimelineKind::kBubble, -1, 0, clock[s], ready - clock[s]});
        const double dur = duration(s, op);
        tl.events.push_back({s, op.forward ? TimelineKind::kForward : TimelineKind::kBackward, op.micro_batch,
                             op.chunk, ready, dur});
        const double end = ready + dur;
        (op.forward ? fdone : bdone)[size_t(vs) * m + op.micro_batch] = end;
        const int to = op.forward ? vs + 1 : vs - 1;
        if (to >= 0 && to < vstages) {
          const double send = hop(s, to % p);
          if (send > 0) tl.events.push_back({s, TimelineKind::kSend, op.micro_batch, op.chunk, end, send});
        }
        clock[s] = end;
        ++next[s];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) break;  // the schedules above never deadlock; guard against a malformed order
  }
  for (int s = 0; s < p; ++s) tl.step_time_s = std::max(tl.step_time_s, clock[s]);
  return tl;
}

Timeline build_timeline(const Prediction& pr) {
  const ParallelConfig& c = pr.config;
  const int p = c.pp;
  const int m = c.micro_batches();
  const int v = c.schedule == Schedule::kInterleaved ? c.virtual_stages : 1;
  // Per stage and chunk: forward carries its exposed TP/CP/EP share, backward the rest and the recompute.
  std::vector<double> fwd(static_cast<size_t>(p)), bwd(static_cast<size_t>(p));
  for (int s = 0; s < p; ++s) {
    const MicroBatchTimes& mb =
        pr.stages.size() == static_cast<size_t>(p) ? pr.stages[static_cast<size_t>(s)] : pr.micro_batch;
    const double comm = mb.tp_exposed + mb.cp_exposed + mb.ep_exposed;
    fwd[static_cast<size_t>(s)] = (mb.forward + comm / 3.0) / v;
    bwd[static_cast<size_t>(s)] = (mb.backward + mb.recompute + comm * 2.0 / 3.0) / v;
  }
  const MicroBatchTimes& mb = pr.micro_batch;
  // A dependency between stages waits for the exposed part of one transfer (1 - overlap_pp).
  const double hop = pr.comm.pp > 0 ? mb.p2p * pr.time.pp_p2p_exposed / pr.comm.pp : 0.0;

  std::vector<std::vector<StageOp>> orders(p);
  const int group = c.schedule == Schedule::kInterleaved ? microbatch_group(c) : p;
  for (int s = 0; s < p; ++s) orders[s] = stage_order(c.schedule, s, p, m, v, group);
  Timeline tl = schedule_pipeline(
      orders, v, m,
      [&](int s, const StageOp& op) {
        return op.forward ? fwd[static_cast<size_t>(s)] : bwd[static_cast<size_t>(s)];
      },
      [&](int, int) { return hop; });
  std::vector<double> clock(p, 0.0);
  for (const TimelineEvent& e : tl.events)
    if (e.kind != TimelineKind::kSend) clock[e.stage] = std::max(clock[e.stage], e.start_s + e.duration_s);
  tl.step_time_s = 0;
  double pipeline_end = 0;
  for (double t : clock) pipeline_end = std::max(pipeline_end, t);
  for (int s = 0; s < p; ++s) {
    double t = clock[s];
    if (pipeline_end > t) {
      tl.events.push_back({s, TimelineKind::kBubble, -1, 0, t, pipeline_end - t});
      t = pipeline_end;
    }
    if (pr.time.dp_exposed > 0) {
      tl.events.push_back({s, TimelineKind::kDataParallel, -1, 0, t, pr.time.dp_exposed});
      t += pr.time.dp_exposed;
    }
    if (pr.time.optimizer > 0)
      tl.events.push_back({s, TimelineKind::kOptimizer, -1, 0, t, pr.time.optimizer});
    tl.step_time_s = std::max(tl.step_time_s, t + pr.time.optimizer);
  }
  std::stable_sort(tl.events.begin(), tl.events.end(), [](const TimelineEvent& a, const TimelineEvent& b) {
    return a.stage != b.stage ? a.stage < b.stage : a.start_s < b.start_s;
  });
  return tl;
}

}  // namespace meshscope::model
