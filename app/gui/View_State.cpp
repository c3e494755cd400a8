// View_State.cpp: the view's state as JSON, for input-driven tests and scripts. With MESHSCOPE_STATE_FILE
// set, every frame whose state differs from the last one written (and every 30th frame) rewrites that file
// atomically (written beside it, then renamed). Keys: frame, panel, loading, mouse[x, y], mouse_down,
// profile, ranks, summary{rank_index, steps[]{number, x0, y0, x1, y1}} (Summary panel only), timeline{t0_ns,
// t1_ns, first_ns, last_ns, canvas{x0, x1, ruler_y0, ruler_y1, rows_top, rows_bottom, pins_h}, rows[]{item,
// rank, kind, label, y, h, lane_h, pinned}, selected{kind, rank, index, name, start_ns, end_ns}, hovered,
// instance, range{active, start_ns, end_ns, ready, events, exposed_comm_ns}, bookmarks, menu[]{label, x0, y0,
// x1, y1}, search{text, matches, cursor}, rank_open[], cpu_open[]}, explorer{gpus, tp, pp, dp, cp, ep,
// micro_batch, global_batch, seq, cp_comm, cp_comm_combo[x0, y0, x1, y1] (zero while CP is 1), cp_exposed_s,
// valid, error, typing, comparable, start, model, hardware, save_message,
// save_button[x0, y0, x1, y1], controls{FIELD: [x0, y0, x1, y1]},
// pipeline_measured{button[x0, y0, x1, y1], rows[]{stage, rank, step, bubble_fraction, blocks}}},
// open_dialog, files_dir, baseline (its path, or ""), baseline_diff (the diff with the open profile is
// ready), baseline_error, overview{metric, sort, canvas[x0, y0, x1, y1], row_h, rows, columns, ranks_per_row,
// start_ns, column_ns, order[] (ranks, top row first), outliers[] (ranks), slowest_step, from_tables}
// (Overview panel only), lazy{loaded_ranks, loaded[] (ranks), pending, bytes, budget, generations, evicted,
// load_s, index_s, generation_s, sample} (a profile opened with lazy ranks only). Coordinates are window
// pixels.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/gui/View.hpp"
#include "app/gui/explorer_panel.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/lazy_ranks.hpp"
#include "app/gui/overview_panel.hpp"
#include "app/gui/summary_panel.hpp"
#include "app/gui/timeline_details.hpp"
#include "app/gui/timeline_panel.hpp"
#include "profiler/json_writer.hpp"

