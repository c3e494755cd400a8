// Roofline operations of a layout: the layer's GEMM FLOPs add up to Megatron's per-layer count, and each
// point's ceiling follows from its intensity.
#include <gtest/gtest.h>

#include <numeric>

#include "analysis/model/presets.hpp"
#include "analysis/model/roofline.hpp"

namespace meshscope::model {
namespace {

ParallelConfig layout(int gpus, int tp, int pp, int global_batch) {
  ParallelConfig c;
  c.gpus = gpus;
  c.tp = tp;
  c.pp = pp;
  c.micro_batch = 1;
  c.global_batch = global_batch;
  return c;
}

// Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters", Sec. 5.1): a
// transformer layer's forward GEMMs cost 24·B·s·h² FLOPs (QKV 6, attention output 2, MLP 16, in units of
// B·s·h²).
TEST(Roofline, LayerGemmsAddUpToMegatronsCount) {
  const ModelSpec m = load_model("gpt3-175b");
  const HardwareSpec hw = load_hardware("a100-80gb");
  const ParallelConfig c = resolve(layout(64, 8, 8, 64), m, hw);
  const auto ops = roofline_operations(m, hw, defaults_for(hw), c);
  double gemm_flops = 0;
  for (const auto& op : ops) {
    if (!op.comm && op.name.find("GEMM") != std::string::npos && op.name != "logits GEMM")
      gemm_flops += op.flops;
  }
  const double h = m.hidden, tokens = static_cast<double>(c.micro_batch) * c.seq;
  EXPECT_NEAR(gemm_flops * c.tp / (24.0 * tokens * h * h), 1.0, 1e-9);
}

TEST(Roofline, CeilingsAndBoundsFollowTheIntensity) {
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const ParallelConfig c = resolve(layout(64, 8, 1, 64), m, hw);
  const Roof roof = roof_of(hw, Precision::kBF16);
  EXPECT_DOUBLE_EQ(roof.peak, hw.peak_tflops_bf16 * 1e12);
  EXPECT_DOUBLE_EQ(roof.hbm, hw.hbm_tbps * 1e12);
  const auto ops = roofline_operations(m, hw, defaults_for(hw), c);
  bool saw_tp = false, saw_dp = false;
  for (const auto& op : ops) {
    EXPECT_GT(op.flops, 0) << op.name;
    EXPECT_GT(op.bytes, 0) << op.name;
    EXPECT_DOUBLE_EQ(op.time_s,
                     std::max(op.t_compute, op.t_memory) +
                         (op.name.find("GEMM") != std::string::npos ? defaults_for(hw).gemm_overhead_s : 0.0))
        << op.name;
    if (!op.comm) {
      // A GEMM below the ridge point (peak / HBM) would be memory-bound; these large ones are compute-bound.
      EXPECT_EQ(op.bound, op.t_compute >= op.t_memory ? RooflineBound::kCompute : RooflineBound::kHbm)
          << op.name;
    }
    saw_tp = saw_tp || op.name.rfind("TP all-reduce", 0) == 0;
    saw_dp = saw_dp || op.name.rfind("DP gradient", 0) == 0;
  }
  EXPECT_TRUE(saw_tp);
  EXPECT_TRUE(saw_dp);
  // TP within one 8-GPU node runs over NVLink, never the network.
  for (const auto& op : ops) {
    if (op.name.rfind("TP all-reduce", 0) == 0) {
      EXPECT_NE(op.bound, RooflineBound::kNetwork);
    }
  }
}

}  // namespace
}  // namespace meshscope::model
