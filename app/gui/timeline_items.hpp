// Timeline items (Tracy's TimelineItem): the timeline is a controller (timeline_panel.cpp) holding one item
// per row kind, each with the same three phases every frame:
//   preprocess  the visible time range becomes draw items (timeline_lod.hpp: binary search, sub-pixel
//               folding with counts); plain C++, no ImGui calls;
//   draw        ImDrawList calls only; records what the mouse is over in TimelineContext::hover;
//   tooltip     what the hovered thing shows (timeline_tooltips.cpp), called once per frame by the
//               controller for the one hovered item.
//
// [SECTION] Event references and hover
// [SECTION] Timeline state (kept across frames) and context (one frame)
// [SECTION] Items: rank header, steps, GPU stream, CPU track (threads with their CUDA API calls, and GPU
//           annotations), CPU section
#pragma once

#include <imgui.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/gui/timeline_controller.hpp"
#include "app/gui/timeline_lod.hpp"
#include "profiler/profile.hpp"

namespace meshscope::gui {

struct LoadedProfile;
class TimelineItem;

inline constexpr std::uint32_t kNoRow = 0xffffffffu;

// [SECTION] Event references and hover
// -------------------------------------------------------------------------

// One event of one rank: a GPU activity (index into Rank::activities), a CPU range (Rank::ranges), a CUDA
// API call (Rank::api_calls) or a step (Rank::steps).
enum class EventKind : std::uint8_t { kNone, kActivity, kRange, kApiCall, kStep };
const char* to_string(EventKind kind);
struct EventRef {
  EventKind kind = EventKind::kNone;
  std::int32_t rank_index = -1;  // into Profile::ranks()
  std::uint32_t index = 0;
  bool valid() const { return kind != EventKind::kNone; }
  friend bool operator==(const EventRef&, const EventRef&) = default;
};

// Start and end of EVENT (0, 0 when invalid).
struct EventSpan {
  TimeNs start_ns = 0, end_ns = 0;
};
EventSpan span_of(const Profile& profile, const EventRef& event);
// The name of EVENT ("Step 3" for steps).
std::string event_name(const Profile& profile, const EventRef& event);

// What the mouse is over this frame.
// kBaseline: an event (or fold) of a baseline row; DRAW indexes the baseline rank's events, EVENT is empty.
enum class HoverKind : std::uint8_t { kNone, kEvent, kFolded, kBand, kLabel, kBaseline };
struct Hover {
  HoverKind kind = HoverKind::kNone;
  const TimelineItem* item = nullptr;
  EventRef event;   // kEvent: the event; kFolded: the first event of the fold
  DrawItem draw{};  // kEvent/kFolded: the draw item; kBand: the merged interval
  std::uint32_t lane = 0;
};

// A search match on one sub-lane (sorted by start within the lane; both starts and ends are monotonic, as
// for the lane's events, so preprocess_lane() folds them per pixel).
struct MatchSpan {
  TimeNs start_ns, end_ns;
};

// [SECTION] Timeline state and context
// ---------------------------------------------------------------------------

// Everything the timeline keeps from frame to frame (View::tl_).
struct TimelineState {
  TimelineController view;                           // the visible range; unset until the first fit
  std::vector<std::unique_ptr<TimelineItem>> items;  // built once per profile
  std::vector<std::uint32_t> order;                  // display order: indices into items
  std::vector<std::uint8_t> pinned;                  // per item: kept at the top while scrolling
  // Where each rank's rows are (indices into items; kNoRow when absent).
  struct RankRows {
    std::uint32_t header = kNoRow, steps = kNoRow, section = kNoRow;
    std::vector<std::uint32_t> streams;      // per Rank::streams
    std::vector<std::uint32_t> tracks;       // per Rank::tracks
    std::vector<std::uint32_t> api_threads;  // per LaunchIndex::threads
  };
  std::vector<RankRows> rows;
  struct GroupSpan {  // one rank group as laid out this frame (for the step lines)
    std::uint32_t header;
    float top, bottom;
  };
  std::vector<GroupSpan> groups;
  std::vector<std::uint8_t> rank_open;
  std::vector<std::uint8_t> cpu_open;
  std::size_t frame_items = 0, frame_events = 0;
  // Selection: the clicked event (details panel, launch flows), and the event under the mouse this frame.
  EventRef selected;
  EventRef hovered;
  EventRef scroll_to;    // bring this event's row into view while laying out the next frame
  int details_tab = -1;  // tab the bottom panel should switch to next frame (0 details, 1 range), -1 none
  // Range selection (drag on the time axis, right drag, or shift + left drag)
  bool selecting = false, has_selection = false;
  TimeNs sel_a = 0, sel_b = 0;
  struct Bookmark {
    TimeNs start, end;
  };
  std::vector<Bookmark> bookmarks;
  // Collective linking
  std::int32_t selected_instance = -1;
  struct LinkPoint {
    std::int32_t rank;
    float x, y;
  };
  std::vector<LinkPoint> links;
  // Search
  char filter[256] = {};
  bool filter_dirty = false;
  std::vector<std::int8_t> name_match;  // per StringId: 1 matches, 0 not, -1 not yet known
  struct Match {
    TimeNs start, end;
    EventRef event;
    std::uint32_t item;  // the row holding it
  };
  std::vector<Match> matches;  // in time order
  int match_cursor = -1;
  bool focus_search = false;
  int search_refocus = 0;  // frames in which an Enter still counts after one ended the field's editing
  std::int32_t scroll_to_rank = -1;
  // Row context menu, and where its entries were drawn this frame (for the state dump)
  std::uint32_t menu_item = kNoRow;
  struct MenuRect {
    const char* label;
    ImVec2 min, max;
  };
  std::vector<MenuRect> menu_rects;
  // Critical path overlay: shown or not; the events it outlined in the last frame (tests, state dump) and
  // the step whose path they are (-1 rank index: the paths of every visible step).
  bool critical = false;
  std::vector<EventRef> critical_events;
  // The baseline's activities (baseline rank index, activity index) on its own critical path that its stacked
  // rows outlined in the last frame: a what-if's changed path, drawn under the measured one.
  std::vector<std::pair<std::int32_t, std::uint32_t>> critical_baseline;
  std::int32_t critical_rank = -1;
  std::int64_t critical_step = 0;
  // Where the canvas was drawn last frame (screen pixels; for the state dump that input tests read)
  float canvas_x0 = 0, canvas_x1 = 0, ruler_y0 = 0, ruler_y1 = 0, rows_top = 0, rows_bottom = 0, pins_h = 0;
};

// What every item reads in one frame (Tracy's TimelineContext), and what drawing reports back.
struct TimelineContext {
  const LoadedProfile* loaded = nullptr;
  const Profile* profile = nullptr;
  TimelineState* tl = nullptr;
  ImDrawList* dl = nullptr;
  float ui = 1;           // layout scale: the font size over 15 px (HiDPI), never under 1
  float label_x = 0;      // left edge of the label column (screen)
  float x0 = 0, x1 = 0;   // time area (screen)
  TimeNs t0 = 0, t1 = 0;  // visible range
  double ns_per_px = 1;
  LodParams lod;
  float win_top = 0, win_bottom = 0;  // visible part of the rows being drawn (screen)
  ImVec2 mouse;
  bool hovered = false;  // the mouse is over the rows being drawn
  bool click = false;    // a left click (not a drag) was released over the canvas this frame
  bool filtering = false;
  // Output of the draw phase
  Hover hover;
  std::vector<DrawItem> scratch;  // reused for search highlights

