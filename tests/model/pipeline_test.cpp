// Uneven pipelines, Megatron-Core's interleaving constraints, precisions, GEMM shapes, framework presets and
// --explain.
#include <gtest/gtest.h>

#include "analysis/model/compute.hpp"
#include "analysis/model/framework.hpp"
#include "analysis/model/pipeline.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

std::string problem(ParallelConfig c, const ModelSpec& m, const HardwareSpec& hw) {
  try {
    resolve(c, m, hw);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return {};
}

TEST(Pipeline, Llama3With126LayersOn16Stages) {
  // Llama Team 2024 §3.3.2: 405B trained with PP 16; the first and last stage hold one layer fewer.
  const ModelSpec m = load_model("llama3-405b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 8192, c.tp = 8, c.pp = 16, c.global_batch = 2048;
  const ParallelConfig r = resolve(c, m, hw);
  const std::vector<int> layers = stage_layers(m, r);
  ASSERT_EQ(layers.size(), 16u);
  EXPECT_EQ(layers.front(), 7);
  EXPECT_EQ(layers.back(), 7);
  for (size_t i = 1; i + 1 < layers.size(); ++i) EXPECT_EQ(layers[i], 8);
  const Prediction p = predict(m, hw, r, defaults_for(hw));
  EXPECT_EQ(p.stage_layers, layers);
  EXPECT_DOUBLE_EQ(p.step_time_s, p.time.total());
  // The most loaded stage for memory is one with 8 layers and many micro-batches in flight (stage 1).
  EXPECT_EQ(p.memory.stage, 1);
}

TEST(Pipeline, FirstAndLastStageLayersAsMegatronCoreAllows) {
  const ModelSpec m = load_model("deepseek-v3");  // 61 layers
  ParallelConfig c;
  c.pp = 16, c.first_stage_layers = 4, c.last_stage_layers = 1;
  EXPECT_EQ(check_stage_layers(m, c), "");
  const std::vector<int> layers = stage_layers(m, c);
  EXPECT_EQ(layers.front(), 4);
  EXPECT_EQ(layers.back(), 1);
  int total = 0;
  for (int n : layers) total += n;
  EXPECT_EQ(total, 61);
  EXPECT_EQ(moe_layers_in(m, 0, 4), 1);  // the first three layers are dense
  c.first_stage_layers = 50, c.last_stage_layers = 20;
  EXPECT_EQ(check_stage_layers(m, c), "--first-stage-layers 50 + --last-stage-layers 20 exceed --layers 61");
}

TEST(Pipeline, TheSlowestStageSetsThePace) {
  const ModelSpec m = load_model("llama3-8b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 4, c.pp = 4, c.global_batch = 16, c.first_stage_layers = 14, c.last_stage_layers = 2;
  const Prediction heavy_first = predict(m, hw, resolve(c, m, hw), defaults_for(hw));
  EXPECT_EQ(heavy_first.pacing_stage, 0);
  EXPECT_EQ(heavy_first.memory.stage, 0);
  c.first_stage_layers = c.last_stage_layers = -1;
  const Prediction balanced = predict(m, hw, resolve(c, m, hw), defaults_for(hw));
  EXPECT_LT(balanced.step_time_s, heavy_first.step_time_s);
}

TEST(Pipeline, InterleavingConstraintsOfMegatronCore) {
  // schedules.py forward_backward_pipelining_with_interleaving: pp <= group <= m, m mod group 0 or >= pp.
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 32, c.tp = 8, c.pp = 4, c.global_batch = 10, c.schedule_set = true;
  c.schedule = Schedule::kInterleaved, c.virtual_stages = 2;
  EXPECT_EQ(problem(c, m, hw), "");  // 10 micro-batches on 4 stages: one group of 10
  c.microbatch_group = 4;
  EXPECT_NE(problem(c, m, hw).find("the last group of 2 micro-batches is smaller than --pp 4"),
            std::string::npos);
  c.microbatch_group = 5;
  EXPECT_EQ(problem(c, m, hw), "");
  c.microbatch_group = 0, c.global_batch = 3;
  EXPECT_NE(problem(c, m, hw).find("needs at least --pp 4 micro-batches"), std::string::npos);
  // The timeline of an uneven group still runs every forward once.
  c.global_batch = 10;
  const Prediction p = predict(m, hw, resolve(c, m, hw), defaults_for(hw));
  EXPECT_DOUBLE_EQ(p.step_time_s, p.time.total());
}

TEST(Precision, FormatsOnTheHardwareThatHasThem) {
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec b200 = load_hardware("b200");
  const HardwareSpec h100 = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 64, c.tp = 8, c.global_batch = 64;
  auto step = [&](const HardwareSpec& hw, Precision p) {
    c.precision = p;
    return predict(m, hw, resolve(c, m, hw), defaults_for(hw)).step_time_s;
  };
  EXPECT_LT(step(b200, Precision::kNVFP4), step(b200, Precision::kFP8));
  EXPECT_LT(step(b200, Precision::kFP8), step(b200, Precision::kBF16));
  c.precision = Precision::kNVFP4;
  EXPECT_EQ(problem(c, m, h100), "h100-sxm has no FP4 tensor cores: use --precision bf16, fp8 or fp8-block");
  // Quantisation costs HBM time; block scaling reads the input once instead of twice.
  const PrecisionRecipe tensor = precision_recipe(Precision::kFP8, h100, defaults_for(h100));
  const PrecisionRecipe block = precision_recipe(Precision::kFP8Block, h100, defaults_for(h100));
  EXPECT_GT(tensor.quantize_bytes, block.quantize_bytes);
  EXPECT_EQ(parse_precision("mxfp8"), Precision::kFP8Block);
}

TEST(Gemm, SkinnyGemmIsMemoryBoundAsMeasured) {
  // measured_microbenchmarks_azure.csv: H100 cuBLASLt FP8 802816x192x768 663.8 TFLOP/s, 32768^3 1382.2.
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  const double hbm = hw.hbm_tbps * 1e12 * eff.hbm;
  const GemmShape skinny{802816, 192, 768};
  const double t = gemm_time(skinny, hw.peak_tflops_fp8 * 1e12, eff.gemm_fp8, 1.0, eff.gemm_overhead_s, hbm);
  EXPECT_NEAR(skinny.flops() / t / 1e12 / 663.8, 1.0, 0.15);
  const GemmShape big{32768, 32768, 32768};
  const double tb = gemm_time(big, hw.peak_tflops_fp8 * 1e12, eff.gemm_fp8, 1.0, eff.gemm_overhead_s, hbm);
  EXPECT_NEAR(big.flops() / tb / 1e12 / 1382.2, 1.0, 0.02);
}

TEST(Framework, PresetsAreTheDocumentedAssumptionsAndFlagsOverride) {
  const HardwareSpec hw = load_hardware("a100-80gb");
  Efficiencies e = defaults_for(hw);
  ParallelConfig c;
  apply_framework(framework_preset("megatron-2021"), e, c);
  const Efficiencies book = testing::megatron_2021(hw);
  EXPECT_EQ(e.flash_attention, book.flash_attention);
  EXPECT_EQ(e.state_bytes, book.state_bytes);
  EXPECT_EQ(e.overlap_dp, book.overlap_dp);
  EXPECT_EQ(c.zero, 0);
  ParallelConfig z;
  z.zero = 1;  // given explicitly: kept
  apply_framework(framework_preset("fsdp2"), e, z);
  EXPECT_EQ(z.zero, 1);
  EXPECT_THROW(framework_preset("jax"), InvalidInput);
}

TEST(Explain, TermsSumToTheStepTime) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 128, c.tp = 2, c.pp = 4, c.ep = 8, c.global_batch = 256, c.recompute_set = true;
  c.recompute = Recompute::kSelective;
  const Prediction p = predict(m, hw, resolve(c, m, hw), defaults_for(hw), true);
  double sum = 0;
  for (const auto& t : p.terms) {
    sum += t.seconds;
    EXPECT_FALSE(t.formula.empty()) << t.name;
  }
  EXPECT_NEAR(sum / p.step_time_s, 1.0, 1e-9);
  EXPECT_TRUE(predict(m, hw, resolve(c, m, hw), defaults_for(hw)).terms.empty());
}

}  // namespace
}  // namespace meshscope::model
