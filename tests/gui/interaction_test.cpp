// No-window interaction tests: the timeline driven through ImGui's input state (mouse position, buttons,
// wheel, keys) on the null backend, with what the view reports (View::state_json(), the same JSON the
// input tests under Xvfb read) checked: click selection and Escape, launch links, search that keeps the
// zoom, range totals, pinned rows, several traces opened as one job, and every panel at HiDPI scale 2 and
// at 1100 x 700 and 3840 x 2160.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "analysis/measure/range_totals.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

using test::NullImGui;

constexpr int kEscapeKey = 300;  // where the tests map ImGuiKey_Escape in io.KeysDown

std::unique_ptr<LoadedProfile> sample() {
  const auto msdb = test::imported(test::sample_job());
  return msdb.empty() ? nullptr : load_profile(msdb);
}

struct Harness {
  explicit Harness(float w = 1600, float h = 900, float scale = 1.0f) : imgui(w, h, scale) {
    ImGui::GetIO().KeyMap[ImGuiKey_Escape] = kEscapeKey;
  }
  NullImGui imgui;
  ViewOptions options() {
    ViewOptions o;
    o.remember_recent = false;
    o.panel_set = true;
    return o;
  }
  void frames(View& view, int n = 1) {
    for (int i = 0; i < n; ++i) imgui.frame(view);
  }
  // A left click at (X, Y): one frame pressed, one released.
  void click(View& view, float x, float y) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(x, y);
    frames(view);
    io.MouseDown[0] = true;
    frames(view);
    io.MouseDown[0] = false;
    frames(view);
  }
  void key(View& view, int key) {
    ImGuiIO& io = ImGui::GetIO();
    io.KeysDown[key] = true;
    frames(view);
    io.KeysDown[key] = false;
    frames(view);
  }
};

simdjson::dom::element state(const View& view, simdjson::dom::parser& parser) {
  static std::string text;
  text = view.state_json();
  return parser.parse(text);
}

// The first GPU stream row of rank 0 in the state.
simdjson::dom::element stream_row(simdjson::dom::element s) {
  for (auto row : s["timeline"]["rows"].get_array()) {
    if (std::string_view(row["kind"]) == "gpu_stream" && int64_t(row["rank"]) == 0) return row;
  }
  throw std::runtime_error("no GPU stream row");
}

TEST(GuiInteraction, ClickSelectsTheKernelUnderTheMouseAndEscapeClears) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness h;
  View view(h.options());
  view.set_profile(std::move(loaded));
  h.frames(view, 3);
  simdjson::dom::parser parser;
  const auto s = state(view, parser);
  const auto row = stream_row(s);
  const double x0 = s["timeline"]["canvas"]["x0"], x1 = s["timeline"]["canvas"]["x1"];
  const auto t0 = int64_t(s["timeline"]["t0_ns"]), t1 = int64_t(s["timeline"]["t1_ns"]);
  // The widest activity of that stream: its middle is on screen and on the row's first lane (the sample's
  // streams have no overlaps).
  const Rank& rank = view.loaded()->profile->ranks()[0];
  std::uint32_t best = 0;
  const auto events = rank.stream_activities(0);
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    if (events[i].duration() > events[best].duration()) best = i;
  }
  const TimeNs mid = (events[best].start_ns + events[best].end_ns) / 2;
  const double x = x0 + static_cast<double>(mid - t0) / static_cast<double>(t1 - t0) * (x1 - x0);
  const double y = double(row["y"]) + double(row["lane_h"]) / 2;
  h.click(view, static_cast<float>(x), static_cast<float>(y));
  const EventRef selected = view.selected_event();
  EXPECT_EQ(selected.kind, EventKind::kActivity);
  EXPECT_EQ(selected.rank_index, 0);
  EXPECT_EQ(selected.index, rank.streams[0].first + best);
  EXPECT_EQ(view.time_end() - view.time_start(), t1 - t0) << "a click does not zoom";
  const auto after = state(view, parser);
  EXPECT_EQ(std::string_view(after["timeline"]["selected"]["kind"]), "activity");
  h.key(view, kEscapeKey);
  EXPECT_FALSE(view.selected_event().valid());
}

// Esc with a menu open closes the menu and nothing else: the selection stays; the next Esc clears it.
TEST(GuiInteraction, EscapeClosesAnOpenMenuFirst) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness h;
  View view(h.options());
  view.set_profile(std::move(loaded));
  h.frames(view, 3);
  view.select_event({EventKind::kActivity, 0, 0});
  h.frames(view, 2);
  simdjson::dom::parser parser;
  const auto s = state(view, parser);
  const auto row = stream_row(s);
  // A right click on the row's label opens its menu.
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(40, static_cast<float>(double(row["y"]) + double(row["lane_h"]) / 2));
  h.frames(view);
  io.MouseDown[1] = true;
  h.frames(view);
  io.MouseDown[1] = false;
  h.frames(view);
  ASSERT_TRUE(ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) << "the row menu did not open";
  h.key(view, kEscapeKey);
  EXPECT_FALSE(ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId));
  EXPECT_TRUE(view.selected_event().valid()) << "Esc closed the menu and also cleared the selection";
  h.key(view, kEscapeKey);
  EXPECT_FALSE(view.selected_event().valid());
}

