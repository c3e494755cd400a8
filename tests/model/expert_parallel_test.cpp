// Expert parallelism as Megatron-Core runs it: the expert layers fold their own grid (expert tensor parallel
// x expert parallel x expert data parallel) out of a stage's tp x cp x dp GPUs (Liu et al. 2025, "MoE
// Parallel Folding", arXiv:2504.14960 §3; Megatron-Core parallel_state.initialize_model_parallel), and MoE
// layers that alternate with dense ones (Megatron-Core --moe-layer-freq).
#include <gtest/gtest.h>

#include "analysis/model/architecture.hpp"
#include "analysis/model/memory.hpp"
#include "analysis/model/roofline.hpp"
#include "analysis/model/search.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

ParallelConfig layout(int gpus, int tp, int pp, int ep, int etp) {
  ParallelConfig c;
  c.gpus = gpus, c.tp = tp, c.pp = pp, c.ep = ep, c.etp = etp;
  return c;
}

TEST(ExpertParallel, ExpertLayoutsAreFoldedOutOfTheStageNotCarvedOutOfDataParallel) {
  // DeepSeek-V3 on 256 GPUs, TP 2 x PP 8 (DP 16): Megatron-Core accepts EP 32 with expert TP 1, since the
  // expert grid regroups the stage's 32 GPUs (Megatron-Core only requires world % (pp x etp x ep) == 0).
  const ModelSpec m = load_model("deepseek-v3");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c = layout(256, 2, 8, 32, 1);
  c.global_batch = 1024;
  const ParallelConfig r = resolve(c, m, hw);
  EXPECT_EQ(check_layout(r, m, hw), "");
  EXPECT_EQ(r.expert_data_parallel(), 1);  // 2 x 16 / (1 x 32)
  // Expert TP 2 would need 64 of the stage's 32 GPUs.
  c.etp = 2;
  try {
    resolve(c, m, hw);
    ADD_FAILURE() << "EP 32 x expert TP 2 on a stage of 32 GPUs was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(),
                 "--ep 32 x --etp 2 = 64 does not divide --tp 2 x --cp 1 x --dp 16 = 32: the expert layers "
                 "regroup the GPUs of a pipeline stage; pass --etp 1");
  }
  // Left unset, expert TP is TP: the refusal says so and what fits (the layout of the Megatron-Core recipe,
  // which sets expert TP 1).
  c.etp = 0;
  try {
    resolve(c, m, hw);
    ADD_FAILURE() << "EP 32 x expert TP 2 (as TP) on a stage of 32 GPUs was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(),
                 "--ep 32 x --etp 2 = 64 does not divide --tp 2 x --cp 1 x --dp 16 = 32: the expert layers "
                 "regroup the GPUs of a pipeline stage; --etp is --tp unless given: pass --etp 1");
  }
  // Unset, expert TP is TP (Megatron-Core's default) and is said to be a default; a dense model has none.
  c.etp = 0, c.ep = 16;
  const ParallelConfig d = resolve(c, m, hw);
  EXPECT_EQ(d.etp, 2);
  EXPECT_NE(std::find(d.defaulted.begin(), d.defaulted.end(), "etp"), d.defaulted.end());
  const ModelSpec dense = load_model("llama3-70b");
  ParallelConfig dr = resolve(layout(64, 8, 1, 1, 0), dense, hw);
  EXPECT_EQ(std::find(dr.defaulted.begin(), dr.defaulted.end(), "etp"), dr.defaulted.end());
  dr.etp = 1;
  EXPECT_EQ(check_layout(dr, dense, hw), "--etp 1 needs a mixture-of-experts model (--experts > 1)");
}

