// Timeline frame cost on a large profile: one full Dear ImGui frame of the Timeline panel (visible-range
// preprocess of every visible lane + ImDrawList building + ImGui layout; no GPU), built with the no-window
// null backend at several zoom levels; frames while dragging a range and while hovering an event with a
// selected event's launch flows drawn; the range totals a drag computes (on a worker thread); and the time
// from opening a profile to the first frame.
//
//   build-gui/meshscope_gen_job --ranks 64 --events-per-rank 156250 --format msdb -o
//   /tmp/meshscope_bench_64x156k.msdb MESHSCOPE_BENCH_PROFILE=/tmp/meshscope_bench_64x156k.msdb
//   build-gui/tests/bench/meshscope_bench_timeline
//
// docs/PERFORMANCE.md ("Front end") records the numbers.
#include <benchmark/benchmark.h>
#include <imgui.h>
#include <simdjson.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "app/gui/View.hpp"

namespace {

using meshscope::TimeNs;
using namespace meshscope::gui;

const char* profile_path() {
  const char* p = std::getenv("MESHSCOPE_BENCH_PROFILE");
  return p && *p ? p : "/tmp/meshscope_bench_64x156k.msdb";
}

// The profile, loaded and indexed once for every benchmark.
LoadedProfile* shared_profile() {
  static std::unique_ptr<LoadedProfile> loaded = [] {
    std::unique_ptr<LoadedProfile> l;
    try {
      l = load_profile(profile_path());
    } catch (const std::exception&) {
    }
    return l;
  }();
  return loaded.get();
}

struct Imgui {
  Imgui(float w, float h) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(w, h);
    // As the OpenGL 3 renderer does: draw lists over 64k vertices are split by vertex offset.
    io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
    View::setup_style();
    unsigned char* px;
    int tw, th;
    io.Fonts->GetTexDataAsRGBA32(&px, &tw, &th);
  }
  ~Imgui() { ImGui::DestroyContext(); }
  void frame(View& view) {
    ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
    ImGui::NewFrame();
    view.draw();
    ImGui::Render();
  }
};

// A View that borrows the shared profile (the benchmark owns it; the View gets a copy of the index).
std::unique_ptr<View> make_view() {
  ViewOptions o;
  o.remember_recent = false;
  o.panel_set = true;
  o.panel = Panel::kTimeline;
  auto view = std::make_unique<View>(o);
  auto copy = std::make_unique<LoadedProfile>(*shared_profile());
  view->set_profile(std::move(copy));
  return view;
}

// Shows the middle 10^-ZOOM of the profile, draws three frames to settle, then times one frame per iteration;
// returns the visible range.
TimeNs time_frames_at_zoom(benchmark::State& state, Imgui& imgui, View& view, std::int64_t zoom) {
  const auto& p = *shared_profile()->profile;
  const TimeNs span = p.last_ns() - p.first_ns();
  const TimeNs range =
      std::max<TimeNs>(1000, static_cast<TimeNs>(static_cast<double>(span) / std::pow(10.0, zoom)));
  const TimeNs mid = p.first_ns() + span / 2;
  view.set_time_range(mid - range / 2, mid + range / 2);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  for (auto _ : state) {
    imgui.frame(view);
    benchmark::DoNotOptimize(ImGui::GetDrawData()->TotalVtxCount);
  }
  return range;
}

// Arg 0: visible range = span / 10^arg, centred on the middle of the profile. Arg 1: 0 = default layout
// (first 4 ranks open, 1920x1080), 1 = every rank open, 1920x1080, 2 = every rank open and a 1920x16000
// display, so every row of all 64 ranks is on screen (the worst case).
// The display of layout ARG 1 (see BM_TimelineFrame) and a view of the shared profile laid out so; false
// (the benchmark skipped) without a profile.
bool frame_setup(benchmark::State& state, std::optional<Imgui>& imgui, std::unique_ptr<View>& view) {
  if (!shared_profile()) {
    state.SkipWithError("no profile: generate it first (see the top of bench_timeline.cpp)");
    return false;
  }
  const int layout = static_cast<int>(state.range(1));
  imgui.emplace(1920, layout == 2 ? 16000.0f : 1080.0f);
  view = make_view();
  if (layout > 0) view->set_all_ranks_open(true);
  return true;
}