  float x_of(TimeNs t) const { return x0 + static_cast<float>(static_cast<double>(t - t0) / ns_per_px); }
  TimeNs t_of(float x) const { return t0 + static_cast<TimeNs>(static_cast<double>(x - x0) * ns_per_px); }
  bool row_visible(float y, float h) const { return y + h >= win_top && y <= win_bottom; }
  float label_w() const;
  float header_h() const;
  float lane_h() const;
  float cpu_lane_h() const;
  float text_y(float y, float h) const;  // baseline that centres one line of text in [y, y + h)
};

// Layout constants of the timeline (pixels at scale 1; TimelineContext scales them).
inline constexpr float kLabelWidth = 200.0f;
inline constexpr float kRulerHeight = 24.0f;
inline constexpr float kHeaderHeight = 24.0f;
inline constexpr float kLaneHeight = 18.0f;
inline constexpr float kCpuLaneHeight = 15.0f;
inline constexpr float kBandHeight = 5.0f;
inline constexpr float kUtilisationHeight = 8.0f;  // a GPU stream's utilisation lane, below its sub-lanes
inline constexpr float kUtilisationBucketPx = 4.0f;
inline constexpr float kMinPx = 3.0f;
inline constexpr ImU32 kColBaseline = IM_COL32(70, 200, 190, 255);  // baseline rows' tag and stripe
inline constexpr ImU32 kColCritical = IM_COL32(255, 80, 190, 255);  // the critical path overlay

// Text clipped to [x0, x1] (with an ellipsis when it does not fit).
void clipped_text(ImDrawList* dl, float x0, float x1, float y, ImU32 color, std::string_view text);

// [SECTION] Items
// -----------------------------------------------------------------------------------------------

// Row groups: rows are reordered only among rows of the same rank and group.
enum class RowGroup : std::uint8_t { kHeader, kSteps, kGpu, kSection, kCpu };

class TimelineItem {
 public:
  explicit TimelineItem(std::int32_t rank_index) : rank_index_(rank_index) {}
  virtual ~TimelineItem() = default;
  TimelineItem(const TimelineItem&) = delete;
  TimelineItem& operator=(const TimelineItem&) = delete;