// The open browser lists its folder again when it opens and every two seconds while open: a trace written
// into the folder meanwhile appears without leaving it.
TEST(GuiInteraction, TheOpenBrowserSeesFilesWrittenWhileItIsOpen) {
  const auto dir = std::filesystem::path(MESHSCOPE_TEST_TMP) / "browser-refresh";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "first.json") << "{}";
  constexpr int kEnterKey = 301, kCtrlO = 'O';
  Harness h;
  ImGuiIO& io = ImGui::GetIO();
  io.KeyMap[ImGuiKey_Enter] = kEnterKey;
  View view(h.options());
  h.frames(view, 2);
  io.KeyCtrl = true;
  h.key(view, kCtrlO);
  io.KeyCtrl = false;
  h.frames(view, 2);
  // The path field has the focus: select what it holds, type the folder, Enter.
  io.KeyMap[ImGuiKey_A] = 'A';
  io.KeyCtrl = true;
  h.key(view, 'A');
  io.KeyCtrl = false;
  for (char c : dir.string()) io.AddInputCharacter(static_cast<unsigned>(c));
  h.frames(view);
  h.key(view, kEnterKey);
  h.frames(view, 2);
  std::string text = test::frame_text(view);
  ASSERT_NE(text.find("first.json"), std::string::npos) << text;
  EXPECT_EQ(text.find("second.json"), std::string::npos);
  std::ofstream(dir / "second.json") << "{}";
  h.frames(view, 150);  // 2.5 s of frames
  text = test::frame_text(view);
  EXPECT_NE(text.find("second.json"), std::string::npos) << text;
  EXPECT_NE(text.find("first.json"), std::string::npos) << text;
}

TEST(GuiInteraction, LaunchLinksOfTheSample) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  for (std::size_t r = 0; r < loaded->ranks.size(); ++r) {
    const Rank& rank = loaded->profile->ranks()[r];
    const auto& x = loaded->ranks[r]->launches;
    std::size_t linked = 0, with_op = 0;
    for (std::uint32_t a = 0; a < rank.activities.size(); ++a) {
      const std::uint32_t api = x.api_of_activity[a];
      if (api == measure::kNoIndex) continue;
      ++linked;
      EXPECT_EQ(rank.api_calls[api].correlation, rank.activities[a].correlation);
      EXPECT_LE(rank.api_calls[api].start_ns, rank.activities[a].start_ns) << "launched before it ran";
      if (x.op_of_api[api] != measure::kNoIndex) {
        ++with_op;
        const CpuRange& op = rank.ranges[x.op_of_api[api]];
        EXPECT_LE(op.start_ns, rank.api_calls[api].start_ns);
      }
    }
    EXPECT_GT(linked, rank.activities.size() * 9 / 10) << "rank " << rank.rank;
    EXPECT_GT(with_op, linked * 9 / 10) << "rank " << rank.rank;
    // Every API call is on exactly one thread's lanes.
    std::size_t on_lanes = 0;
    for (const auto& layout : loaded->ranks[r]->api_threads) {
      for (const auto& lane : layout.members) on_lanes += lane.size();
    }
    EXPECT_EQ(on_lanes, rank.api_calls.size());
  }
}

TEST(GuiInteraction, SearchCentresEachMatchWithoutChangingTheZoom) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness h;
  View view(h.options());
  const TimeNs first = loaded->profile->first_ns(), last = loaded->profile->last_ns();
  view.set_profile(std::move(loaded));
  h.frames(view, 2);
  const TimeNs width = 2'000'000;  // 2 ms, wider than any collective of the sample
  view.set_time_range(first + (last - first) / 2, first + (last - first) / 2 + width);
  h.frames(view);
  view.search("nccl");
  ASSERT_GT(view.search_matches(), 3);
  for (int k = 0; k < 6; ++k) {
    h.frames(view);
    EXPECT_EQ(view.time_end() - view.time_start(), width) << "match " << view.search_cursor();
    EXPECT_GE(view.time_start(), first) << "the axis never goes before the profile";
    EXPECT_LE(view.time_end(), last);
    const EventRef e = view.selected_event();
    ASSERT_TRUE(e.valid());
    const EventSpan span = span_of(*view.loaded()->profile, e);
    EXPECT_LE(view.time_start(), span.start_ns);
    EXPECT_GE(view.time_end(), span.end_ns) << "the match is in view";
    const int before = view.search_cursor();
    view.search_next(1);
    EXPECT_EQ(view.search_cursor(), (before + 1) % view.search_matches());
  }
  // A match wider than the view zooms out just enough to show it.
  view.set_time_range(first, first + 1000);
  view.search("ProfilerStep");
  h.frames(view);
  const EventSpan step = span_of(*view.loaded()->profile, view.selected_event());
  EXPECT_GE(view.time_end() - view.time_start(), step.end_ns - step.start_ns);
  EXPECT_LT(view.time_end() - view.time_start(), 2 * (step.end_ns - step.start_ns));
}

