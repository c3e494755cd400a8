// Memory per GPU against the book's worked examples and Korthikanti et al. 2022 Figures 1 and 7.
#include <gtest/gtest.h>

#include "analysis/model/architecture.hpp"
#include "analysis/model/memory.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

using testing::read_calibration_csv;

TEST(Memory, SeventyBillionNeedsOnePointOneTwoTerabytesOfModelState) {
  // Book worked example: mixed precision with Adam, 16 bytes per parameter -> 70e9 x 16 = 1.12 TB.
  const MemoryBreakdown m = model_state_bytes(70e9, 1, 0, StateBytes::k16);
  EXPECT_NEAR((m.params + m.grads + m.optimizer) / 1e12, 1.12, 1e-9);
  // Megatron's convention (fp32 gradients) is 18 bytes.
  const MemoryBreakdown m18 = model_state_bytes(70e9, 1, 0, StateBytes::k18);
  EXPECT_NEAR((m18.params + m18.grads + m18.optimizer) / 1e12, 1.26, 1e-9);
}

TEST(Memory, ThirteenBillionNeedsThreeH100ForModelState) {
  // Book worked example: 13e9 x 16 B = 208 GB > 2 x 80 GB, so at least 3 H100-80GB.
  const HardwareSpec h100 = load_hardware("h100-sxm");
  const MemoryBreakdown m = model_state_bytes(13e9, 1, 0, StateBytes::k16);
  const double state = m.params + m.grads + m.optimizer;
  EXPECT_EQ(static_cast<int>(std::ceil(state / (h100.hbm_capacity_gib * double(1ull << 30)))), 3);
  EXPECT_EQ(static_cast<int>(std::ceil(state / 80e9)), 3);
}

TEST(Memory, ZeroStagesShardStateAsInTheZeroPaper) {
  // Rajbhandari et al. 2020 Figure 1: Psi = 7.5B, N_d = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
  const double psi = 7.5e9;
  const double expected[] = {120, 31.4, 16.6, 1.9};
  for (int zero = 0; zero <= 3; ++zero) {
    const MemoryBreakdown m = model_state_bytes(psi, 64, zero, StateBytes::k16);
    EXPECT_NEAR((m.params + m.grads + m.optimizer) / 1e9, expected[zero], 0.06) << "ZeRO stage " << zero;
  }
}

struct KorthikantiRun {
  std::string name;
  ModelSpec model;
  ParallelConfig config;
};

std::vector<KorthikantiRun> korthikanti_runs() {
  std::vector<KorthikantiRun> runs;
  for (auto& r : read_calibration_csv("korthikanti2022_table5_and_readme_mfu.csv")) {
    if (r["global_batch"] == "n/a") continue;
    KorthikantiRun run;
    run.name = r["model"];
    run.model = testing::megatron_gpt(r["model"], std::stoi(r["layers"]), std::stoi(r["hidden"]),
                                      std::stoi(r["heads"]));
    ParallelConfig& c = run.config;
    c.gpus = std::stoi(r["num_gpus"]);
    c.tp = std::stoi(r["tp"]);
    c.pp = std::stoi(r["pp"]);
    c.dp = std::stoi(r["dp"]);
    c.micro_batch = std::stoi(r["microbatch"]);
    c.global_batch = std::stoi(r["global_batch"]);
    const int v = std::stoi(r["pipeline_interleave"]);
    c.schedule_set = true;
    c.schedule = v > 1 ? Schedule::kInterleaved : Schedule::k1F1B;
    c.virtual_stages = v;
    c.zero = 0;
    runs.push_back(run);
  }
  return runs;
}

ParallelConfig with_mode(ParallelConfig c, const std::string& mode, const ModelSpec& m,
                         const HardwareSpec& hw) {
  c.recompute_set = true;
  c.recompute = mode == "full"                        ? Recompute::kFull
                : (mode == "sel" || mode == "seqsel") ? Recompute::kSelective
                                                      : Recompute::kNone;
  c.sequence_parallel = (mode == "seq" || mode == "seqsel") ? 1 : 0;
  return resolve(c, m, hw);
}

