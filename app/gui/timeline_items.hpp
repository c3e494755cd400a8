// Timeline items (Tracy's TimelineItem): the timeline is a controller (View_Timeline.cpp) holding one item
// per row kind, each with the same three phases every frame:
//   preprocess  the visible time range becomes draw items (timeline_lod.hpp: binary search, sub-pixel
//               folding with counts); plain C++, no ImGui calls;
//   draw        ImDrawList calls only; records what the mouse is over in TimelineContext::hover;
//   tooltip     what the hovered thing shows (timeline_tooltips.cpp), called once per frame by the
//               controller for the one hovered item.
//
// [SECTION] Event references and hover
// [SECTION] Timeline state (kept across frames) and context (one frame)
// [SECTION] Items: rank header, steps, GPU stream, CPU track (threads and GPU annotations), CPU section
#pragma once

#include <imgui.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "app/gui/timeline_lod.hpp"
#include "profiler/profile.hpp"

namespace meshscope::gui {

struct LoadedProfile;
class TimelineItem;

// [SECTION] Event references and hover
// -------------------------------------------------------------------------

// One event of one rank: a GPU activity (index into Rank::activities), a CPU range (Rank::ranges), a CUDA
// API call (Rank::api_calls) or a step (Rank::steps).
enum class EventKind : std::uint8_t { kNone, kActivity, kRange, kApiCall, kStep };
struct EventRef {
  EventKind kind = EventKind::kNone;
  std::int32_t rank_index = -1;  // into Profile::ranks()
  std::uint32_t index = 0;
  bool valid() const { return kind != EventKind::kNone; }
  friend bool operator==(const EventRef&, const EventRef&) = default;
};

// What the mouse is over this frame.
enum class HoverKind : std::uint8_t { kNone, kEvent, kFolded, kBand, kLabel };
struct Hover {
  HoverKind kind = HoverKind::kNone;
  const TimelineItem* item = nullptr;
  EventRef event;   // kEvent: the event; kFolded: the first event of the fold
  DrawItem draw{};  // kEvent/kFolded: the draw item; kBand: the merged interval
  std::uint32_t lane = 0;
};

// [SECTION] Timeline state and context
// ---------------------------------------------------------------------------

// Everything the timeline keeps from frame to frame (View::tl_).
struct TimelineState {
  TimeNs t0 = 0, t1 = 0;                             // visible range; t1 == t0 until the first fit
  std::vector<std::unique_ptr<TimelineItem>> items;  // in display order; built once per profile
  std::vector<std::uint8_t> rank_open;
  std::vector<std::uint8_t> cpu_open;
  std::size_t frame_items = 0, frame_events = 0;
  // Box selection (right drag or shift + left drag)
  bool selecting = false, has_selection = false;
  TimeNs sel_a = 0, sel_b = 0;
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
  std::vector<std::int8_t> name_match;  // per StringId: 1 matches, 0 not
  struct Match {
    TimeNs start, end;
    std::int32_t rank_index;
    std::int32_t stream;  // >= 0: stream index; < 0: -1 - track index
    std::uint32_t index;  // within the stream or track
  };
  std::vector<Match> matches;
  int match_cursor = -1;
  bool focus_search = false;
  std::int32_t scroll_to_rank = -1;
};

// What every item reads in one frame (Tracy's TimelineContext), and what drawing reports back.
struct TimelineContext {
  const LoadedProfile* loaded = nullptr;
  const Profile* profile = nullptr;
  TimelineState* tl = nullptr;
  ImDrawList* dl = nullptr;
  float label_x = 0;      // left edge of the label column (screen)
  float x0 = 0, x1 = 0;   // time area (screen)
  TimeNs t0 = 0, t1 = 0;  // visible range
  double ns_per_px = 1;
  LodParams lod;
  float win_top = 0, win_bottom = 0;  // visible part of the canvas (screen)
  ImVec2 mouse;
  bool hovered = false;  // the canvas is hovered
  bool click = false;    // a left click (not a drag) was released over the canvas this frame
  // Search
  bool filtering = false;
  const TimelineState::Match* current = nullptr;
  // Output of the draw phase
  Hover hover;
  std::vector<DrawItem> scratch;  // reused by items that do not keep their own draw items

