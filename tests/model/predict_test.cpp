// predict(): the step-time invariant, bad input, and the trends published runs show.
#include <gtest/gtest.h>

#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

Prediction run(const char* model, const char* hardware, ParallelConfig c) {
  const ModelSpec m = load_model(model);
  const HardwareSpec hw = load_hardware(hardware);
  return predict(m, hw, resolve(c, m, hw), defaults_for(hw));
}

TEST(Predict, StepTimeIsTheSumOfItsParts) {
  ParallelConfig c;
  c.gpus = 1024, c.tp = 8, c.pp = 4, c.cp = 2, c.recompute_set = true, c.recompute = Recompute::kSelective;
  const Prediction p = run("llama3-70b", "h100-sxm", c);
  EXPECT_DOUBLE_EQ(p.step_time_s, p.time.total());
  EXPECT_GT(p.time.tp_exposed, 0);
  EXPECT_GT(p.time.pp_bubble, 0);
  EXPECT_GT(p.time.recompute, 0);
  EXPECT_NEAR(p.mfu, p.model_tflops_per_gpu / 989.4, 1e-12);
  EXPECT_NEAR(p.tokens_per_s * p.step_time_s, double(p.config.global_batch) * p.config.seq, 1e-3);
  ParallelConfig moe;
  moe.gpus = 64, moe.tp = 1, moe.ep = 8, moe.global_batch = 256;
  const Prediction q = run("mixtral-8x7b", "h100-sxm", moe);
  EXPECT_GT(q.time.ep_exposed, 0);
  EXPECT_DOUBLE_EQ(q.step_time_s, q.time.total());
}