TEST(GuiInteraction, FZoomsToTheSelectedEventOrRange) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness h;
  View view(h.options());
  const TimeNs first = loaded->profile->first_ns(), last = loaded->profile->last_ns();
  view.set_profile(std::move(loaded));
  h.frames(view, 2);
  view.search("ProfilerStep");  // selects a step, and shows it at the current zoom
  h.frames(view);
  const EventSpan step = span_of(*view.loaded()->profile, view.selected_event());
  ImGuiIO& io = ImGui::GetIO();
  auto press = [&](int key) {
    io.KeysDown[key] = true;
    h.frames(view);
    io.KeysDown[key] = false;
    h.frames(view);
  };
  press('F');  // the selected step, a twentieth of it either side
  const TimeNs pad = (step.end_ns - step.start_ns) / 20;
  EXPECT_EQ(view.time_end() - view.time_start(), step.end_ns - step.start_ns + 2 * pad);
  EXPECT_LE(view.time_start(), step.start_ns);
  EXPECT_GE(view.time_end(), step.end_ns);
  EXPECT_GE(view.time_start(), first) << "shifted into the profile, not past its start";
  EXPECT_LE(view.time_end(), last);
  press(ImGui::GetKeyIndex(ImGuiKey_Escape));  // nothing selected: F fits the whole profile
  press('F');
  EXPECT_LT(view.time_start(), first);
  EXPECT_GT(view.time_end(), last);
}

TEST(GuiInteraction, SearchFindsApiCallsOperatorsAndCollectives) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness h;
  View view(h.options());
  view.set_profile(std::move(loaded));
  h.frames(view, 2);
  view.search("cudaLaunchKernel");
  ASSERT_GT(view.search_matches(), 100);
  EXPECT_EQ(view.selected_event().kind, EventKind::kApiCall);
  h.frames(view, 2);
  simdjson::dom::parser parser;
  auto s = state(view, parser);
  EXPECT_TRUE(bool(s["timeline"]["cpu_open"].at(static_cast<std::size_t>(view.selected_event().rank_index))))
      << "jumping to an API call opens its rank's CPU threads";
  view.search("aten::");
  EXPECT_GT(view.search_matches(), 100);
  EXPECT_EQ(view.selected_event().kind, EventKind::kRange);
  view.search("reducescatter");  // the collective's operation, not its kernel name
  ASSERT_GT(view.search_matches(), 0);
  EXPECT_EQ(view.selected_event().kind, EventKind::kActivity);
  EXPECT_GE(s["timeline"]["search"]["matches"].get_int64().value(), 0);
}

TEST(GuiInteraction, RangeDragComputesTheSameTotalsAsTheAnalysis) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness h;
  View view(h.options());
  view.set_profile(std::move(loaded));
  h.frames(view, 3);
  simdjson::dom::parser parser;
  const auto s = state(view, parser);
  const double x0 = s["timeline"]["canvas"]["x0"], x1 = s["timeline"]["canvas"]["x1"];
  const double ry =
      (double(s["timeline"]["canvas"]["ruler_y0"]) + double(s["timeline"]["canvas"]["ruler_y1"])) / 2;
  // Drag on the time axis from 20 % to 70 % of the view.
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(static_cast<float>(x0 + 0.2 * (x1 - x0)), static_cast<float>(ry));
  h.frames(view);
  io.MouseDown[0] = true;
  h.frames(view);
  for (int i = 1; i <= 10; ++i) {
    io.MousePos.x = static_cast<float>(x0 + (0.2 + 0.05 * i) * (x1 - x0));
    h.frames(view);
  }
  io.MouseDown[0] = false;
  h.frames(view);
  ASSERT_TRUE(view.has_range());
  for (int i = 0; i < 2000 && !view.range_totals(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    h.frames(view);
  }
  const measure::RangeTotals* t = view.range_totals();
  ASSERT_NE(t, nullptr);
  EXPECT_GT(t->events, 0);
  const LoadedProfile& L = *view.loaded();
  const auto direct = measure::range_totals(*L.profile, L.analysis(), L.range_index, t->start_ns, t->end_ns);
  EXPECT_EQ(t->events, direct.events);
  EXPECT_EQ(t->exposed_comm_ns, direct.exposed_comm_ns);
  // The exposed communication inside the range is the analysis' exposed intervals clipped to it.
  TimeNs clipped = 0;
  for (const auto& r : L.analysis().ranks) {
    for (const auto& iv : r.exposed_comm) {
      clipped += std::max<TimeNs>(0, std::min(iv.end, t->end_ns) - std::max(iv.start, t->start_ns));
    }
  }
  EXPECT_EQ(t->exposed_comm_ns, clipped);
  // Z zooms to it.
  io.KeysDown['Z'] = true;
  h.frames(view);
  io.KeysDown['Z'] = false;
  h.frames(view);
  EXPECT_EQ(view.time_start(), t->start_ns);
  EXPECT_EQ(view.time_end(), t->end_ns);
}