  float x_of(TimeNs t) const { return x0 + static_cast<float>(static_cast<double>(t - t0) / ns_per_px); }
  TimeNs t_of(float x) const { return t0 + static_cast<TimeNs>(static_cast<double>(x - x0) * ns_per_px); }
  bool row_visible(float y, float h) const { return y + h >= win_top && y <= win_bottom; }
  bool name_matches(StringId id) const;
};

// Layout constants of the timeline (pixels at scale 1).
inline constexpr float kLabelWidth = 200.0f;
inline constexpr float kRulerHeight = 24.0f;
inline constexpr float kHeaderHeight = 24.0f;
inline constexpr float kLaneHeight = 18.0f;
inline constexpr float kCpuLaneHeight = 15.0f;
inline constexpr float kBandHeight = 5.0f;
inline constexpr float kMinPx = 3.0f;

// Text clipped to [x0, x1], shortened to what can fit (so long kernel names cost nothing).
void clipped_text(ImDrawList* dl, float x0, float x1, float y, ImU32 color, std::string_view text);
const char* kind_text(ActivityKind kind);

// [SECTION] Items
// -----------------------------------------------------------------------------------------------

class TimelineItem {
 public:
  explicit TimelineItem(std::int32_t rank_index) : rank_index_(rank_index) {}
  virtual ~TimelineItem() = default;
  TimelineItem(const TimelineItem&) = delete;
  TimelineItem& operator=(const TimelineItem&) = delete;

  std::int32_t rank_index() const { return rank_index_; }
  // Shown at all this frame (its rank group, or its section, is open).
  virtual bool visible(const TimelineState& tl) const;
  // Height in pixels (the same every frame for a given profile and open state).
  virtual float height(const TimelineContext& ctx) const = 0;
  // Visible range -> draw items. Called only when the row [y, y + height) is on screen.
  virtual void preprocess(TimelineContext& ctx, float y) = 0;
  // ImDrawList calls for the row at Y (after preprocess); sets ctx.hover when the mouse is over something.
  virtual void draw(TimelineContext& ctx, float y) = 0;
  // The tooltip of HOVER (which this item reported). Implemented in timeline_tooltips.cpp.
  virtual void tooltip(const TimelineContext& ctx, const Hover& hover) const = 0;

 protected:
  std::int32_t rank_index_;
};

// The rank's header row: name, host, exposed-communication band. Draws the group's step boundaries over
// the rows below it (draw_step_lines) once the group is laid out.
class RankHeaderItem final : public TimelineItem {
 public:
  using TimelineItem::TimelineItem;
  bool visible(const TimelineState&) const override { return true; }
  float height(const TimelineContext&) const override { return kHeaderHeight; }
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
  float height(const TimelineContext&) const override { return kLaneHeight; }
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;

 private:
  std::vector<DrawItem> items_;
};

// One GPU stream: its activities on as many sub-lanes as overlaps need.
class GpuStreamItem final : public TimelineItem {
 public:
  GpuStreamItem(std::int32_t rank_index, std::uint32_t stream) : TimelineItem(rank_index), stream_(stream) {}
  std::uint32_t stream() const { return stream_; }
  float height(const TimelineContext& ctx) const override;
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;

 private:
  std::uint32_t stream_;
  std::vector<std::vector<DrawItem>> lanes_;  // per sub-lane, reused
};

// One CPU track: a CPU thread (shown when the rank's CPU section is open) or a GPU annotation track
// (always shown), its ranges on one lane per nesting depth.
class CpuTrackItem final : public TimelineItem {
 public:
  CpuTrackItem(std::int32_t rank_index, std::uint32_t track, bool gpu)
      : TimelineItem(rank_index), track_(track), gpu_(gpu) {}
  std::uint32_t track() const { return track_; }
  bool visible(const TimelineState& tl) const override;
  float height(const TimelineContext& ctx) const override;
  void preprocess(TimelineContext& ctx, float y) override;
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext& ctx, const Hover& hover) const override;

 private:
  std::uint32_t track_;
  bool gpu_;
  std::vector<std::vector<DrawItem>> lanes_;
};

// The "CPU threads (n, m ranges)" row that opens and closes the rank's CPU threads.
class CpuSectionItem final : public TimelineItem {
 public:
  CpuSectionItem(std::int32_t rank_index, std::size_t threads)
      : TimelineItem(rank_index), threads_(threads) {}
  float height(const TimelineContext&) const override { return kLaneHeight; }
  void preprocess(TimelineContext&, float) override {}
  void draw(TimelineContext& ctx, float y) override;
  void tooltip(const TimelineContext&, const Hover&) const override {}

 private:
  std::size_t threads_;
};

// The items of LOADED in display order: per rank a header, steps, GPU streams, GPU annotation tracks, the
// CPU section row and the CPU threads.
std::vector<std::unique_ptr<TimelineItem>> build_timeline_items(const LoadedProfile& loaded);

// The folded-run tooltip every lane kind shares (timeline_tooltips.cpp).
void folded_tooltip(const DrawItem& item, std::string_view first_name);

}  // namespace meshscope::gui