void BM_TimelineFrame(benchmark::State& state) {
  std::optional<Imgui> imgui;
  std::unique_ptr<View> view;
  if (!frame_setup(state, imgui, view)) return;
  const TimeNs range = time_frames_at_zoom(state, *imgui, *view, state.range(0));
  state.counters["items"] = static_cast<double>(view->last_frame_items());
  state.counters["events"] = static_cast<double>(view->last_frame_events());
  state.counters["vertices"] = ImGui::GetDrawData()->TotalVtxCount;
  state.counters["range_us"] = static_cast<double>(range) / 1e3;
}
BENCHMARK(BM_TimelineFrame)->ArgsProduct({{0, 1, 2, 3, 4, 5, 6}, {0, 1, 2}})->Unit(benchmark::kMillisecond);

// Frames whose view changes before each: the visible range is span / 10^arg 0 about the profile's middle at
// first, then VIEW_OF(first, range, frame number) for each timed frame. Arg 1 as in BM_TimelineFrame.
template <class ViewOf>
void time_moving_frames(benchmark::State& state, ViewOf view_of) {
  std::optional<Imgui> imgui;
  std::unique_ptr<View> view;
  if (!frame_setup(state, imgui, view)) return;
  const auto& p = *shared_profile()->profile;
  const TimeNs span = p.last_ns() - p.first_ns();
  const TimeNs range =
      std::max<TimeNs>(1000, static_cast<TimeNs>(static_cast<double>(span) / std::pow(10.0, state.range(0))));
  const TimeNs first = p.first_ns() + (span - range) / 2;
  view->set_time_range(first, first + range);
  for (int i = 0; i < 3; ++i) imgui->frame(*view);
  std::int64_t frame = 0;
  for (auto _ : state) {
    const auto [t0, t1] = view_of(first, range, ++frame);
    view->set_time_range(t0, t1);
    imgui->frame(*view);
  }
  state.counters["events"] = static_cast<double>(view->last_frame_events());
}

// A frame whose view moved: shifted by one pixel before each frame (the GPU streams' utilisation lanes
// compute only the buckets the pan brings into view).
void BM_TimelineFramePanning(benchmark::State& state) {
  time_moving_frames(state, [](TimeNs first, TimeNs range, std::int64_t frame) {
    const TimeNs t0 = first + (frame % 1000) * std::max<TimeNs>(1, range / 1920);
    return std::pair{t0, t0 + range};
  });
}
BENCHMARK(BM_TimelineFramePanning)->ArgsProduct({{0, 2}, {0, 2}})->Unit(benchmark::kMillisecond);

// A frame whose view zoomed about its middle: Arg 2 = 0: one percent wider or narrower than the last frame's
// (the utilisation lanes' buckets, a power of two of nanoseconds wide, mostly keep their width: only the
// buckets brought into view are computed); 1: half or twice as wide, so that every bucket of every lane is
// computed again.
void BM_TimelineFrameZooming(benchmark::State& state) {
  const bool by_half = state.range(2) == 1;
  time_moving_frames(state, [by_half](TimeNs first, TimeNs range, std::int64_t frame) {
    const TimeNs middle = first + range / 2;
    const TimeNs other = by_half ? range / 2 : range - range / 100;
    const TimeNs half = (frame % 2 == 0 ? range : other) / 2;
    return std::pair{middle - half, middle + half};
  });
}
BENCHMARK(BM_TimelineFrameZooming)->ArgsProduct({{0, 2}, {0, 2}, {0, 1}})->Unit(benchmark::kMillisecond);