  std::int32_t rank_index() const { return rank_index_; }
  virtual RowGroup group() const = 0;
  virtual const char* kind_name() const = 0;  // "header", "steps", "gpu_stream", "cpu_track", "cpu_section"
  // A short label for menus and the state dump ("GPU0 stream 7", "thread 4242").
  virtual std::string label(const TimelineContext& ctx) const = 0;
  // Shown at all this frame (its rank group, or its section, is open).
  virtual bool visible(const TimelineState& tl) const;
  // Height in pixels (the same every frame for a given profile, scale and open state).
  virtual float height(const TimelineContext& ctx) const = 0;
  // Visible range -> draw items. Called only when the row [y, y + height) is on screen.
  virtual void preprocess(TimelineContext& ctx, float y) = 0;
  // ImDrawList calls for the row at Y (after preprocess); sets ctx.hover when the mouse is over something.
  virtual void draw(TimelineContext& ctx, float y) = 0;
  // The tooltip of HOVER (which this item reported). Implemented in timeline_tooltips.cpp.
  virtual void tooltip(const TimelineContext& ctx, const Hover& hover) const = 0;
  // The sub-lane of EVENT in this row (false when the row does not hold it) and the lanes' height.
  virtual bool lane_of(const TimelineContext&, const EventRef&, std::uint32_t&) const { return false; }
  virtual float lane_height(const TimelineContext& ctx) const;

  // Layout of the current frame, set by the controller: top of the row and whether it is laid out.
  float y = 0;
  bool shown = false;
  // Search matches per sub-lane (set by the search; empty when there is none on this row).
  std::vector<std::vector<MatchSpan>> match_lanes;

 protected:
  // Outlines this row's search matches on LANE (at LY, height H), folded per pixel.
  void draw_matches(TimelineContext& ctx, std::uint32_t lane, float ly, float h) const;
  std::int32_t rank_index_;
};

// The rank's header row: name, host, exposed-communication band. Draws the group's step boundaries over
// the rows below it (draw_step_lines) once the group is laid out.
class RankHeaderItem final : public TimelineItem {
 public:
  using TimelineItem::TimelineItem;
  RowGroup group() const override { return RowGroup::kHeader; }
  const char* kind_name() const override { return "header"; }
  std::string label(const TimelineContext& ctx) const override;
  bool visible(const TimelineState&) const override { return true; }
  float height(const TimelineContext& ctx) const override { return ctx.header_h(); }
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;
  void draw_step_lines(TimelineContext& ctx, float group_top, float group_bottom) const;

 private:
  std::vector<DrawItem> band_;
};

// The steps of one rank (ProfilerStep or NVTX step ranges).
class StepsItem final : public TimelineItem {
 public:
  using TimelineItem::TimelineItem;
  RowGroup group() const override { return RowGroup::kSteps; }
  const char* kind_name() const override { return "steps"; }
  std::string label(const TimelineContext&) const override { return "steps"; }
  float height(const TimelineContext& ctx) const override { return ctx.lane_h(); }
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;
  bool lane_of(const TimelineContext&, const EventRef& event, std::uint32_t& lane) const override;

