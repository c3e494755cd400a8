// No-window harness: every panel's frame is built on real shared traces (imported with meshscope import),
// with the null ImGui backend. Checks that each panel draws real data, that the timeline never hides an event
// at full zoom-out, that zoom input moves the window, and that the Explorer explains invalid layouts.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

using test::imported;
using test::NullImGui;

struct TraceCase {
  const char* name;
  std::filesystem::path path;
};

std::vector<TraceCase> traces() {
  return {{"sample_job", test::sample_job()},
          {"hta_trace_filter", test::shared_trace("hta/trace_filter")},
          {"hta_trace_diff", test::shared_trace("hta/trace_diff/test/test.json.gz")},
          {"tracelens_mi300", test::shared_trace("tracelens/mi300_resnet_act_checkpoint.json.gz")}};
}

std::unique_ptr<LoadedProfile> load(const std::filesystem::path& trace) {
  if (!std::filesystem::exists(trace)) return nullptr;
  const auto msdb = imported(trace);
  if (msdb.empty()) return nullptr;
  return load_profile(msdb);
}

class PanelOnTrace : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(PanelOnTrace, DrawsRealData) {
  const auto [trace_index, panel_index] = GetParam();
  const TraceCase trace = traces()[static_cast<std::size_t>(trace_index)];
  auto loaded = load(trace.path);
  if (!loaded) GTEST_SKIP() << trace.path << " is not available";
  ASSERT_GT(loaded->profile->ranks().size(), 0u);
  NullImGui imgui(1600, 900);
  ViewOptions options;
  options.remember_recent = false;
  options.panel = static_cast<Panel>(panel_index);
  options.panel_set = true;
  View view(options);
  view.set_profile(std::move(loaded));
  int vertices = 0;
  for (int i = 0; i < 4; ++i) vertices = imgui.frame(view);
  EXPECT_EQ(view.panel(), static_cast<Panel>(panel_index));
  EXPECT_GT(vertices, 1000) << "the panel drew next to nothing";
  if (view.panel() == Panel::kTimeline) {
    EXPECT_GT(view.last_frame_items(), 0u);
    EXPECT_GE(view.last_frame_events(), view.last_frame_items());
  }
  if (view.panel() == Panel::kExplorer || view.panel() == Panel::kRoofline ||
      view.panel() == Panel::kPlanner) {
    EXPECT_NE(view.prediction(), nullptr) << view.layout_error();
  }
}

INSTANTIATE_TEST_SUITE_P(Gui, PanelOnTrace,
                         ::testing::Combine(::testing::Range(0, 4), ::testing::Range(0, 5)),
                         [](const auto& info) {
                           return std::string(
                                      traces()[static_cast<std::size_t>(std::get<0>(info.param))].name) +
                                  "_" + to_string(static_cast<Panel>(std::get<1>(info.param)));
                         });

TEST(GuiTimeline, FullZoomOutAccountsForEveryGpuEvent) {
  for (const auto& trace : traces()) {
    auto loaded = load(trace.path);
    if (!loaded) continue;
    std::size_t activities = 0;
    for (const auto& rank : loaded->profile->ranks()) activities += rank.activities.size();
    // Tall enough that every row of every (open) rank is on screen; folded items carry their counts.
    NullImGui imgui(1600, 20000);
    ViewOptions options;
    options.remember_recent = false;
    options.panel_set = true;
    View view(options);
    view.set_profile(std::move(loaded));
    for (int i = 0; i < 3; ++i) imgui.frame(view);
    EXPECT_GE(view.last_frame_events(), activities) << trace.name;
    EXPECT_LT(view.last_frame_items(), activities + 100000) << trace.name;
  }
}

