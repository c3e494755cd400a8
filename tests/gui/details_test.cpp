// No-window tests of the timeline's details pane on real shared traces: what it shows of a selected CPU range
// that is a step (its step number comes from the rank's steps, not from the range record) and of a
// communication kernel (its collective's operation and who recorded it).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "analysis/measure/occupancy.hpp"
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

// TraceLens's H100 trace of Qwen1.5-0.5B inference (Kineto with shapes and the device's properties): a GEMM
// kernel shows its theoretical occupancy on the H100 (compute capability 9.0, 132 SMs) and its share of the
// operator's FLOPs; the operator that launched it shows its recorded input shapes and types and its work.
TEST(GuiDetails, AKernelShowsItsOccupancyAndWorkAndItsOperatorItsShapes) {
  auto loaded = shared("tracelens/h100_qwen1.5_0.5b_inference.json.gz");
  ASSERT_TRUE(loaded);
  ASSERT_TRUE(loaded->measured) << loaded->measured_error;
  const Profile& profile = *loaded->profile;
  const Rank& rank = profile.ranks()[0];
  const measure::ProfileWork& work = loaded->measured->work;
  // The longest kernel carrying a GEMM operator's work.
  const measure::KernelShare* chosen = nullptr;
  for (const measure::KernelShare& share : work.kernels) {
    if (work.ops[share.op].category != measure::WorkCategory::kGemm) continue;
    if (!chosen || rank.activities[share.activity].duration() > rank.activities[chosen->activity].duration())
      chosen = &share;
  }
  ASSERT_TRUE(chosen);
  const Activity& a = rank.activities[chosen->activity];
  ASSERT_NE(a.detail, kNoDetail);
  const KernelDetail k = rank.kernels[a.detail];
  const measure::Occupancy o = measure::theoretical_occupancy(k, *measure::sm_limits(9, 0), 132);
  ASSERT_GT(o.blocks_per_sm, 0);
  const measure::CountedOp op = work.ops[chosen->op];
  // The operator's range: its external id and name.
  std::uint32_t range = 0;
  while (range < rank.ranges.size() && !(rank.ranges[range].external_id == op.external_id &&
                                         profile.str(rank.ranges[range].name) == op.name))
    ++range;
  ASSERT_LT(range, rank.ranges.size());
  const std::uint32_t activity = chosen->activity;
  auto loaded_again = shared("tracelens/h100_qwen1.5_0.5b_inference.json.gz");
  ASSERT_TRUE(loaded_again);

  const std::string kernel_text = details_of(std::move(loaded), {EventKind::kActivity, 0, activity});
  char occupancy[128];
  std::snprintf(occupancy, sizeof occupancy, "%.0f%% theoretical: %d block(s), %d of 64 warps per SM",
                100 * o.fraction, o.blocks_per_sm, o.warps_per_sm);
  EXPECT_NE(kernel_text.find(occupancy), std::string::npos) << occupancy << "\n" << kernel_text;
  EXPECT_NE(kernel_text.find("over 132 SMs"), std::string::npos) << kernel_text;
  EXPECT_NE(kernel_text.find("(its share of " + op.name + "'s)"), std::string::npos) << kernel_text;

  const std::string op_text = details_of(std::move(loaded_again), {EventKind::kRange, 0, range});
  EXPECT_NE(op_text.find(op.input_dims), std::string::npos) << op.input_dims << "\n" << op_text;
  EXPECT_NE(op_text.find(op.input_types), std::string::npos) << op_text;
  EXPECT_NE(op_text.find("gemm, "), std::string::npos) << op_text;
}

// An operator without a work formula, and one inside a counted operator, still show their recorded shapes and
// types (Perfetto shows every argument): read from the profile's op_work once the operator is selected.
TEST(GuiDetails, EveryOperatorShowsItsRecordedShapes) {
  for (const std::string wanted : {"aten::cat", "aten::addmm"}) {
    auto loaded = shared("tracelens/h100_qwen1.5_0.5b_inference.json.gz");
    ASSERT_TRUE(loaded);
    ASSERT_TRUE(loaded->measured) << loaded->measured_error;
    const Profile& profile = *loaded->profile;
    const Rank& rank = profile.ranks()[0];
    std::uint32_t range = 0;
    while (range < rank.ranges.size() && profile.str(rank.ranges[range].name) != wanted) ++range;
    ASSERT_LT(range, rank.ranges.size()) << wanted;
    for (const measure::CountedOp& op : loaded->measured->work.ops)
      ASSERT_NE(op.name, wanted) << "a counted operator: its shapes come from its work";
    const std::string text = details_of(std::move(loaded), {EventKind::kRange, 0, range});
    EXPECT_NE(text.find("| input dims | [["), std::string::npos) << text;
    EXPECT_NE(text.find("| input types | [\""), std::string::npos) << text;
  }
}

// Ctrl+C copies every field of the selected event, whole, as "key: value" lines (the table may cut a long
// value to its column; the clipboard gets all of it).
TEST(GuiDetails, CtrlCCopiesEveryFieldWhole) {
  auto loaded = shared("tracelens/h100_qwen1.5_0.5b_inference.json.gz");
  ASSERT_TRUE(loaded);
  const Rank& rank = loaded->profile->ranks()[0];
  // A kernel whose launch call the trace holds (its external id is the call's).
  const auto& launches = loaded->ranks[0]->launches;
  std::uint32_t index = 0;
  while (index < rank.activities.size() && (rank.activities[index].kind != ActivityKind::kKernel ||
                                            launches.api_of_activity[index] == measure::kNoIndex))
    ++index;
  ASSERT_LT(index, rank.activities.size());
  const std::string name = loaded->profile->str(rank.activities[index].name);
  const std::int64_t external_id = rank.api_calls[launches.api_of_activity[index]].external_id;
  ASSERT_NE(external_id, kNull);
  NullImGui imgui(1024, 640);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(loaded));
  view.select_event({EventKind::kActivity, 0, index});
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  ImGuiIO& io = ImGui::GetIO();
  io.KeyCtrl = true;
  io.KeysDown['C'] = true;
  imgui.frame(view);
  io.KeysDown['C'] = false;
  io.KeyCtrl = false;
  imgui.frame(view);
  const std::string copied = ImGui::GetClipboardText() ? ImGui::GetClipboardText() : "";
  EXPECT_EQ(copied.rfind("name: " + name + "\n", 0), 0u) << copied;
  for (const char* key :
       {"duration: ", "kind: kernel, ", "grid: [", "block: [", "registers: ", "occupancy: "})
    EXPECT_NE(copied.find(key), std::string::npos) << key << "\n" << copied;
  EXPECT_NE(copied.find("external id: " + std::to_string(external_id) + " (of its launch call)"),
            std::string::npos)
      << copied;
}

// HTA's trace_filter ranks describe no device: occupancy reads "unknown" and says why.
TEST(GuiDetails, OccupancyIsUnknownWithoutTheDevice) {
  auto loaded = shared("hta/trace_filter");
  ASSERT_TRUE(loaded);
  const Rank& rank = loaded->profile->ranks()[0];
  ASSERT_TRUE(rank.devices.empty());
  std::uint32_t index = 0;
  while (index < rank.activities.size() &&
         (rank.activities[index].kind != ActivityKind::kKernel || rank.activities[index].detail == kNoDetail))
    ++index;
  ASSERT_LT(index, rank.activities.size());
  const std::string text = details_of(std::move(loaded), {EventKind::kActivity, 0, index});
  EXPECT_NE(text.find("unknown (the profile does not describe this GPU)"), std::string::npos) << text;
}

}  // namespace
}  // namespace meshscope::gui