 private:
  std::vector<DrawItem> items_;
};

// One GPU stream: its activities on as many sub-lanes as overlaps need.
class GpuStreamItem final : public TimelineItem {
 public:
  GpuStreamItem(std::int32_t rank_index, std::uint32_t stream) : TimelineItem(rank_index), stream_(stream) {}
  std::uint32_t stream() const { return stream_; }
  RowGroup group() const override { return RowGroup::kGpu; }
  const char* kind_name() const override { return "gpu_stream"; }
  std::string label(const TimelineContext& ctx) const override;
  float height(const TimelineContext& ctx) const override;
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;
  bool lane_of(const TimelineContext& ctx, const EventRef& event, std::uint32_t& lane) const override;

 private:
  void mark(TimelineContext& ctx, const Activity& a, const DrawItem& item, float x0, float x1, float ly);
  void draw_utilisation(TimelineContext& ctx, float uy);
  std::uint32_t stream_;
  std::vector<std::vector<DrawItem>> lanes_;  // per sub-lane, reused
  // The utilisation lane, on a grid of buckets fixed in time (from the profile's first nanosecond, a power
  // of two of nanoseconds wide), kept between frames (update_utilisation_grid).
  UtilisationGrid utilisation_;
};

// One CPU track: a CPU thread, its ranges on one lane per nesting depth and its CUDA API calls on lanes
// below them (shown when the rank's CPU section is open), or a GPU annotation track (always shown). A
// thread that issued API calls but has no ranges is a track of API calls only.
class CpuTrackItem final : public TimelineItem {
 public:
  // TRACK: index into Rank::tracks or kNoRow; API_THREAD: index into LaunchIndex::threads or kNoRow.
  CpuTrackItem(std::int32_t rank_index, std::uint32_t track, bool gpu, std::uint32_t api_thread)
      : TimelineItem(rank_index), track_(track), api_thread_(api_thread), gpu_(gpu) {}
  std::uint32_t track() const { return track_; }
  std::uint32_t api_thread() const { return api_thread_; }
  RowGroup group() const override { return gpu_ ? RowGroup::kGpu : RowGroup::kCpu; }
  const char* kind_name() const override { return gpu_ ? "gpu_annotation" : "cpu_thread"; }
  std::string label(const TimelineContext& ctx) const override;
  bool visible(const TimelineState& tl) const override;
  float height(const TimelineContext& ctx) const override;
  float lane_height(const TimelineContext& ctx) const override { return ctx.cpu_lane_h(); }
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;
  bool lane_of(const TimelineContext& ctx, const EventRef& event, std::uint32_t& lane) const override;
  std::uint32_t range_lanes(const TimelineContext& ctx) const;
  std::uint32_t api_lanes(const TimelineContext& ctx) const;

 private:
  void draw_ranges(TimelineContext& ctx, float y);
  void draw_api(TimelineContext& ctx, float y);
  std::uint32_t track_, api_thread_;
  bool gpu_;
  std::vector<std::vector<DrawItem>> lanes_;  // range lanes, then API lanes
};

// What the OS recorded of one CPU thread (Nsight Systems' thread scheduling and CPU sampling): the intervals
// it ran on a core (folds drawn as tall as the share of their span it ran), and its CPU samples as ticks
// along the top (at most one per pixel column, each counting the samples it stands for). Shown with the
// rank's CPU threads, above the thread's own ranges.
class ThreadStateItem final : public TimelineItem {
 public:
  ThreadStateItem(std::int32_t rank_index, std::uint32_t thread)
      : TimelineItem(rank_index), thread_(thread) {}
  std::uint32_t thread() const { return thread_; }
  RowGroup group() const override { return RowGroup::kCpu; }
  const char* kind_name() const override { return "os_thread"; }
  std::string label(const TimelineContext& ctx) const override;
  bool visible(const TimelineState& tl) const override;
  float height(const TimelineContext& ctx) const override;
  float lane_height(const TimelineContext& ctx) const override { return ctx.cpu_lane_h(); }
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;
  // Hover::lane of a hovered sample tick (Hover::draw: its first sample and how many it stands for).
  static constexpr std::uint32_t kSampleLane = 0xfffffffeu;