TEST(Memory, KorthikantiFigure1ParametersAndOptimizerPerGpu) {
  // Korthikanti et al. 2022 Figure 1 (first pipeline stage, TP = 8): weights + grads + optimizer of the
  // transformer layers at 18 bytes per parameter (the figure leaves the embedding out), GiB.
  const HardwareSpec hw = load_hardware("a100-80gb");
  const Efficiencies eff = testing::megatron_2021(hw);
  const auto runs = korthikanti_runs();
  int checked = 0;
  for (auto& row : read_calibration_csv("korthikanti2022_memory_fig1_fig7.csv")) {
    if (row["metric"] != "par_opt_GiB") continue;
    for (const auto& run : runs) {
      if (run.name != row["model"]) continue;
      const ParallelConfig c = with_mode(run.config, row["mode"], run.model, hw);
      const double layers = count_parameters(run.model).layers_total() / c.pp / c.tp;
      const MemoryBreakdown mem = model_state_bytes(layers, c.dp, c.zero, eff.state_bytes);
      const double gib = (mem.params + mem.grads + mem.optimizer) / double(1ull << 30);
      // Within 1 % of the figure (Calculon's published error on the same bars is 5.5-10.8 %).
      EXPECT_NEAR(gib / std::stod(row["paper_value"]), 1.0, 0.01) << run.name << " " << gib;
      // The whole first stage (with the embedding) is what memory_per_gpu() reports: more than the layers.
      EXPECT_GT(memory_per_gpu(run.model, hw, c, eff).params, mem.params);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 8);
}

TEST(Memory, KorthikantiFigure1ActivationsPerGpu) {
  // Korthikanti et al. 2022 Figure 1: activation memory of the first stage, no optimisation vs sequence
  // parallel + selective recompute (eqs. 2 and 6, interleaved penalty 1 + (p-1)/(pm)).
  const HardwareSpec hw = load_hardware("a100-80gb");
  const Efficiencies eff = testing::megatron_2021(hw);
  const auto runs = korthikanti_runs();
  int checked = 0;
  for (auto& row : read_calibration_csv("korthikanti2022_memory_fig1_fig7.csv")) {
    if (row["metric"] != "act_GiB") continue;
    for (const auto& run : runs) {
      if (run.name != row["model"]) continue;
      const ParallelConfig c = with_mode(run.config, row["mode"], run.model, hw);
      // The figure counts the transformer layers of the first stage.
      const double gib = layer_activation_bytes(run.model, c, eff.flash_attention) *
                         inflight_layer_activations(run.model, c) / double(1ull << 30);
      EXPECT_NEAR(gib / std::stod(row["paper_value"]), 1.0, 0.03)
          << run.name << " " << row["mode"] << " " << gib;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 8);
}

TEST(Memory, KorthikantiFigure7ActivationsRelativeToBaseline) {
  // Korthikanti et al. 2022 Figure 7: activation memory of each technique as % of the TP-only baseline.
  const HardwareSpec hw = load_hardware("a100-80gb");
  const auto runs = korthikanti_runs();
  int checked = 0;
  for (auto& row : read_calibration_csv("korthikanti2022_memory_fig1_fig7.csv")) {
    if (row["metric"] != "act_rel_pct") continue;
    for (const auto& run : runs) {
      if (run.name != row["model"]) continue;
      const double base =
          layer_activation_bytes(run.model, with_mode(run.config, "none", run.model, hw), false);
      const double mode =
          layer_activation_bytes(run.model, with_mode(run.config, row["mode"], run.model, hw), false);
      EXPECT_NEAR(100.0 * mode / base, std::stod(row["paper_value"]), 1.0) << run.name << " " << row["mode"];
      ++checked;
    }
  }
  EXPECT_EQ(checked, 16);
}

TEST(Memory, PipelineScheduleInFlightMicroBatches) {
  // 1F1B holds at most p micro-batches on the first stage, GPipe all m (Narayanan et al. 2021 §2.2.1), the
  // interleaved schedule p(1 + (p-1)/(pv)) (Korthikanti et al. 2022 §4.2.3).
  ModelSpec m = testing::megatron_gpt("t", 32, 4096, 32);
  ParallelConfig c;
  c.gpus = 8, c.tp = 1, c.pp = 8, c.dp = 1, c.cp = 1, c.ep = 1, c.micro_batch = 1, c.global_batch = 64,
  c.seq = 2048;
  c.zero = 0, c.virtual_stages = 1, c.sequence_parallel = 0;
  c.schedule = Schedule::k1F1B;
  EXPECT_DOUBLE_EQ(inflight_layer_activations(m, c), 4.0 * 8);
  c.schedule = Schedule::kGPipe;
  EXPECT_DOUBLE_EQ(inflight_layer_activations(m, c), 4.0 * 64);
  c.schedule = Schedule::kInterleaved, c.virtual_stages = 2;
  EXPECT_DOUBLE_EQ(inflight_layer_activations(m, c), 4.0 * 8 * (1 + 7.0 / 16));
}

TEST(Memory, FitsIsAFieldNotAnError) {
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c;
  c.gpus = 8;
  c = resolve(c, m, hw);
  const Prediction p = predict(m, hw, c, defaults_for(hw));
  EXPECT_FALSE(p.fits);
  EXPECT_GT(p.memory.total(), p.memory.capacity);
  EXPECT_GT(p.step_time_s, 0);
}

}  // namespace
}  // namespace meshscope::model