// The timeline's overlays, every rank open at 1920x1080. Arg 0: 0 = the critical path of every visible
// step drawn (nothing selected), 1 = the baseline's rows stacked under every rank (the baseline is a copy of
// the same profile, diffed once before timing). Arg 1: visible range = span / 10^arg.
void BM_CompareFrame(benchmark::State& state) {
  if (!shared_profile()) {
    state.SkipWithError("no profile: generate it first (see the top of bench_timeline.cpp)");
    return;
  }
  Imgui imgui(1920, 1080);
  auto view = make_view();
  view->set_all_ranks_open(true);
  if (state.range(0) == 0) {
    view->set_critical_path_shown(true);
  } else {
    view->set_baseline(std::make_unique<LoadedProfile>(*shared_profile()));
    view->set_baseline_stacked(true);
  }
  time_frames_at_zoom(state, imgui, *view, state.range(1));
  state.counters["events"] = static_cast<double>(view->last_frame_events());
  state.counters["path_events"] = static_cast<double>(view->critical_path_events().size());
  state.counters["vertices"] = ImGui::GetDrawData()->TotalVtxCount;
}
BENCHMARK(BM_CompareFrame)->ArgsProduct({{0, 1}, {0, 1, 2, 4}})->Unit(benchmark::kMillisecond);

// Where rows and the time area are, from the view's state dump.
struct Geometry {
  float x0 = 0, x1 = 0, stream_y = 0, lane_h = 0;
};
Geometry geometry(const View& view) {
  static simdjson::dom::parser parser;
  static std::string text;
  text = view.state_json();
  Geometry g;
  const auto s = parser.parse(text);
  g.x0 = static_cast<float>(double(s["timeline"]["canvas"]["x0"]));
  g.x1 = static_cast<float>(double(s["timeline"]["canvas"]["x1"]));
  for (auto row : s["timeline"]["rows"].get_array()) {
    if (std::string_view(row["kind"]) != "gpu_stream") continue;
    g.stream_y = static_cast<float>(double(row["y"]));
    g.lane_h = static_cast<float>(double(row["lane_h"]));
    break;
  }
  return g;
}

// A view of the whole profile with every rank open and every rank's CPU threads and CUDA API calls shown
// (the display is 1920x1080 or, for Arg 1, 16000 pixels tall so that many more rows are on screen).
std::unique_ptr<View> open_view(Imgui& imgui) {
  auto view = make_view();
  view->set_all_ranks_open(true);
  view->set_all_cpu_open(true);
  for (int i = 0; i < 3; ++i) imgui.frame(*view);
  return view;
}