TEST(Predict, RejectsImpossibleLayoutsWithOneLine) {
  const ModelSpec m = load_model("llama3-8b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  auto message = [&](ParallelConfig c) {
    try {
      resolve(c, m, hw);
    } catch (const InvalidInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ParallelConfig c;
  c.gpus = 6, c.tp = 3;
  EXPECT_EQ(message(c), "--tp 3 does not divide --heads 32: use a divisor of 32");
  // Uneven pipelines are valid (Llama 3 405B ran 126 layers on 16 stages); a stage without layers is not.
  c = {}, c.gpus = 3, c.pp = 3;
  EXPECT_EQ(message(c), "");
  c = {}, c.gpus = 40, c.pp = 40;
  EXPECT_EQ(message(c), "--pp 40 exceeds --layers 32: a pipeline stage would hold no transformer layer");
  c = {}, c.gpus = 16, c.tp = 2, c.pp = 2, c.dp = 2;
  EXPECT_NE(message(c).find("is not --gpus 16"), std::string::npos);
  c = {}, c.gpus = 8, c.global_batch = 12, c.micro_batch = 1;
  EXPECT_NE(message(c).find("--global-batch 12 is not divisible by --dp 8"), std::string::npos);
  c = {}, c.gpus = 8, c.ep = 2;
  EXPECT_NE(message(c).find("mixture-of-experts"), std::string::npos);
  c = {}, c.gpus = 8, c.zero = 4;
  EXPECT_NE(message(c).find("ZeRO stage"), std::string::npos);
  c = {}, c.gpus = 8, c.precision = Precision::kFP8;
  EXPECT_EQ(message(c), "");
  const HardwareSpec a100 = load_hardware("a100-80gb");
  EXPECT_THROW(resolve(c, m, a100), InvalidInput);
  for (const std::string& msg : {message(ParallelConfig{})}) EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(Predict, DefaultsAreStated) {
  ParallelConfig c;
  c.gpus = 64;
  const ModelSpec m = load_model("llama3-8b");
  const ParallelConfig r = resolve(c, m, load_hardware("h100-sxm"));
  EXPECT_EQ(r.dp, 64);
  EXPECT_EQ(r.global_batch, 512);
  EXPECT_EQ(r.zero, 1);
  EXPECT_NE(std::find(r.defaulted.begin(), r.defaulted.end(), "dp"), r.defaulted.end());
  EXPECT_NE(std::find(r.defaulted.begin(), r.defaulted.end(), "recompute"), r.defaulted.end());
}

TEST(Predict, Fp8IsFasterAndRecomputeCostsTime) {
  ParallelConfig c;
  c.gpus = 64, c.tp = 8;
  const Prediction bf16 = run("llama3-70b", "h100-sxm", c);
  c.precision = Precision::kFP8;
  const Prediction fp8 = run("llama3-70b", "h100-sxm", c);
  EXPECT_LT(fp8.time.compute, bf16.time.compute);
  c.precision = Precision::kBF16, c.recompute_set = true, c.recompute = Recompute::kFull;
  const Prediction full = run("llama3-70b", "h100-sxm", c);
  EXPECT_GT(full.step_time_s, bf16.step_time_s);
  EXPECT_LT(full.memory.activations, bf16.memory.activations);
  EXPECT_GT(full.hardware_tflops_per_gpu, full.model_tflops_per_gpu);
}

TEST(Predict, StrongScalingMfuFallsAsPipelinesGetFewerMicroBatches) {
  // Megatron 2021 Table 2 (PTD-P, 175B, batch 1536): 153 -> 149 -> 141 TFLOP/s per GPU from 384 to 1536 GPUs,
  // because each pipeline gets fewer micro-batches (bubble (p-1)/(m+p-1) grows).
  const HardwareSpec hw = load_hardware("a100-80gb");
  const ModelSpec m = load_model("gpt3-175b");
  double previous = 1e9;
  for (int gpus : {384, 768, 1536}) {
    ParallelConfig c;
    c.gpus = gpus, c.tp = 8, c.pp = 12, c.global_batch = 1536, c.recompute_set = true,
    c.recompute = Recompute::kFull;
    const Prediction p = predict(m, hw, resolve(c, m, hw), testing::megatron_2021(hw));
    EXPECT_LT(p.hardware_tflops_per_gpu, previous);
    previous = p.hardware_tflops_per_gpu;
  }
}

TEST(Predict, ZeroThreeFallsFasterThanPtdpWithDataParallelDegree) {
  // Megatron 2021 Table 2: ZeRO-3 drops 144 -> 44 TFLOP/s from 384 to 1536 GPUs while PTD-P holds 153 -> 141.
  const HardwareSpec hw = load_hardware("a100-80gb");
  const ModelSpec m = load_model("gpt3-175b");
  auto tflops = [&](int gpus, bool zero3) {
    ParallelConfig c;
    c.gpus = gpus, c.global_batch = 1536, c.recompute_set = true, c.recompute = Recompute::kFull;
    if (zero3) {
      c.tp = 1, c.pp = 1, c.zero = 3, c.micro_batch = 1536 / gpus;
    } else {
      c.tp = 8, c.pp = 12, c.zero = 1;
    }
    return predict(m, hw, resolve(c, m, hw), testing::megatron_2021(hw)).hardware_tflops_per_gpu;
  };
  const double zero3_drop = tflops(1536, true) / tflops(384, true);
  const double ptdp_drop = tflops(1536, false) / tflops(384, false);
  EXPECT_LT(zero3_drop, ptdp_drop);
  EXPECT_LT(zero3_drop, 0.8);
  EXPECT_GT(ptdp_drop, 0.85);
}

TEST(Predict, WeakScalingThroughputRisesWithModelSize) {
  // Narayanan et al. 2021 Table 1 configurations (18B to 1T, TP 8, GPUs growing with the model): per-GPU
  // throughput rises with model size (larger GEMMs, relatively cheaper element-wise work, TP communication
  // and bubble). Only the layouts are taken from the table, not its measurements.
  struct Row {
    int heads, hidden, layers, pp, gpus, batch;
  };
  const HardwareSpec hw = load_hardware("a100-80gb");
  std::vector<double> size, throughput;
  for (const Row& r :
       {Row{48, 6144, 40, 1, 256, 1024}, Row{64, 8192, 48, 2, 512, 1536}, Row{80, 10240, 60, 4, 1024, 1792},
        Row{96, 12288, 80, 8, 1536, 2304}, Row{128, 16384, 96, 16, 1920, 2160},
        Row{128, 20480, 105, 35, 2520, 2520}, Row{160, 25600, 128, 64, 3072, 3072}}) {
    const ModelSpec m = testing::megatron_gpt("weak", r.layers, r.hidden, r.heads);
    ParallelConfig c;
    c.gpus = r.gpus, c.tp = 8, c.pp = r.pp, c.global_batch = r.batch, c.recompute_set = true;
    c.recompute = Recompute::kFull, c.zero = 0;
    const Prediction p = predict(m, hw, resolve(c, m, hw), testing::megatron_2021(hw));
    EXPECT_TRUE(p.fits) << r.hidden;
    size.push_back(r.hidden);
    throughput.push_back(p.hardware_tflops_per_gpu);
  }
  EXPECT_GT(testing::spearman(size, throughput), 0.8);
  EXPECT_GT(throughput.back(), 1.2 * throughput.front());
}

// Its speed (re-predicting on every slider move) is measured by tests/bench/bench_search.cpp, not asserted
// here.
TEST(Predict, RepeatsExactly) {
  const ModelSpec m = load_model("llama3-405b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 16384, c.tp = 8, c.pp = 2, c.cp = 16, c.schedule_set = true, c.schedule = Schedule::kInterleaved;
  c.virtual_stages = 3;
  const ParallelConfig r = resolve(c, m, hw);
  const Efficiencies eff = defaults_for(hw);
  const double first = predict(m, hw, r, eff).step_time_s;
  EXPECT_GT(first, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(predict(m, hw, r, eff).step_time_s, first);
}

}  // namespace
}  // namespace meshscope::model
