// Pipeline schedules: bubble fractions and the predicted timeline.
#include <gtest/gtest.h>

#include "analysis/model/timeline.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

TEST(Schedule, BubbleFractionsOfTheBook) {
  // Narayanan et al. 2021 §2.2: (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(v m + p - 1) interleaved.
  EXPECT_DOUBLE_EQ(bubble_fraction(Schedule::kGPipe, 4, 8, 1), 3.0 / 11);
  EXPECT_DOUBLE_EQ(bubble_fraction(Schedule::k1F1B, 8, 32, 1), 7.0 / 39);
  EXPECT_DOUBLE_EQ(bubble_fraction(Schedule::kInterleaved, 8, 32, 4), 7.0 / 135);
  EXPECT_DOUBLE_EQ(bubble_fraction(Schedule::k1F1B, 1, 32, 1), 0.0);
}

Prediction pipeline(Schedule schedule, int pp, int micro, int v) {
  ModelSpec m = testing::megatron_gpt("t", 48, 4096, 32);
  const HardwareSpec hw = load_hardware("h100-sxm");
  Efficiencies eff = defaults_for(hw);
  eff.overlap_pp = 1.0;  // no exposed transfers: the timeline must equal the analytic bubble exactly
  ParallelConfig c;
  c.gpus = pp * 8, c.tp = 8, c.pp = pp, c.micro_batch = 1, c.global_batch = micro;
  c.schedule_set = true, c.schedule = schedule, c.virtual_stages = v;
  c.zero = 0;
  return predict(m, hw, resolve(c, m, hw), eff);
}

TEST(Timeline, MakespanEqualsAnalyticStepForEverySchedule) {
  struct Case {
    Schedule s;
    int p, m, v;
  };
  for (const Case& k :
       {Case{Schedule::kGPipe, 4, 8, 1}, Case{Schedule::k1F1B, 4, 16, 1}, Case{Schedule::k1F1B, 8, 8, 1},
        Case{Schedule::kInterleaved, 4, 16, 2}, Case{Schedule::kInterleaved, 4, 8, 3}}) {
    const Prediction p = pipeline(k.s, k.p, k.m, k.v);
    const Timeline tl = build_timeline(p);
    EXPECT_EQ(tl.stages, k.p);
    EXPECT_NEAR(tl.step_time_s / p.step_time_s, 1.0, 1e-9) << to_string(k.s) << " p=" << k.p << " m=" << k.m;
    // Bubble time on the stage that sets the pace (the last: it carries the logits) equals the analytic
    // bubble: the other stages' micro-batch times over v.
    double bubble = 0, forwards = 0;
    for (const auto& e : tl.events) {
      if (e.stage == p.pacing_stage && e.kind == TimelineKind::kBubble) bubble += e.duration_s;
      if (e.stage == 0 && e.kind == TimelineKind::kForward) ++forwards;
    }
    EXPECT_NEAR(bubble, p.time.pp_bubble, 1e-9 * p.step_time_s) << to_string(k.s);
    EXPECT_EQ(forwards, k.m * k.v);
  }
}

TEST(Timeline, OneFOneBOrderLimitsInFlightMicroBatches) {
  // Stage s of p runs p - s - 1 warm-up forwards, so at most p - s micro-batches are in flight.
  const auto order = stage_order(Schedule::k1F1B, 0, 4, 8, 1);
  int in_flight = 0, peak = 0;
  for (const auto& op : order) {
    in_flight += op.forward ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  EXPECT_EQ(peak, 4);
  EXPECT_EQ(order.size(), 16u);
  const auto gpipe = stage_order(Schedule::kGPipe, 0, 4, 8, 1);
  EXPECT_TRUE(gpipe[7].forward);
  EXPECT_FALSE(gpipe[8].forward);
}

TEST(Timeline, ShowsSendsAndDataParallelCommunication) {
  ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 256, c.tp = 8, c.pp = 4, c.global_batch = 64, c.zero = 0;
  Efficiencies eff = defaults_for(hw);
  eff.overlap_dp = 0;
  const Prediction p = predict(m, hw, resolve(c, m, hw), eff);
  const Timeline tl = build_timeline(p);
  int sends = 0, dp = 0;
  for (const auto& e : tl.events) {
    sends += e.kind == TimelineKind::kSend;
    dp += e.kind == TimelineKind::kDataParallel;
  }
  EXPECT_GT(sends, 0);
  EXPECT_EQ(dp, 4);
  EXPECT_GE(tl.step_time_s, p.step_time_s - p.time.pp_p2p_exposed);
}

}  // namespace
}  // namespace meshscope::model
