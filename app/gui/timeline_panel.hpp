// The Timeline panel, an object of its own: the rows of every rank (timeline_items.hpp), their layout, the
// view of time (timeline_controller.hpp), the input (zoom, pan, select, keys, search, the row menu), the
// critical-path overlay and the bottom pane (timeline_details.hpp), with all the state they keep
// (TimelineState). The view lends it the open profile, the lazily loaded ranks, the baseline whose rows it
// stacks, and what the view draws in its toolbar (the What-if button).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "app/gui/loaded_profile.hpp"
#include "app/gui/timeline_controller.hpp"
#include "app/gui/timeline_items.hpp"

struct ImDrawList;

namespace meshscope {
class JsonWriter;
}  // namespace meshscope

namespace meshscope::gui {

class LazyRanks;
class TimelineDetails;

class TimelinePanel {
 public:
  // What the view lends the panel.
  struct Host {
    // The view's open profile (its own pointer, so that the panel always sees the profile shown).
    const std::shared_ptr<LoadedProfile>* loaded = nullptr;
    const std::unique_ptr<LazyRanks>* lazy = nullptr;  // a large job's rank loader, when opened lazily
    // The baseline (or what-if replay) and whether its rows are stacked under each rank's.
    const std::shared_ptr<LoadedProfile>* baseline = nullptr;
    const bool* baseline_stacked = nullptr;
    std::function<void(bool)> set_baseline_stacked;
    std::function<void()> whatif_button;  // the toolbar's What-if button and editor (the view's)
  };
  // The order and pins of the rows, by what each row is: kept across a lazy profile's generations.
  struct RowsKept {
    struct RowKey {
      std::int32_t rank_index;
      std::string_view kind;
      std::uint32_t a, b;
      auto operator<=>(const RowKey&) const = default;
    };
    std::map<RowKey, double> position;
    std::map<std::int32_t, double> header_position;
    std::set<RowKey> pinned;
    bool reordered = false;
  };

  explicit TimelinePanel(Host host);
  ~TimelinePanel();
  TimelinePanel(const TimelinePanel&) = delete;
  TimelinePanel& operator=(const TimelinePanel&) = delete;

  // The panel (LOADING: a profile is being opened).
  void draw(bool loading);
  // A profile was opened (or closed): the timeline starts afresh on it, the critical-path toggle kept.
  void open_profile();
  // A lazy profile's next generation: RowsKept before it is installed, generation_installed after. The
  // timeline keeps its zoom, open ranks, order, pins, selection (when its rank is still loaded) and search.
  RowsKept rows_kept() const;
  void generation_installed(const RowsKept& kept);
  // Follows a panel's link (timeline_controller.hpp).
  void show(const ShowOnTimeline& show);
  // The rows for the open profile, with the baseline's under each rank when stacked; dropped: made again on
  // the next frame.
  void rebuild_items();
  void drop_items();
  // The state dump's "timeline" (View_State.cpp).
  void write_state(JsonWriter& j) const;

  // What tests, scripts and the view read and set.
  TimelineState& state() { return tl_; }
  const TimelineState& state() const { return tl_; }
  void set_time_range(TimeNs start, TimeNs end) { tl_.view.set(start, end); }
  // Opens (or collapses) every rank group.
  void set_all_ranks_open(bool open) { tl_.rank_open.assign(tl_.rank_open.size(), open ? 1 : 0); }
  void select(const EventRef& event, bool jump) { timeline_select(event, jump); }
  void search(std::string_view text);
  void jump_to_match(int delta) { timeline_jump_to_match(delta); }
  TimelineDetails& details() { return *details_; }
  const TimelineDetails& details() const { return *details_; }

 private:
  const std::shared_ptr<LoadedProfile>& loaded() const { return *host_.loaded; }
  LazyRanks* lazy() const { return host_.lazy->get(); }
  const std::shared_ptr<LoadedProfile>& baseline() const { return *host_.baseline; }
  bool baseline_stacked() const { return *host_.baseline_stacked; }
  void lazy_want(const TimelineContext& ctx);  // the ranks the timeline shows this frame

  void timeline_toolbar();
  void timeline_legend();
  void timeline_canvas();
  TimelineContext timeline_context(float x0, float x1, bool hovered) const;
  float timeline_layout(TimelineContext& ctx, float y0, float pins_h);
  float timeline_pins_height(const TimelineContext& ctx) const;
  void timeline_draw_rows(TimelineContext& ctx, bool pinned, float y0);
  void timeline_overlays(TimelineContext& ctx);
  void timeline_hover_actions(const TimelineContext& ctx);
  void timeline_handle_input(float x0, float x1, bool hovered, bool ruler_hovered);
  void timeline_keys(float x0, float x1);
  void timeline_draw_ruler(ImDrawList* dl, float x0, float x1, float y0, float label_w, float h);
  void timeline_run_search();
  void timeline_jump_to_match(int delta);
  void timeline_fit_selection();
  void timeline_select(const EventRef& event, bool jump);
  bool timeline_event_rect(const TimelineContext& ctx, const EventRef& event, ImVec2& a, ImVec2& b) const;
  void timeline_flows(TimelineContext& ctx, const EventRef& event, ImU32 color);
  void timeline_row_menu(const TimelineContext& ctx);
  void timeline_move_row(std::uint32_t item, int direction);
  void timeline_move_rank(std::int32_t rank_index, int direction);
  // Critical path overlay (timeline_critical_path.cpp)
  void timeline_critical_path(TimelineContext& ctx);

  Host host_;
  TimelineState tl_;
  std::vector<std::uint32_t> flow_calls_;  // scratch of timeline_flows()
  struct PendingStep {                     // a step to select once its rank's events are loaded
    std::int32_t rank_index = -1;
    std::int64_t number = 0;
  } pending_step_;
  std::unique_ptr<TimelineDetails> details_;  // the bottom pane: Details and Range (timeline_details.hpp)
};

}  // namespace meshscope::gui
