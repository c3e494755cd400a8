// What the Explorer's layout controls step through: divisors, node multiples, logarithmic grids, and each
// value checked against the rest of the layout with resolve().
#include "app/gui/explorer_steps.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/model/presets.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

std::vector<int> values(const std::vector<LayoutStep>& steps, bool valid_only) {
  std::vector<int> out;
  for (const auto& s : steps) {
    if (!valid_only || s.problem.empty()) out.push_back(s.value);
  }
  return out;
}

TEST(ExplorerSteps, Grids) {
  EXPECT_EQ(divisors(12), (std::vector<int>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(log_multiples(8, 100), (std::vector<int>{8, 16, 24, 32, 48, 64, 96}));
  EXPECT_EQ(log_multiples(1, 6), (std::vector<int>{1, 2, 3, 4, 6}));
}

// A resolved layout (a search's result) applied to the controls and read back resolves to itself.
TEST(ExplorerSteps, AResolvedLayoutReadsBackThroughTheControls) {
  const model::ModelSpec m = model::load_model("llama3-8b");
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  model::ParallelConfig in = explorer_layout();
  in.gpus = 16;
  in.tp = 2;
  in.pp = 2;
  in.micro_batch = 2;
  in.recompute = model::Recompute::kSelective;
  const model::ParallelConfig resolved = model::resolve(layout_request(in), m, hw);
  const model::ParallelConfig back = controls_of(resolved);
  EXPECT_EQ(back.dp, 4);
  EXPECT_EQ(back.etp, 0);  // as TP
  EXPECT_EQ(controls_of(model::resolve(layout_request(back), m, hw)), back);
}

TEST(ExplorerSteps, TensorParallelStepsThroughDivisorsOfTheHeadsThatFitTheLayout) {
  const model::ModelSpec m = model::load_model("llama3-8b");  // 32 heads, 8 KV heads
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  model::ParallelConfig in = explorer_layout();
  in.gpus = 8;
  in.tp = 2;
  const auto steps = layout_steps(LayoutField::kTp, in, m, hw);
  for (const auto& s : steps) EXPECT_EQ(m.heads % s.value, 0) << s.value;
  EXPECT_EQ(values(steps, true), (std::vector<int>{1, 2, 4, 8}));
  // TP 3 or 27 is never offered; a typed TP 3 shows as the current value with resolve()'s reason.
  in.tp = 3;
  const auto typed = layout_steps(LayoutField::kTp, in, m, hw);
  const auto it = std::find_if(typed.begin(), typed.end(), [](const LayoutStep& s) { return s.value == 3; });
  ASSERT_NE(it, typed.end());
  EXPECT_NE(it->problem.find("--tp 3"), std::string::npos) << it->problem;
}

// Expert tensor parallelism (MoE): "as TP" (0) and the divisors of an expert's FFN width a node holds; the
// layout Megatron-Core folds — EP x ETP of the stage's TP x CP x DP GPUs — decides which are valid, and the
// prediction follows the control. Qwen3-30B-A3B: 128 experts of FFN 768; on 8 H100 with TP 2, EP 8 needs ETP
// 1 (8 x 2 > 8).
TEST(ExplorerSteps, ExpertTensorParallelFoldsWithExpertParallel) {
  const model::ModelSpec m = model::load_model("qwen3-30b-a3b");
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  model::ParallelConfig in = explorer_layout();
  in.gpus = 8;
  in.tp = 2;
  in.ep = 8;
  const auto steps = layout_steps(LayoutField::kEtp, in, m, hw);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front().value, 0);
  for (const auto& s : steps) {
    if (s.value > 0) {
      EXPECT_EQ(m.moe_ffn % s.value, 0) << s.value;
    }
  }
  EXPECT_EQ(values(steps, true), (std::vector<int>{1})) << "only ETP 1 folds EP 8 into 8 GPUs";
  const auto as_tp =
      std::find_if(steps.begin(), steps.end(), [](const LayoutStep& s) { return s.value == 0; });
  EXPECT_NE(as_tp->problem.find("etp"), std::string::npos) << as_tp->problem;
  // The View predicts with the ETP the control holds.
  test::NullImGui imgui(1600, 900);
  View view(test::options_for(Panel::kExplorer));
  view.configure_explorer("qwen3-30b-a3b", 0, 0, 0, 0, 8, 2, 0);
  view.set_layout(8, 2, 1, 1, 8, 1);
  imgui.frame(view);
  ASSERT_NE(view.prediction(), nullptr);
  EXPECT_EQ(view.prediction()->config.expert_tp(), 1);
  EXPECT_EQ(view.prediction()->config.ep, 8);
}

TEST(ExplorerSteps, GpusStepThroughNodeMultiplesOnALogarithmicGrid) {
  const model::ModelSpec m = model::load_model("llama3-70b");
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");  // 8 GPUs per node
  model::ParallelConfig in = explorer_layout();
  in.gpus = 64;
  in.tp = 8;
  const auto all = values(layout_steps(LayoutField::kGpus, in, m, hw), false);
  for (int g : all) EXPECT_TRUE(g < 8 || g % 8 == 0) << g;
  EXPECT_TRUE(std::find(all.begin(), all.end(), 603) == all.end());
  EXPECT_LT(all.size(), 40u) << "a logarithmic grid, not every multiple up to 32768";
  EXPECT_EQ(all.back(), 32768);
  // With TP 8, fewer than 8 GPUs cannot hold the layout: those are offered but marked invalid.
  for (const auto& s : layout_steps(LayoutField::kGpus, in, m, hw)) {
    if (s.value < 8) {
      EXPECT_FALSE(s.problem.empty()) << s.value;
    }
    if (s.value >= 8) {
      EXPECT_TRUE(s.problem.empty()) << s.value << ": " << s.problem;
    }
  }
}

TEST(ExplorerSteps, BatchStepsThroughMultiplesOfDataParallelTimesMicroBatch) {
  const model::ModelSpec m = model::load_model("llama3-8b");
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  model::ParallelConfig in = explorer_layout();
  in.gpus = 16;
  in.tp = 2;
  in.micro_batch = 2;  // dp = 8 -> unit 16
  const auto steps = layout_steps(LayoutField::kGlobalBatch, in, m, hw);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front().value, 0) << "model default first";
  for (const auto& s : steps) {
    if (s.value > 0) {
      EXPECT_EQ(s.value % 16, 0) << s.value;
    }
    EXPECT_TRUE(s.problem.empty()) << s.value << ": " << s.problem;
  }
}