TEST(ExpertParallel, ExpertWeightsAreSplitOverExpertTpTimesEp) {
  // Mixtral 8x7B (Jiang et al. 2024 Table 1: 32 layers, hidden 4096, 8 experts of SwiGLU width 14336): its
  // experts hold 32 x 8 x 3 x 4096 x 14336 = 45.10 B parameters. On 64 GPUs with TP 2 and EP 8, expert TP 1
  // keeps 1/8 of them on each GPU, expert TP 2 1/16: the difference is 45.10 B / 16 BF16 weights. The Adam
  // state of the experts is sharded over the expert-data-parallel group either way, so all 64 GPUs share it.
  const ModelSpec m = load_model("mixtral-8x7b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  const double expert_params = 32.0 * 8 * 3 * 4096 * 14336;
  const ParallelConfig whole = resolve(layout(64, 2, 1, 8, 1), m, hw);
  const ParallelConfig split = resolve(layout(64, 2, 1, 8, 2), m, hw);
  EXPECT_EQ(whole.expert_data_parallel(), 8);
  EXPECT_EQ(split.expert_data_parallel(), 4);
  const MemoryBreakdown a = memory_per_gpu(m, hw, whole, eff), b = memory_per_gpu(m, hw, split, eff);
  EXPECT_NEAR(a.params - b.params, expert_params / 16 * 2, 1e-6 * a.params);
  EXPECT_NEAR(a.optimizer, b.optimizer, 1e-9 * a.optimizer);
}

TEST(ExpertParallel, TheExpertGridPutsEpGroupsExpertTpApart) {
  // Qwen3-30B-A3B (48 MoE layers of 128 experts, top 8) on 64 H100 (8 per NVLink domain), TP 8, EP 8. With
  // expert TP 1 the EP group is 8 neighbouring GPUs (one node) and each local expert's GEMM has 4096 x 8 /
  // 128 = 256 rows per sequence of 4096 tokens (one EP group holds one TP group's tokens); with expert TP 8
  // the EP group spans 8 nodes, each expert is 1/8 as wide with 8 x the rows, and the dispatched tokens are
  // all-gathered over the expert TP group.
  const ModelSpec m = load_model("qwen3-30b-a3b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  const ParallelConfig whole = resolve(layout(64, 8, 1, 8, 1), m, hw);
  const ParallelConfig split = resolve(layout(64, 8, 1, 8, 8), m, hw);
  EXPECT_DOUBLE_EQ(expert_rows_per_expert(m, whole, 4096), 256);
  EXPECT_DOUBLE_EQ(expert_rows_per_expert(m, split, 4096), 2048);
  const Prediction p1 = predict(m, hw, whole, eff, true), p8 = predict(m, hw, split, eff, true);
  EXPECT_GT(p1.comm.ep, 0);
  EXPECT_GT(p8.comm.ep, 3 * p1.comm.ep);  // across nodes, and the gathers on top
  // The expert GEMMs do the same FLOPs either way; the roofline shows their shapes.
  auto up = [&](const ParallelConfig& c) {
    for (const RooflineOperation& op : roofline_operations(m, hw, eff, c))
      if (op.name == "expert MLP up GEMM") return op;
    return RooflineOperation{};
  };
  EXPECT_NEAR(up(whole).flops, up(split).flops, 1e-9 * up(whole).flops);
  bool gather = false;
  for (const RooflineOperation& op : roofline_operations(m, hw, eff, split))
    gather = gather || op.name == "expert-TP all-gather (dispatch)";
  EXPECT_TRUE(gather);
  bool explained = false;
  for (const auto& t : p8.terms)
    explained =
        explained || t.name == "MoE dispatch + combine all-to-all, expert-TP all-gather + reduce-scatter";
  EXPECT_TRUE(explained);
}

TEST(ExpertParallel, MoeLayersCanAlternateWithDenseOnes) {
  // Llama 4 Maverick (Meta 2025: 17 B active, 400 B total): 48 layers, MoE (128 experts, top 1, one shared
  // expert) every other layer (interleave_moe_layer_step 2), a dense SwiGLU MLP of 16384 in the others.
  const ModelSpec m = load_model("llama4-maverick");
  const ParameterCounts p = count_parameters(m);
  EXPECT_EQ(p.moe_layer_count, 24);
  EXPECT_EQ(p.dense_layer_count, 24);
  EXPECT_NEAR(p.total() / 400e9, 1.0, 0.01) << p.total() / 1e9;
  EXPECT_NEAR(p.active() / 17e9, 1.0, 0.02) << p.active() / 1e9;
  EXPECT_EQ(m.moe_layers_between(0, 48), 24);
  EXPECT_EQ(m.moe_layers_between(1, 4), 2);  // layers 2 and 4 of 1-4
  EXPECT_TRUE(m.is_moe_layer(0));
  EXPECT_FALSE(m.is_moe_layer(1));
  // DeepSeek-V3's first three dense layers, then every layer.
  const ModelSpec ds = load_model("deepseek-v3");
  EXPECT_EQ(ds.moe_layers_between(0, 8), 5);
  EXPECT_EQ(ds.moe_layers_between(0, 61), 58);
  ModelSpec bad = m;
  bad.moe_layer_freq = 0;
  EXPECT_THROW(check_model(bad), InvalidInput);
}

TEST(ExpertParallel, MultiTokenPredictionAddsALayerAndAnOutputHeadOnTheLastStage) {
  // DeepSeek-V3 §2.2: one MTP module (D = 1) is a transformer block of the model's own kind, a projection of
  // the concatenated 2h -> h, and the shared output head. On one stage its cost is one more MoE layer, the
  // projection and a second output-head pass: more than a 62nd layer alone.
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  ModelSpec none = load_model("deepseek-v3");
  EXPECT_EQ(none.mtp_layers, 1);  // the preset trains as the report did
  none.mtp_layers = 0;
  ModelSpec mtp = none, deeper = none;
  mtp.mtp_layers = 1;
  deeper.layers = 62;
  ParallelConfig c = layout(256, 1, 1, 64, 1);
  c.global_batch = 1024;
  const Prediction p0 = predict(none, hw, resolve(c, none, hw), eff);
  const Prediction p1 = predict(mtp, hw, resolve(c, mtp, hw), eff);
  const Prediction pd = predict(deeper, hw, resolve(c, deeper, hw), eff);
  const double layer = pd.time.compute - p0.time.compute;
  EXPECT_GT(layer, 0);
  EXPECT_GT(p1.time.compute - p0.time.compute, layer);
  EXPECT_GT(p1.comm.ep, p0.comm.ep);  // the MTP layer's experts dispatch and combine too
  EXPECT_GT(p1.memory.params, p0.memory.params);
}

TEST(ExpertParallel, SearchOffersWholeExpertsAcrossTensorParallelRanks) {
  // The Megatron-Bridge MoE recipes run expert TP 1 with EP spanning TP ranks; search considers those
  // layouts and expert TP = TP, each valid, and its ranking does not depend on how threads split the work.
  // Every layout kept (top above the count, those that do not fit included) lists all that were considered.
  const ModelSpec m = load_model("qwen3-30b-a3b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  SearchOptions o;
  o.gpus = 64, o.global_batch = 512, o.top = 1'000'000, o.keep_not_fitting = true;
  const SearchResult a = search(m, hw, eff, o), b = search(m, hw, eff, o);
  ASSERT_EQ(static_cast<std::int64_t>(a.top.size()), a.evaluated);
  ASSERT_EQ(a.top.size(), b.top.size());
  bool whole_experts_across_tp = false, split_experts = false;
  for (size_t i = 0; i < a.top.size(); ++i) {
    const ParallelConfig& c = a.top[i].config;
    if (i % 97 == 0) {
      EXPECT_EQ(check_layout(c, m, hw), "") << i;
    }
    whole_experts_across_tp = whole_experts_across_tp || (c.tp > 1 && c.etp == 1 && c.ep > c.dp);
    split_experts = split_experts || (c.tp > 1 && c.etp == c.tp && c.ep > 1);
    ASSERT_EQ(c.tp, b.top[i].config.tp) << i;
    ASSERT_EQ(c.ep, b.top[i].config.ep) << i;
    ASSERT_EQ(c.etp, b.top[i].config.etp) << i;
    ASSERT_EQ(c.cp, b.top[i].config.cp) << i;
    ASSERT_EQ(c.micro_batch, b.top[i].config.micro_batch) << i;
    ASSERT_EQ(a.top[i].step_time_s, b.top[i].step_time_s) << i;
  }
  EXPECT_TRUE(whole_experts_across_tp);
  EXPECT_TRUE(split_experts);
}

// Megatron-Core's combined 1F1B (core.pipeline_parallel.combined_1f1b): without pipelining, of 4
// micro-batches F0 runs alone, then (F1, B0), (F2, B1), (F3, B2), then B3 alone: 3 of 4 paired. Interleaved
// on 4 stages with 2 model chunks and 8 micro-batches, stage 0 runs its 2 x 3 + 1 x 4 = 10 warm-up forwards
// of 16 chunks alone (Megatron-Core's interleaved warm-up), the last stage 4.
TEST(ExpertParallel, CombinedOneFOneBPairsAllButTheWarmUpAndCoolDown) {
  EXPECT_DOUBLE_EQ(combined_1f1b_share(1, 1, 4, 0, 0), 0.75);
  EXPECT_DOUBLE_EQ(combined_1f1b_share(4, 2, 8, 0, 0), 6.0 / 16.0);
  EXPECT_DOUBLE_EQ(combined_1f1b_share(4, 2, 8, 0, 3), 12.0 / 16.0);
  // Paired, a forward's 3 ms of all-to-all hides behind the other micro-batch's 5 ms backward, and the
  // backward's 3 ms leaves 1 ms beyond a 2 ms forward; unpaired, all 6 ms are exposed.
  EXPECT_DOUBLE_EQ(combined_1f1b_exposed(3e-3, 3e-3, 2e-3, 5e-3, 1.0), 1e-3);
  EXPECT_DOUBLE_EQ(combined_1f1b_exposed(3e-3, 3e-3, 2e-3, 5e-3, 0.0), 6e-3);
  EXPECT_DOUBLE_EQ(combined_1f1b_exposed(3e-3, 3e-3, 2e-3, 5e-3, 0.75), 0.25 * 6e-3 + 0.75 * 1e-3);
}

TEST(ExpertParallel, CombinedOneFOneBHidesAllToAllsWhereMegatronCoreRunsIt) {
  // DeepSeek-V3 on 256 H100, TP 1, PP 8 interleaved (v 4), EP 32 across 4 nodes.
  const ModelSpec m = load_model("deepseek-v3");
  const HardwareSpec hw = load_hardware("h100-sxm");
  ParallelConfig c = layout(256, 1, 8, 32, 1);
  c.global_batch = 1024, c.schedule_set = true, c.schedule = Schedule::kInterleaved, c.virtual_stages = 4;
  c.first_stage_layers = 5, c.last_stage_layers = 8;
  const ParallelConfig r = resolve(c, m, hw);
  Efficiencies plain = defaults_for(hw), overlapped = plain;
  overlapped.moe_a2a_overlap = true;
  const Prediction a = predict(m, hw, r, plain), b = predict(m, hw, r, overlapped);
  EXPECT_GT(a.time.ep_exposed, 0);
  EXPECT_LT(b.time.ep_exposed, a.time.ep_exposed);
  EXPECT_DOUBLE_EQ(b.comm.ep, a.comm.ep);  // the same all-to-alls, fewer exposed
  // Not with 1F1B across stages, nor without expert parallelism.
  ParallelConfig plain_1f1b = c;
  plain_1f1b.schedule = Schedule::k1F1B, plain_1f1b.virtual_stages = 1;
  EXPECT_THROW(predict(m, hw, resolve(plain_1f1b, m, hw), overlapped), InvalidInput);
  EXPECT_EQ(check_moe_a2a_overlap(r, load_model("llama3-8b"), overlapped),
            "--moe-a2a-overlap hides expert all-to-alls: it needs a mixture-of-experts model with --ep > 1");
}

}  // namespace
}  // namespace meshscope::model