namespace meshscope::gui {

namespace {

void write_event(JsonWriter& j, const Profile& profile, const EventRef& e) {
  j.begin_object();
  j.field("kind", to_string(e.kind));
  if (e.valid()) {
    const EventSpan span = span_of(profile, e);
    j.field("rank", profile.ranks()[static_cast<std::size_t>(e.rank_index)].rank);
    j.field("rank_index", e.rank_index);
    j.field("index", static_cast<std::int64_t>(e.index));
    j.field("name", event_name(profile, e));
    j.field("start_ns", span.start_ns);
    j.field("end_ns", span.end_ns);
  }
  j.end_object();
}

}  // namespace

// The state dump's "timeline": the view, the canvas, the rows shown, the selection, hover, range, menu and
// search (a profile is loaded).
void TimelinePanel::write_state(JsonWriter& j) const {
  const Profile& profile = *loaded()->profile;
  TimelineContext ctx;
  ctx.loaded = loaded().get();
  ctx.profile = &profile;
  ctx.ui = ImGui::GetCurrentContext() ? ui_scale() : 1.0f;
  j.key("timeline").begin_object();
  j.field("t0_ns", tl_.view.start()).field("t1_ns", tl_.view.end());
  j.field("first_ns", profile.first_ns()).field("last_ns", profile.last_ns());
  j.key("canvas").begin_object();
  j.field("x0", static_cast<double>(tl_.canvas_x0)).field("x1", static_cast<double>(tl_.canvas_x1));
  j.field("ruler_y0", static_cast<double>(tl_.ruler_y0)).field("ruler_y1", static_cast<double>(tl_.ruler_y1));
  j.field("rows_top", static_cast<double>(tl_.rows_top))
      .field("rows_bottom", static_cast<double>(tl_.rows_bottom));
  j.field("pins_h", static_cast<double>(tl_.pins_h));
  j.end_object();
  j.key("rows").begin_array();
  for (std::uint32_t i : tl_.order) {
    const TimelineItem& item = *tl_.items[i];
    if (!item.shown) continue;
    j.begin_object();
    j.field("item", static_cast<std::int64_t>(i));
    j.field("rank", profile.ranks()[static_cast<std::size_t>(item.rank_index())].rank);
    j.field("kind", item.kind_name());
    j.field("label", item.label(ctx));
    j.field("y", static_cast<double>(item.y));
    j.field("h", static_cast<double>(item.height(ctx)));
    j.field("lane_h", static_cast<double>(item.lane_height(ctx)));
    j.field("pinned", tl_.pinned[i] != 0);
    j.end_object();
  }
  j.end_array();
  j.key("selected");
  write_event(j, profile, tl_.selected);
  j.key("hovered");
  write_event(j, profile, tl_.hovered);
  j.field("instance", tl_.selected_instance);
  j.key("range").begin_object();
  j.field("active", tl_.has_selection).field("selecting", tl_.selecting);
  j.field("start_ns", std::min(tl_.sel_a, tl_.sel_b)).field("end_ns", std::max(tl_.sel_a, tl_.sel_b));
  const measure::RangeTotals* totals = details_->range_totals();
  j.field("ready", totals != nullptr);
  j.field("events", totals ? totals->events : std::int64_t{0});
  j.field("exposed_comm_ns", totals ? totals->exposed_comm_ns : TimeNs{0});
  j.field("kernels", totals ? static_cast<std::int64_t>(totals->kernels.size()) : std::int64_t{0});
  j.end_object();
  j.field("bookmarks", static_cast<std::int64_t>(tl_.bookmarks.size()));
  j.key("menu").begin_array();
  for (const auto& m : tl_.menu_rects) {
    j.begin_object().field("label", m.label);
    j.field("x0", static_cast<double>(m.min.x)).field("y0", static_cast<double>(m.min.y));
    j.field("x1", static_cast<double>(m.max.x)).field("y1", static_cast<double>(m.max.y));
    j.end_object();
  }
  j.end_array();
  j.key("search").begin_object();
  j.field("text", std::string(tl_.filter)).field("matches", static_cast<std::int64_t>(tl_.matches.size()));
  j.field("cursor", tl_.match_cursor);
  j.end_object();
  j.key("rank_open").begin_array();
  for (auto v : tl_.rank_open) j.value(v != 0);
  j.end_array();
  j.key("cpu_open").begin_array();
  for (auto v : tl_.cpu_open) j.value(v != 0);
  j.end_array();
  j.end_object();
}

std::string View::state_json() const {
  JsonWriter j;
  j.begin_object();
  j.field("frame", static_cast<std::int64_t>(frame_));
  j.field("panel", to_string(panel_));
  j.field("loading", loading());
  if (ImGui::GetCurrentContext()) {
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    j.key("mouse")
        .begin_array()
        .value(static_cast<double>(mouse.x))
        .value(static_cast<double>(mouse.y))
        .end_array();
    j.field("mouse_down", ImGui::IsAnyMouseDown());
  }
  j.field("load_error", load_error_);
  j.field("open_dialog", files_.visible);
  j.field("files_dir", files_.dir.string());
  j.field("profile", loaded_ ? loaded_->source.string() : std::string());
  j.field("baseline", bl_.loaded ? bl_.loaded->source.string() : std::string());
  j.field("baseline_diff", baseline_diff() != nullptr);
  j.field("baseline_error", bl_.error);
  j.field("ranks", loaded_ ? static_cast<std::int64_t>(loaded_->profile->ranks().size()) : std::int64_t{0});
  j.field("events", loaded_ && loaded_->events);  // false while only the summaries' preview is open
  if (loaded_ && loaded_->lazy) {
    const auto& lazy = *loaded_->lazy;
    j.key("lazy");
    j.begin_object();
    j.field("loaded_ranks", static_cast<std::int64_t>(lazy.loaded_ranks));
    j.key("loaded");
    j.begin_array();
    for (std::size_t r = 0; r < lazy.loaded.size(); ++r) {
      if (lazy.loaded[r]) j.value(static_cast<std::int64_t>(loaded_->profile->ranks()[r].rank));
    }
    j.end_array();
    const LazyRanks::Stats stats = lazy_ ? lazy_->stats() : LazyRanks::Stats{};
    j.field("pending", static_cast<std::int64_t>(lazy_ ? lazy_->pending() : 0));
    j.field("bytes", static_cast<std::int64_t>(lazy.bytes));
    j.field("budget", static_cast<std::int64_t>(lazy.budget));
    j.field("generations", static_cast<std::int64_t>(stats.generations));
    j.field("evicted", static_cast<std::int64_t>(stats.evicted));
    j.field("load_s", stats.load_s);    // reading ranks
    j.field("index_s", stats.index_s);  // analysing each
    j.field("generation_s", stats.generation_s);
    j.field("sample", lazy.sample);
    j.end_object();
  }
  if (panel_ == Panel::kSummary) summary_->dump_state(j);
  if (panel_ == Panel::kOverview && loaded_) overview_->dump_state(j, *loaded_);
  explorer_->dump_state(j);
  if (loaded_) timeline_->write_state(j);
  j.end_object();
  return j.str();
}

void View::write_state() {
  std::string state = state_json();
  // Compare without the frame number, so that an idle view does not rewrite the file every frame.
  const auto body = state.find(',');
  const std::string key = body == std::string::npos ? state : state.substr(body);
  if (key == state_written_ && frame_ % 30 != 0) return;
  state_written_ = key;
  const std::string tmp = state_file_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << state << '\n';
  }
  std::error_code error;
  std::filesystem::rename(tmp, state_file_, error);
}

}  // namespace meshscope::gui