TEST(ExplorerSteps, ExpertParallelOnlyForMixtureOfExperts) {
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  model::ParallelConfig in = explorer_layout();
  in.gpus = 8;
  EXPECT_EQ(values(layout_steps(LayoutField::kEp, in, model::load_model("llama3-8b"), hw), false),
            (std::vector<int>{1}));
  const model::ModelSpec moe = model::load_model("mixtral-8x7b");
  const auto ep = layout_steps(LayoutField::kEp, in, moe, hw);
  EXPECT_EQ(values(ep, false), (std::vector<int>{1, 2, 4, 8}));
  for (const auto& s : ep) EXPECT_TRUE(s.problem.empty()) << s.value << ": " << s.problem;
}

TEST(ExplorerSteps, PipelineStagesAreLayerCompatibleAndFitTheGpus) {
  const model::ModelSpec m = model::load_model("llama3-8b");  // 32 layers
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  model::ParallelConfig in = explorer_layout();
  in.gpus = 8;
  const auto steps = layout_steps(LayoutField::kPp, in, m, hw);
  for (const auto& s : steps) {
    EXPECT_LE(s.value, m.layers);
    if (s.problem.empty()) {
      EXPECT_EQ(8 % s.value, 0) << s.value;
    }
  }
  EXPECT_EQ(values(steps, true), (std::vector<int>{1, 2, 4, 8}));
}

}  // namespace
}  // namespace meshscope::gui
