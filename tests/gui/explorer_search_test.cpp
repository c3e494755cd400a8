// The Explorer's search (app/gui/explorer_search.hpp): layouts of equal step time merged into one row that
// says what varies, what would fit when nothing does, and the table as the Explorer shows it, searched on a
// worker thread behind a busy sign.
#include "app/gui/explorer_search.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "analysis/model/presets.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

ExplorerSearch search_for(const char* model_name, const char* hardware, int gpus) {
  const model::HardwareSpec hw = model::load_hardware(hardware);
  model::SearchOptions o;
  o.gpus = gpus;
  return run_explorer_search(model::load_model(model_name), hw, model::defaults_for(hw), o);
}

// Llama 3 8B on 8 H100: layouts that differ only where the step time does not (ZeRO stages whose collectives
// hide behind compute, for one) are one row; every row's members are equal within 0.05 %, and rows differ by
// more.
TEST(ExplorerSearch, EqualLayoutsAreOneRowThatSaysWhatVaries) {
  const ExplorerSearch s = search_for("llama3-8b", "h100-sxm", 8);
  ASSERT_TRUE(s.error.empty()) << s.error;
  ASSERT_FALSE(s.groups.empty());
  EXPECT_LE(s.groups.size(), 12u);
  std::size_t merged = 0;
  for (std::size_t g = 0; g < s.groups.size(); ++g) {
    const LayoutGroup& group = s.groups[g];
    const double first = s.result.top[group.first].step_time_s;
    for (std::size_t i = group.first; i < group.first + group.count; ++i)
      EXPECT_LE(std::abs(s.result.top[i].step_time_s - first), 5e-4 * first);
    if (g + 1 < s.groups.size()) {
      EXPECT_GT(s.result.top[s.groups[g + 1].first].step_time_s - first, 5e-4 * first);
    }
    if (group.count > 1) {
      ++merged;
      EXPECT_FALSE(group.varies.empty());
    }
  }
  EXPECT_GT(merged, 0u) << "no two layouts tie on this search: the test no longer tests merging";
  // Adjacent groups cover the ranked layouts without gaps.
  for (std::size_t g = 1; g < s.groups.size(); ++g)
    EXPECT_EQ(s.groups[g].first, s.groups[g - 1].first + s.groups[g - 1].count);
}

TEST(ExplorerSearch, WhatVariesIsNamedWithItsRange) {
  std::vector<model::Prediction> top(3);
  for (int i = 0; i < 3; ++i) {
    top[static_cast<std::size_t>(i)].step_time_s = 1.0;
    top[static_cast<std::size_t>(i)].fits = true;
    top[static_cast<std::size_t>(i)].config.tp = 2;
    top[static_cast<std::size_t>(i)].config.zero = i + 1;
  }
  top[2].config.recompute = model::Recompute::kSelective;
  const auto groups = group_equal_layouts(top, 5e-4, 12);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, 3u);
  EXPECT_EQ(groups[0].varies, "ZeRO 1-3, recompute none/selective");
}

// Llama 3 405B does not fit on 8 H100 at any ZeRO stage or recompute setting: the search says from how many
// GPUs it does, with the best layout there, which fits.
TEST(ExplorerSearch, WhenNothingFitsItSaysHowManyGpusWould) {
  const ExplorerSearch s = search_for("llama3-405b", "h100-sxm", 8);
  ASSERT_TRUE(s.error.empty()) << s.error;
  EXPECT_EQ(s.result.fitting, 0);
  ASSERT_GT(s.fits_from_gpus, 8);
  EXPECT_TRUE(s.fits_from_best.fits);
  EXPECT_EQ(s.fits_from_best.config.gpus, s.fits_from_gpus);
  // Half as many GPUs did not fit (the count is the smallest power-of-two multiple that does).
  const ExplorerSearch half = search_for("llama3-405b", "h100-sxm", s.fits_from_gpus / 2);
  EXPECT_EQ(half.result.fitting, 0);
}

// The View: a busy sign while the worker searches, then the table at the headline's global batch.
TEST(ExplorerSearch, TheExplorerSearchesBehindABusySignAtTheShownBatch) {
  test::NullImGui imgui(1600, 900);
  View view(test::options_for(Panel::kExplorer));
  imgui.frame(view);
  const std::string first = test::frame_text(view);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (view.explorer_searching() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    imgui.frame(view);
  }
  ASSERT_FALSE(view.explorer_searching());
  const std::string text = test::frame_text(view);
  ASSERT_NE(view.prediction(), nullptr);
  const model::ParallelConfig& shown = view.prediction()->config;
  const std::string batch = "at a global batch of " + std::to_string(shown.global_batch) + " x " +
                            std::to_string(shown.seq) + " tokens";
  EXPECT_NE(text.find(batch), std::string::npos) << text;
  EXPECT_EQ(text.find("searching the layouts"), std::string::npos) << text;
  // The first frames showed the busy sign (or the search was already back).
  EXPECT_TRUE(first.find("searching the layouts") != std::string::npos ||
              first.find(batch) != std::string::npos)
      << first;
}

}  // namespace
}  // namespace meshscope::gui