// Frames while the mouse drags a range (right button held, moving a few pixels each frame).
void BM_DragRange(benchmark::State& state) {
  if (!shared_profile()) {
    state.SkipWithError("no profile: generate it first (see the top of bench_timeline.cpp)");
    return;
  }
  Imgui imgui(1920, state.range(0) == 1 ? 16000.0f : 1080.0f);
  auto view = open_view(imgui);
  const Geometry g = geometry(*view);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(g.x0 + 100, g.stream_y + g.lane_h / 2);
  imgui.frame(*view);
  io.MouseDown[1] = true;
  imgui.frame(*view);
  float dx = 3;
  for (auto _ : state) {
    io.MousePos.x += dx;
    if (io.MousePos.x > g.x1 - 10 || io.MousePos.x < g.x0 + 10) dx = -dx;
    imgui.frame(*view);
    benchmark::DoNotOptimize(ImGui::GetDrawData()->TotalVtxCount);
  }
  io.MouseDown[1] = false;
  imgui.frame(*view);
  state.counters["events"] = static_cast<double>(view->last_frame_events());
}
BENCHMARK(BM_DragRange)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Frames while hovering a kernel (its launch flows drawn) with the CPU range that launches the most GPU work
// selected and shown (up to 256 of its flows drawn too): the worst case of flows.
void BM_HoverFlows(benchmark::State& state) {
  if (!shared_profile()) {
    state.SkipWithError("no profile: generate it first (see the top of bench_timeline.cpp)");
    return;
  }
  Imgui imgui(1920, state.range(0) == 1 ? 16000.0f : 1080.0f);
  auto view = open_view(imgui);
  const LoadedProfile& L = *view->loaded();
  const meshscope::Rank& rank = L.profile->ranks()[0];
  std::vector<std::uint32_t> calls;
  std::uint32_t busiest = 0;
  std::size_t most = 0;
  for (std::uint32_t i = 0; i < rank.ranges.size(); ++i) {
    if (rank.ranges[i].depth != 0) continue;
    calls.clear();
    meshscope::measure::api_calls_inside(rank, L.ranks[0]->launches, i, calls);
    if (calls.size() > most) most = calls.size(), busiest = i;
  }
  view->select_event({EventKind::kRange, 0, busiest});
  // The view shows the selected range (its flows all on screen), the mouse is over a kernel it launched on
  // rank 0's first stream (that kernel's flows drawn too).
  const meshscope::CpuRange& op = rank.ranges[busiest];
  const TimeNs pad = (op.end_ns - op.start_ns) / 20;
  view->set_time_range(op.start_ns - pad, op.end_ns + pad);
  imgui.frame(*view);
  calls.clear();
  meshscope::measure::api_calls_inside(rank, L.ranks[0]->launches, busiest, calls);
  const meshscope::GpuStream& first = rank.streams[0];
  std::uint32_t kernel = meshscope::measure::kNoIndex;
  for (std::uint32_t call : calls) {
    for (std::uint32_t act : L.ranks[0]->launches.activities_of(call)) {
      if (act >= first.first && act < first.first + first.count && kernel == meshscope::measure::kNoIndex)
        kernel = act;
    }
  }
  const Geometry g = geometry(*view);
  ImGuiIO& io = ImGui::GetIO();
  float x = (g.x0 + g.x1) / 2;
  if (kernel != meshscope::measure::kNoIndex) {
    const auto& a = rank.activities[kernel];
    const double mid = static_cast<double>(a.start_ns + a.end_ns) / 2;
    x = g.x0 + static_cast<float>((mid - static_cast<double>(view->time_start())) /
                                  static_cast<double>(view->time_end() - view->time_start()) * (g.x1 - g.x0));
  }
  io.MousePos = ImVec2(x, g.stream_y + g.lane_h / 2);
  imgui.frame(*view);
  float dx = 1;
  for (auto _ : state) {
    io.MousePos.x += dx;
    dx = -dx;
    imgui.frame(*view);
    benchmark::DoNotOptimize(ImGui::GetDrawData()->TotalVtxCount);
  }
  state.counters["events"] = static_cast<double>(view->last_frame_events());
  state.counters["selected_calls"] = static_cast<double>(most);
  state.counters["hovered"] =
      view->state_json().find("\"hovered\":{\"kind\":\"activity\"") != std::string::npos;
}
BENCHMARK(BM_HoverFlows)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// The totals of a range (what a drag computes when the mouse is released, on a worker thread): the whole
// profile (Arg 0) and a tenth, a hundredth of it (Arg 1, 2).
void BM_RangeTotals(benchmark::State& state) {
  if (!shared_profile()) {
    state.SkipWithError("no profile: generate it first (see the top of bench_timeline.cpp)");
    return;
  }
  const LoadedProfile& L = *shared_profile();
  const auto& p = *L.profile;
  const TimeNs span = p.last_ns() - p.first_ns();
  const TimeNs range = static_cast<TimeNs>(static_cast<double>(span) / std::pow(10.0, state.range(0)));
  const TimeNs mid = p.first_ns() + span / 2;
  std::int64_t events = 0;
  for (auto _ : state) {
    const auto t =
        meshscope::measure::range_totals(p, L.analysis(), L.range_index, mid - range / 2, mid + range / 2);
    events = t.events;
    benchmark::DoNotOptimize(events);
  }
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_RangeTotals)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// From View::open() to the first rendered frame (the window with its progress bar), and to the first frame
// that shows the loaded timeline (load + analysis + index on the background thread).
void BM_OpenToFirstFrame(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  Imgui imgui(1920, 1080);
  double first_ms = 0, loaded_ms = 0;
  for (auto _ : state) {
    ViewOptions o;
    o.remember_recent = false;
    const auto t0 = Clock::now();
    View view(o);
    view.open(profile_path());
    imgui.frame(view);
    const auto t1 = Clock::now();
    while (view.loading()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    imgui.frame(view);
    const auto t2 = Clock::now();
    if (!view.loaded()) {
      state.SkipWithError("the profile did not load");
      return;
    }
    first_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    loaded_ms = std::chrono::duration<double, std::milli>(t2 - t0).count();
  }
  state.counters["first_frame_ms"] = first_ms;
  state.counters["timeline_frame_ms"] = loaded_ms;
}
BENCHMARK(BM_OpenToFirstFrame)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