 private:
  std::uint32_t lanes(const TimelineContext& ctx) const;
  std::uint32_t thread_;
  std::vector<std::vector<DrawItem>> lanes_;  // on-CPU intervals per lane
  std::vector<DrawItem> ticks_;               // samples
};

// The "CPU threads (n, m ranges)" row that opens and closes the rank's CPU threads.
class CpuSectionItem final : public TimelineItem {
 public:
  CpuSectionItem(std::int32_t rank_index, std::size_t threads)
      : TimelineItem(rank_index), threads_(threads) {}
  RowGroup group() const override { return RowGroup::kSection; }
  const char* kind_name() const override { return "cpu_section"; }
  std::string label(const TimelineContext&) const override { return "CPU threads"; }
  float height(const TimelineContext& ctx) const override { return ctx.lane_h(); }
  void preprocess(TimelineContext&, float) override {}
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;

 private:
  std::size_t threads_;
};

// One row of the baseline profile stacked under the same rank of the open one (View::set_baseline_stacked):
// its steps, or one of its GPU streams. Its times are shifted by OFFSET_NS (the open rank's first step start
// minus the baseline rank's), so that both runs' steps start at the same x. Drawn on a tinted background
// with a "baseline" tag; hovering shows the baseline event, clicking selects nothing.
class BaselineItem final : public TimelineItem {
 public:
  // RANK_INDEX: the open profile's rank it sits under; BASE_RANK: index into BASE's Profile::ranks();
  // STREAM: index into that rank's streams, or kNoRow for its steps.
  BaselineItem(std::int32_t rank_index, const LoadedProfile* base, std::uint32_t base_rank,
               std::uint32_t stream, TimeNs offset_ns)
      : TimelineItem(rank_index),
        base_(base),
        base_rank_(base_rank),
        stream_(stream),
        offset_ns_(offset_ns) {}
  RowGroup group() const override { return RowGroup::kGpu; }
  const char* kind_name() const override { return stream_ == kNoRow ? "baseline_steps" : "baseline_stream"; }
  std::string label(const TimelineContext& ctx) const override;
  float height(const TimelineContext& ctx) const override;
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;
  TimeNs offset_ns() const { return offset_ns_; }
  std::uint32_t stream() const { return stream_; }

 private:
  // "what-if steps (rank 1, stage 1)": the steps row's label, drawn and in the view's state.
  std::string steps_label() const;
  // The baseline rank's own critical path (LoadedProfile::critical) on this stream's lanes, on the baseline's
  // clock (timeline_critical_path.cpp).
  void draw_critical_path(TimelineContext& ctx, float y) const;

  const LoadedProfile* base_;
  std::uint32_t base_rank_, stream_;
  TimeNs offset_ns_;
  std::vector<std::vector<DrawItem>> lanes_;
};

// Adds BASE's rows under each rank of LOADED that BASE has too (same global rank): its steps and GPU
// streams, after the rank's own GPU rows in STATE's display order. Returns the number of rows added.
// Which baseline rank stands under each rank of the open profile: the rank of the same number; when the two
// share none (another job's ranks), the ranks in order, and IN_ORDER says so.
struct BaselinePairing {
  std::vector<std::ptrdiff_t>
      base_of;  // per Profile::ranks() index: index into the baseline's ranks, -1 none
  bool in_order = false;
};
BaselinePairing baseline_pairing(const Profile& profile, const Profile& base);
std::size_t add_baseline_items(const LoadedProfile& loaded, const LoadedProfile& base, TimelineState& state);

// The items of LOADED (per rank a header, steps, GPU streams, GPU annotation tracks, the CPU section row
// and the CPU threads), with the display order, pins and row lookup of STATE reset to match.
void build_timeline_items(const LoadedProfile& loaded, TimelineState& state);

// The folded-run tooltip every lane kind shares (timeline_tooltips.cpp).
// BUSY_NS: the folded events' busy time, when known (GPU streams), else -1.
void folded_tooltip(const DrawItem& item, std::string_view first_name, TimeNs busy_ns = -1);
// What launched activity A of rank R (API call, CPU operator, thread), as tooltip lines.
void launch_tooltip_lines(const TimelineContext& ctx, std::size_t r, std::uint32_t activity);

}  // namespace meshscope::gui
