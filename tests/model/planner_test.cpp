// Young-Daly checkpoint interval and the scaling-law budget.
#include <gtest/gtest.h>

#include "analysis/model/planner.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

TEST(Planner, YoungIntervalOfTheBook) {
  // Book worked example: MTBF 3 days, 300 s checkpoint -> sqrt(2 x 300 x 259200) ~ 12,470 s.
  const CheckpointPlan p = plan_checkpoints(3 * 86400.0, 300.0);
  EXPECT_NEAR(p.young_interval_s, 12470, 1.0);
  EXPECT_LT(p.daly_interval_s, p.young_interval_s);  // Daly's correction subtracts the checkpoint time
  EXPECT_NEAR(p.daly_interval_s, 12271.6, 1.0);
  // At the optimum writing and rework cost the same: 2 x 300 / 12470 = 4.8 %.
  EXPECT_NEAR(p.overhead_fraction, 0.0481, 1e-3);
}

TEST(Planner, LlamaThreeInterruptionRate) {
  // reliability_checkpoint_anchors.csv: Llama 3 405B saw 419 unexpected interruptions in 54 days on 16,384
  // GPUs -> job MTBF 3.09 h (derived row); as a per-GPU MTBF spread over 16,384 GPUs.
  double interruptions = 0, days = 0, derived = 0;
  for (auto& r : testing::read_calibration_csv("reliability_checkpoint_anchors.csv")) {
    if (r["run"] != "Llama3-405B") continue;
    if (r["item"] == "unexpected_interruptions") interruptions = std::stod(r["value"]);
    if (r["item"] == "snapshot_period") days = std::stod(r["value"]);
    if (r["item"] == "mtbf_unexpected_derived") derived = std::stod(r["value"]);
  }
  const double job = days * 86400 / interruptions;
  EXPECT_NEAR(job / 3600, derived, 0.01);
  EXPECT_NEAR(job_mtbf_s(job * 16384, 16384), job, 1e-6);
  // Megatron-1T's 13.8 TB checkpoint at 273 GB/s takes 50.5 s (derived row); at a 3.09 h MTBF Young gives
  // sqrt(2 x 50.5 x 11124) ~ 1,060 s.
  const CheckpointPlan p = plan_checkpoints(job, 13.8e12 / 273e9);
  EXPECT_NEAR(p.checkpoint_s, 50.5, 0.1);
  EXPECT_NEAR(p.young_interval_s, 1060, 10);
}

TEST(Planner, ChinchillaBudget) {
  // Hoffmann et al. 2022: Chinchilla 70B on 1.4T tokens (20 per parameter), C = 6ND = 5.88e23 FLOPs.
  const ScalingBudget b = budget_from_params(70e9);
  EXPECT_DOUBLE_EQ(b.tokens, 1.4e12);
  EXPECT_NEAR(b.compute_flops, 5.88e23, 1e20);
  const ScalingBudget back = budget_from_compute(5.88e23);
  EXPECT_NEAR(back.params / 70e9, 1.0, 1e-9);
  EXPECT_THROW(plan_checkpoints(0, 300), InvalidInput);
}

}  // namespace
}  // namespace meshscope::model