TEST(GuiInteraction, PinnedRowsStayAtTheTopWhileScrolling) {
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness h(1600, 600);
  View view(h.options());
  view.set_profile(std::move(loaded));
  view.set_all_cpu_open(true);  // rows enough to scroll
  h.frames(view, 3);
  simdjson::dom::parser parser;
  auto s = state(view, parser);
  // Pin the last GPU stream row of the last rank.
  std::int64_t item = -1;
  for (auto row : s["timeline"]["rows"].get_array()) {
    if (std::string_view(row["kind"]) == "gpu_stream") item = int64_t(row["item"]);
  }
  ASSERT_GE(item, 0);
  view.set_row_pinned(static_cast<std::uint32_t>(item), true);
  h.frames(view, 2);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(800, 400);
  io.KeyShift = true;
  for (int i = 0; i < 5; ++i) {
    io.MouseWheel = -3.0f;
    h.frames(view);
  }
  io.MouseWheel = 0;
  io.KeyShift = false;
  h.frames(view, 2);
  s = state(view, parser);
  const double top = s["timeline"]["canvas"]["rows_top"];
  bool found = false;
  double first_unpinned = 1e9;
  for (auto row : s["timeline"]["rows"].get_array()) {
    if (int64_t(row["item"]) == item) {
      found = true;
      EXPECT_TRUE(bool(row["pinned"]));
      EXPECT_NEAR(double(row["y"]), top, 0.5) << "pinned rows are drawn at the top of the rows";
    } else {
      first_unpinned = std::min(first_unpinned, double(row["y"]));
    }
  }
  EXPECT_TRUE(found);
  EXPECT_LT(first_unpinned, top) << "the other rows scrolled";
}

TEST(GuiInteraction, SeveralTracesOpenAsOneJob) {
  std::vector<std::filesystem::path> files;
  for (int r = 0; r < 4; ++r)
    files.push_back(test::sample_job() / ("rank-" + std::to_string(r) + ".json.gz"));
  ::setenv("XDG_CACHE_HOME", MESHSCOPE_TEST_TMP, 1);
  Harness h;
  View view(h.options());
  view.open(files);
  for (int i = 0; i < 60000 && view.loading(); ++i) {
    h.frames(view);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  h.frames(view);
  ASSERT_TRUE(view.load_error().empty()) << view.load_error();
  ASSERT_NE(view.loaded(), nullptr);
  EXPECT_EQ(view.loaded()->profile->ranks().size(), 4u);
}

class EveryPanelAtEverySize : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(EveryPanelAtEverySize, Draws) {
  const auto [size, scale] = GetParam();
  const float w = size == 0 ? 1100.0f : 3840.0f, h = size == 0 ? 700.0f : 2160.0f;
  auto loaded = sample();
  ASSERT_TRUE(loaded);
  Harness harness(w, h, static_cast<float>(scale));
  View view(harness.options());
  view.set_profile(std::move(loaded));
  for (int p = 0; p < kPanelCount; ++p) {
    view.select_panel(static_cast<Panel>(p));
    harness.frames(view, 3);
    EXPECT_EQ(view.panel(), static_cast<Panel>(p));
  }
  view.select_panel(Panel::kTimeline);
  harness.frames(view, 2);
  simdjson::dom::parser parser;
  const auto s = state(view, parser);
  EXPECT_NEAR(double(stream_row(s)["lane_h"]), 18.0 * scale, 0.01) << "rows scale with the fonts";
}

INSTANTIATE_TEST_SUITE_P(Gui, EveryPanelAtEverySize,
                         ::testing::Combine(::testing::Values(0, 1), ::testing::Values(1, 2)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == 0 ? "1100x700" : "3840x2160") +
                                  "_scale" + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace meshscope::gui