// The OS's record of each thread of an Nsight export: a row per thread above its own ranges, and every
// on-CPU interval and CPU sample accounted for at full zoom-out (folds and ticks carry their counts).
TEST(GuiTimeline, OsThreadRowsAccountForEveryRunAndSample) {
  auto loaded = load(test::shared_trace("nsys/saxpy_mpi_cuda_a100.sqlite"));
  ASSERT_TRUE(loaded);
  const Rank& rank = loaded->profile->ranks().at(0);
  const std::size_t os_events = rank.on_cpu.size() + rank.cpu_samples.size();
  ASSERT_EQ(os_events, 1619u + 5451u);
  const std::size_t threads = rank.os_threads.size();
  // The OS recorded the threads from the capture's start, before the traced events (the fitted view).
  TimeNs first = rank.first_ns, last = rank.last_ns;
  for (const OnCpu& run : rank.on_cpu) {
    first = std::min(first, run.start_ns);
    last = std::max(last, run.end_ns);
  }
  NullImGui imgui(1600, 4000);
  View view(test::options_for(Panel::kTimeline));
  view.set_profile(std::move(loaded));
  view.set_all_cpu_open(true);
  view.set_time_range(first - 1000, last + 1000);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_GE(view.last_frame_events(), os_events);
  const std::string state = view.state_json();
  std::size_t rows = 0;
  for (std::size_t at = state.find("\"kind\":\"os_thread\""); at != std::string::npos;
       at = state.find("\"kind\":\"os_thread\"", at + 1))
    ++rows;
  EXPECT_EQ(rows, threads);
  // The main thread's OS row comes right above its ranges' row.
  const auto os_row = state.find("\"label\":\"MPI Rank 0 · on CPU\"");
  const auto ranges_row = state.find("\"label\":\"MPI Rank 0\"");
  ASSERT_NE(os_row, std::string::npos) << state;
  ASSERT_NE(ranges_row, std::string::npos);
  EXPECT_LT(os_row, ranges_row);
  EXPECT_EQ(state.find("\"kind\":", os_row + 1), state.find("\"kind\":\"cpu_thread\"", os_row));
}

TEST(GuiTimeline, WheelZoomsAroundTheCursorAndDragPans) {
  auto loaded = load(test::sample_job());
  ASSERT_TRUE(loaded);
  NullImGui imgui(1600, 900);
  ViewOptions options;
  options.remember_recent = false;
  options.panel_set = true;
  View view(options);
  view.set_profile(std::move(loaded));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  const TimeNs range = view.time_end() - view.time_start();
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(900, 400);
  io.MouseWheel = 3.0f;
  imgui.frame(view);
  io.MouseWheel = 0.0f;
  const TimeNs zoomed = view.time_end() - view.time_start();
  EXPECT_LT(zoomed, range * 6 / 10);
  // Drag left: the window moves later in time by the dragged pixels.
  const TimeNs before = view.time_start();
  io.MouseDown[0] = true;
  imgui.frame(view);
  for (int i = 0; i < 5; ++i) {
    io.MousePos.x -= 20;
    imgui.frame(view);
  }
  io.MouseDown[0] = false;
  imgui.frame(view);
  EXPECT_GT(view.time_start(), before);
  EXPECT_EQ(view.time_end() - view.time_start(), zoomed);
  // Any zoom level still draws: a window of 20 µs in the middle of the profile.
  const TimeNs mid = (view.loaded()->profile->first_ns() + view.loaded()->profile->last_ns()) / 2;
  view.set_time_range(mid, mid + 20000);
  imgui.frame(view);
  imgui.frame(view);
  EXPECT_LE(view.last_frame_items(), view.last_frame_events());
}

TEST(GuiExplorer, InvalidLayoutIsExplainedNotClamped) {
  NullImGui imgui(1600, 900);
  ViewOptions options;
  options.remember_recent = false;
  options.panel = Panel::kExplorer;
  options.panel_set = true;
  View view(options);
  view.set_layout(8, 2, 1);
  imgui.frame(view);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  const double step = view.prediction()->step_time_s;
  view.set_layout(8, 3, 1);  // TP 3 does not divide 8 GPUs (nor the heads)
  imgui.frame(view);
  EXPECT_EQ(view.prediction(), nullptr);
  EXPECT_FALSE(view.layout_error().empty());
  view.set_layout(8, 8, 1);
  imgui.frame(view);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  EXPECT_NE(view.prediction()->step_time_s, step);  // the TP slider moves the prediction
}

TEST(GuiOpen, BackgroundImportOfATraceShowsProgressThenTheProfile) {
  const auto trace = test::shared_trace("hta/trace_diff/test/test.json.gz");
  if (!std::filesystem::exists(trace)) GTEST_SKIP();
  ::setenv("XDG_CACHE_HOME", MESHSCOPE_TEST_TMP, 1);
  NullImGui imgui(1280, 720);
  ViewOptions options;
  options.remember_recent = false;
  View view(options);
  view.open(trace);
  int frames = 0;
  while (view.loading() && frames < 20000) {
    imgui.frame(view);
    ++frames;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  imgui.frame(view);
  ASSERT_TRUE(view.load_error().empty()) << view.load_error();
  ASSERT_NE(view.loaded(), nullptr);
  EXPECT_EQ(view.panel(), Panel::kTimeline);
  EXPECT_EQ(view.loaded()->profile->ranks().size(), 1u);
  view.open("/nonexistent/trace.json");
  while (view.loading()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  imgui.frame(view);
  EXPECT_FALSE(view.load_error().empty());
  EXPECT_NE(view.loaded(), nullptr);  // the previous profile stays open
}

}  // namespace
}  // namespace meshscope::gui
