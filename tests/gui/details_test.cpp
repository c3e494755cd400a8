// No-window tests of the timeline's details pane on real shared traces: what it shows of a selected CPU range
// that is a step (its step number comes from the rank's steps, not from the range record) and of a
// communication kernel (its collective's operation and who recorded it).
#include <gtest/gtest.h>

#include <string>

#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

using test::frame_text;
using test::NullImGui;
using test::options_for;

std::unique_ptr<LoadedProfile> shared(const std::string& trace) {
  const auto msdb = test::imported(test::shared_trace(trace));
  return msdb.empty() ? nullptr : load_profile(msdb);
}

// The details text of EVENT selected in a view of LOADED.
std::string details_of(std::unique_ptr<LoadedProfile> loaded, const EventRef& event) {
  NullImGui imgui(1600, 1000);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(loaded));
  view.select_event(event);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  return frame_text(view);
}

// ResNet-50 recorded with the PyTorch profiler: ProfilerStep#5 to #10.
TEST(GuiDetails, AStepRangeShowsItsStepNumber) {
  auto loaded = shared("kineto/resnet50_num_workers_0");
  ASSERT_TRUE(loaded);
  const Rank& rank = loaded->profile->ranks()[0];
  ASSERT_GE(rank.steps.size(), 2u);
  const std::int64_t number = rank.steps[1].number, range_id = rank.steps[1].range_id;
  std::uint32_t index = 0;
  while (index < rank.ranges.size() && rank.ranges[index].id != range_id) ++index;
  ASSERT_LT(index, rank.ranges.size());
  ASSERT_EQ(rank.ranges[index].kind, RangeKind::kStep);
  // (The profile goes with the view: nothing of it is read after this.)
  const std::string text = details_of(std::move(loaded), {EventKind::kRange, 0, index});
  const std::string name = "ProfilerStep#" + std::to_string(number);
  EXPECT_NE(text.find(name), std::string::npos);
  const auto kind = text.find("step, depth 0");
  ASSERT_NE(kind, std::string::npos) << text;
  // The step field comes after the ids: its label, then the number.
  const auto field = text.find("step", text.find("id, external id", kind));
  ASSERT_NE(field, std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(number), field), std::string::npos);
}

// Two ranks of HTA's 128-rank job: NCCL kernels with Kineto's collective metadata.
TEST(GuiDetails, ACommunicationKernelNamesItsCollectiveAndItsSource) {
  auto loaded = shared("hta/trace_filter");
  ASSERT_TRUE(loaded);
  const Profile& profile = *loaded->profile;
  const Rank& rank = profile.ranks()[0];
  std::uint32_t index = 0;
  while (index < rank.activities.size() && rank.activities[index].collective < 0) ++index;
  ASSERT_LT(index, rank.activities.size()) << "no kernel linked to a collective";
  const Collective& c = rank.collectives[static_cast<std::size_t>(rank.activities[index].collective)];
  EXPECT_FALSE(profile.str(c.source).empty());
  // Copied: the profile goes with the view.
  const std::string expected = profile.str(c.op) + " (" + profile.str(c.source) + ")";
  const std::string text = details_of(std::move(loaded), {EventKind::kActivity, 0, index});
  EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
}

}  // namespace
}  // namespace meshscope::gui
