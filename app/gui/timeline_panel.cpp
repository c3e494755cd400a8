// timeline_panel.cpp: the Timeline panel (timeline_panel.hpp). It holds the rows (timeline_items.hpp: one
// item per row kind, each preprocessed into draw items and drawn with ImDrawList calls only), lays them out
// (pinned rows first, in a band that does not scroll), runs the hovered row's tooltip, and owns the input:
// zoom, pan, range selection on the time axis, click selection, keyboard, search, and the row menu (pin,
// move, collapse). The details of the selection and the range totals are the bottom pane's
// (timeline_details.hpp).
//
// [SECTION] View range (fit, clamp, show an event at the current zoom)
// [SECTION] Toolbar (search, fit, bookmarks, legend)
// [SECTION] Canvas: ruler, layout, rows, overlays (selection, launch flows, links, range)
// [SECTION] Input: mouse, keyboard
// [SECTION] Search
// [SECTION] Row menu: pin, move, collapse
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "analysis/measure/collectives.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/lazy_ranks.hpp"
#include "app/gui/timeline_details.hpp"
#include "app/gui/timeline_items.hpp"
#include "app/gui/timeline_panel.hpp"

namespace meshscope::gui {

namespace {

constexpr TimeNs kMinRangeNs = TimelineController::kMinRangeNs;
constexpr std::size_t kMaxFlowArrows = 256;

bool contains_ci(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return false;
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

// A launch arrow from FROM to TO: an S-curve leaving and entering vertically, with a head at TO.
void draw_flow(ImDrawList* dl, ImVec2 from, ImVec2 to, ImU32 color, float ui) {
  const float mid = (from.y + to.y) * 0.5f;
  dl->AddBezierCubic(from, ImVec2(from.x, mid), ImVec2(to.x, mid), to, color, 1.5f * ui);
  const float dir = to.y < from.y ? 1.0f : -1.0f;  // the head points up when the curve goes up
  const float s = 5.0f * ui;
  dl->AddTriangleFilled(to, ImVec2(to.x - s * 0.7f, to.y + dir * s), ImVec2(to.x + s * 0.7f, to.y + dir * s),
                        color);
}

}  // namespace

// [SECTION] View range
// ------------------------------------------------------------------------------------------

// F: the selected event, else the selected range, else the whole profile.
void TimelinePanel::timeline_fit_selection() {
  if (!loaded()) return;
  if (tl_.selected.valid()) {
    const EventSpan span = span_of(*loaded()->profile, tl_.selected);
    tl_.view.zoom_to(span.start_ns, span.end_ns);
  } else if (tl_.has_selection) {
    tl_.view.zoom_to(std::min(tl_.sel_a, tl_.sel_b), std::max(tl_.sel_a, tl_.sel_b));
  } else {
    tl_.view.fit();
  }
}

void TimelinePanel::timeline_select(const EventRef& event, bool jump) {
  tl_.selected = event;
  tl_.selected_instance = -1;
  if (!event.valid() || !loaded()) return;
  const auto r = static_cast<std::size_t>(event.rank_index);
  const Rank& rank = loaded()->profile->ranks()[r];
  if (event.kind == EventKind::kActivity) {
    const Activity& a = rank.activities[event.index];
    if (a.collective >= 0 && static_cast<std::size_t>(a.collective) < rank.collectives.size())
      tl_.selected_instance = loaded()->instance_of[r][static_cast<std::size_t>(a.collective)];
  }
  tl_.details_tab = 0;
  if (!jump) return;
  tl_.rank_open[r] = 1;
  const bool cpu = event.kind == EventKind::kApiCall || (event.kind == EventKind::kRange && [&] {
                     for (const CpuTrack& t : rank.tracks) {
                       if (event.index >= t.first && event.index < t.first + t.count) return !t.gpu;
                     }
                     return false;
                   }());
  if (cpu) tl_.cpu_open[r] = 1;
  const EventSpan span = span_of(*loaded()->profile, event);
  tl_.view.show(span.start_ns, span.end_ns);
  tl_.scroll_to = event;
}

TimelinePanel::TimelinePanel(Host host)
    : host_(std::move(host)),
      details_(std::make_unique<TimelineDetails>(TimelineDetails::Host{
          .loaded = host_.loaded, .timeline = &tl_, .select = [this](const EventRef& event, bool jump) {
            timeline_select(event, jump);
          }})) {}

TimelinePanel::~TimelinePanel() {
  details_->range_cancel();
}

// The rows for the open profile, with the baseline's under each rank when stacked. Row order and pins start
// afresh; a search is run again.
void TimelinePanel::rebuild_items() {
  build_timeline_items(*loaded(), tl_);
  if (baseline_stacked() && baseline() && !baseline()->lazy) add_baseline_items(*loaded(), *baseline(), tl_);
  if (tl_.filter[0]) timeline_run_search();
}

// The rows point into the baseline: dropped with it, built again by the next frame.
void TimelinePanel::drop_items() {
  tl_.items.clear();
  tl_.order.clear();
  tl_.pinned.clear();
  tl_.rows.clear();
  tl_.groups.clear();
  tl_.filter_dirty = tl_.filter[0] != 0;
}

void TimelinePanel::draw(bool loading) {
  if (!loaded()) {
    ImGui::Spacing();
    ImGui::TextDisabled(loading ? "Loading..."
                                : "Open a profile to see its timeline (File > Open, or drop a trace).");
    return;
  }
  tl_.view.set_bounds(loaded()->profile->first_ns(), loaded()->profile->last_ns());
  if (tl_.view.unset()) tl_.view.fit();
  if (tl_.items.empty()) rebuild_items();
  details_->range_poll();
  timeline_toolbar();
  timeline_canvas();
  details_->draw();
}

// [SECTION] Toolbar
// ------------------------------------------------------------------------------------------

namespace {

// The Bookmarks button's popup: each bookmark of TL (times from ORIGIN) zooms the view to it or is removed.
void bookmarks_popup(TimelineState& tl, TimeNs origin) {
  if (!ImGui::BeginPopup("##bookmarks")) return;
  if (tl.bookmarks.empty()) ImGui::TextDisabled("Select a range (drag on the time axis) and press B.");
  char a[32], b[32];
  for (std::size_t i = 0; i < tl.bookmarks.size(); ++i) {
    const auto& bm = tl.bookmarks[i];
    ImGui::PushID(static_cast<int>(i));
    char text[96];
    std::snprintf(text, sizeof text, "#%zu  %s + %s", i + 1,
                  duration_text(a, sizeof a, static_cast<double>(bm.start - origin)),
                  duration_text(b, sizeof b, static_cast<double>(bm.end - bm.start)));
    if (ImGui::Selectable(text, false, ImGuiSelectableFlags_DontClosePopups, ImVec2(px(260), 0))) {
      tl.view.set(bm.start, bm.end);
    }
    ImGui::SameLine();
    if (ImGui::SmallButton("remove"))
      tl.bookmarks.erase(tl.bookmarks.begin() + static_cast<std::ptrdiff_t>(i));
    ImGui::PopID();
  }
  ImGui::EndPopup();
}

}  // namespace

void TimelinePanel::timeline_toolbar() {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed('F', false)) tl_.focus_search = true;
  if (tl_.focus_search) {
    ImGui::SetKeyboardFocusHere();
    tl_.focus_search = false;
  }
  ImGui::SetNextItemWidth(px(300));
  bool enter = ImGui::InputTextWithHint("##search", "Search names (Ctrl+F)", tl_.filter, sizeof tl_.filter,
                                        ImGuiInputTextFlags_EnterReturnsTrue);
  // Enter ends the field's editing and the focus comes back only in a later frame: an Enter pressed in
  // between (fast Enters) steps too, instead of being lost.
  if (ImGui::IsItemActive()) {
    tl_.search_refocus = 0;
  } else if (tl_.search_refocus > 0) {
    --tl_.search_refocus;
    enter |= ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter), false);
  }
  if (enter) {
    if (tl_.filter_dirty) {
      timeline_run_search();
      timeline_jump_to_match(0);
    } else {
      timeline_jump_to_match(io.KeyShift ? -1 : 1);
    }
    ImGui::SetKeyboardFocusHere(-1);
    tl_.search_refocus = 3;
  }
  if (ImGui::IsItemEdited()) tl_.filter_dirty = true;
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Enter: next match, Shift+Enter: previous (centred at the current zoom)");
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) {
    if (tl_.filter_dirty) timeline_run_search();
    timeline_jump_to_match(-1);
  }
  ImGui::SameLine(0, 2);
  if (ImGui::ArrowButton("##next", ImGuiDir_Right)) {
    if (tl_.filter_dirty) timeline_run_search();
    timeline_jump_to_match(1);
  }
  note_if_past_edge();
  // Each item goes on this line when it fits before the window's edge, else starts the next one.
  char matches[48];
  if (tl_.filter[0] && !tl_.filter_dirty) {
    if (tl_.matches.empty())
      std::snprintf(matches, sizeof matches, "no match");
    else
      std::snprintf(matches, sizeof matches, "%d of %zu", tl_.match_cursor + 1, tl_.matches.size());
    same_line_if_fits(ImGui::CalcTextSize(matches).x);
    if (tl_.matches.empty())
      ImGui::TextColored(to_vec4(kColExposed), "%s", matches);
    else
      ImGui::TextUnformatted(matches);
    if (loaded()->lazy && ImGui::IsItemHovered())
      ImGui::SetTooltip("in the %zu ranks whose events are loaded (of %zu): open or zoom to load others",
                        loaded()->lazy->loaded_ranks, loaded()->profile->ranks().size());
  } else {
    same_line_if_fits(ImGui::CalcTextSize("       ").x);
    ImGui::TextDisabled("       ");
  }
  note_if_past_edge();
  same_line_if_fits(button_width("Fit (F)"));
  if (ImGui::Button("Fit (F)")) timeline_fit_selection();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Zoom to the selected event, else the selected range, else the whole profile");
  note_if_past_edge();
  same_line_if_fits(button_width("Expand all"));
  if (ImGui::Button("Expand all")) set_all_ranks_open(true);
  note_if_past_edge();
  same_line_if_fits(button_width("Collapse all"));
  if (ImGui::Button("Collapse all")) set_all_ranks_open(false);
  note_if_past_edge();
  char label[48], a[32];
  std::snprintf(label, sizeof label, "Bookmarks (%zu)", tl_.bookmarks.size());
  same_line_if_fits(button_width(label));
  if (ImGui::Button(label)) ImGui::OpenPopup("##bookmarks");
  note_if_past_edge();
  bookmarks_popup(tl_, loaded()->profile->first_ns());
  same_line_if_fits(checkbox_width("Critical path"));
  ImGui::Checkbox("Critical path", &tl_.critical);
  note_if_past_edge();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Outline the chain of CPU work, CUDA calls, kernels, copies and waits that set when each step "
        "ended\n(the selected step's, or every visible step's when none is selected; its length by kind is "
        "in the step's details)");
  host_.whatif_button();
  if (baseline()) {
    // A replay of this run (What-if...) is the baseline while it is shown: its rows say so.
    const char* rows_label = baseline()->whatif_edits.empty() ? "Baseline rows" : "What-if rows";
    same_line_if_fits(checkbox_width(rows_label));
    // A large baseline opened on its summaries (lazy ranks) has no events to stack.
    const bool summaries_only = baseline()->lazy.has_value();
    bool stacked = baseline_stacked() && !summaries_only;
    ImGui::BeginDisabled(summaries_only);
    if (ImGui::Checkbox(rows_label, &stacked)) host_.set_baseline_stacked(stacked);
    ImGui::EndDisabled();
    note_if_past_edge();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      if (summaries_only)
        ImGui::SetTooltip(
            "The baseline (%s) is a large job opened on its summaries (lazy ranks):\nthe Summary compares "
            "it, "
            "its rows are not stacked here",
            baseline()->source.filename().c_str());
      else
        ImGui::SetTooltip(
            "Show the baseline (%s) under each rank of the same number,\naligned at each run's "
            "first step start",
            baseline()->source.filename().c_str());
    }
    if (stacked && loaded()) {
      // Say what stands under what when it is not rank for rank.
      const BaselinePairing pairing = baseline_pairing(*loaded()->profile, *baseline()->profile);
      const auto& base_ranks = baseline()->profile->ranks();
      const auto paired = static_cast<std::size_t>(std::count_if(
          pairing.base_of.begin(), pairing.base_of.end(), [](std::ptrdiff_t b) { return b >= 0; }));
      if (pairing.in_order || paired < loaded()->profile->ranks().size()) {
        char said[128];
        if (pairing.in_order)
          std::snprintf(said, sizeof said,
                        "(no rank in common: the baseline's %zu rank(s) %d-%d paired in order)",
                        base_ranks.size(), base_ranks.front().rank, base_ranks.back().rank);
        else
          std::snprintf(said, sizeof said, "(%zu of %zu ranks have a baseline rank of their number)", paired,
                        loaded()->profile->ranks().size());
        same_line_if_fits(ImGui::CalcTextSize(said).x);
        ImGui::TextColored(to_vec4(kColBaseline), "%s", said);
        note_if_past_edge();
      }
    }
  }
  char view_span[48];
  std::snprintf(view_span, sizeof view_span, "view %s",
                duration_text(a, sizeof a, static_cast<double>(tl_.view.range())));
  same_line_if_fits(ImGui::CalcTextSize(view_span).x);
  ImGui::TextDisabled("%s", view_span);
  note_if_past_edge();
  timeline_legend();
}

// The colour legend, right-aligned on the toolbar line when it fits there, else on a line of its own.
void TimelinePanel::timeline_legend() {
  const std::pair<ImU32, const char*> items[] = {{kColCompute, "compute"},
                                                 {kColComm, "communication"},
                                                 {kColMemory, "memory"},
                                                 {kColSync, "sync"},
                                                 {kColExposed, "exposed comm"},
                                                 {kColApiLaunch, "CUDA launch"},
                                                 {scale_color(kColCompute, 0.55f), "folded (n)"},
                                                 {kColUtilisation, "stream busy (lane below it)"}};
  const ImGuiStyle& style = ImGui::GetStyle();
  float width = 0;
  for (const auto& [color, text] : items)
    width += ImGui::GetTextLineHeight() + 2 + ImGui::CalcTextSize(text).x + style.ItemSpacing.x;
  ImGui::SameLine();
  const float right = ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetCursorPosX() + width + px(10) > right)
    ImGui::NewLine();
  else
    ImGui::SameLine(right - width);
  bool first = true;
  for (const auto& [color, text] : items) {
    if (!first) legend_same_line(text);
    first = false;
    legend_item(color, text);
  }
}

// [SECTION] Canvas
// -------------------------------------------------------------------------------------------

void TimelinePanel::timeline_draw_ruler(ImDrawList* dl, float x0, float x1, float y0, float label_w,
                                        float h) {
  const double nspx = tl_.view.ns_per_px(x0, x1);
  const TimeNs t0 = tl_.view.start();
  const TimeNs step = ruler_step(nspx, 110.0 * ui_scale());
  const TimeNs origin = loaded()->profile->first_ns();
  dl->AddRectFilled(ImVec2(x0 - label_w, y0), ImVec2(x1, y0 + h), IM_COL32(24, 27, 33, 255));
  // Bookmarks: a band under the ticks with their number.
  char buf[48];
  for (std::size_t i = 0; i < tl_.bookmarks.size(); ++i) {
    const auto& bm = tl_.bookmarks[i];
    const float a = std::max(x0, x0 + static_cast<float>(static_cast<double>(bm.start - t0) / nspx));
    const float b = std::min(x1, x0 + static_cast<float>(static_cast<double>(bm.end - t0) / nspx));
    if (b <= a) continue;
    dl->AddRectFilled(ImVec2(a, y0 + h - 5 * ui_scale()), ImVec2(std::max(a + 2, b), y0 + h),
                      IM_COL32(255, 214, 10, 110));
    std::snprintf(buf, sizeof buf, "#%zu", i + 1);
    dl->AddText(ImVec2(a + 2, y0 + 1), kColSelect, buf);
  }
  // First major tick at or after t0, on the grid anchored at the profile start.
  const TimeNs rel = t0 - origin;
  const TimeNs first = (rel >= 0 ? (rel + step - 1) / step : -((-rel) / step)) * step;
  for (TimeNs t = first; origin + t <= tl_.view.end(); t += step) {
    const float x = x0 + static_cast<float>(static_cast<double>(origin + t - t0) / nspx);
    dl->AddLine(ImVec2(x, y0 + h - 8 * ui_scale()), ImVec2(x, y0 + h), kColTextDim);
    for (int m = 1; m < 5; ++m) {
      const float xm = x + static_cast<float>(static_cast<double>(step) * m / 5.0 / nspx);
      if (xm < x1) dl->AddLine(ImVec2(xm, y0 + h - 4 * ui_scale()), ImVec2(xm, y0 + h), kColGrid);
    }
    format_time(buf, sizeof buf, t, step);
    // A label that would run past the ruler's end goes to the left of its tick rather than being cut.
    const float label_w = ImGui::CalcTextSize(buf).x;
    const float lx = x + 3 + label_w <= x1 ? x + 3 : x - 3 - label_w;
    dl->AddText(ImVec2(lx, y0 + (h - ImGui::GetFontSize()) * 0.5f - 1), kColText, buf);
  }
  clipped_text(dl, x0 - label_w + 6, x0 - 4, y0 + (h - ImGui::GetFontSize()) * 0.5f, kColTextDim,
               "time (drag: select)");
}

TimelineContext TimelinePanel::timeline_context(float x0, float x1, bool hovered) const {
  const ImGuiIO& io = ImGui::GetIO();
  TimelineContext ctx;
  ctx.loaded = loaded().get();
  ctx.profile = loaded()->profile.get();
  ctx.tl = const_cast<TimelineState*>(&tl_);
  ctx.ui = ui_scale();
  ctx.x0 = x0;
  ctx.x1 = x1;
  ctx.t0 = tl_.view.start();
  ctx.t1 = tl_.view.end();
  ctx.ns_per_px = tl_.view.ns_per_px(x0, x1);
  ctx.lod = LodParams{ctx.t0, ctx.t1, ctx.ns_per_px, kMinPx};
  ctx.mouse = io.MousePos;
  ctx.hovered = hovered;
  ctx.click =
      hovered && ImGui::IsMouseReleased(0) && !io.KeyShift && std::abs(io.MouseDragMaxDistanceSqr[0]) < 16.0f;
  ctx.filtering = !tl_.filter_dirty && tl_.filter[0] && !tl_.matches.empty();
  return ctx;
}

void TimelinePanel::timeline_canvas() {
  const float ui = ui_scale();
  const bool panel = tl_.selected.valid() || tl_.has_selection || tl_.selected_instance >= 0;
  const float bottom =
      panel ? std::clamp(ImGui::GetContentRegionAvail().y * 0.38f, 150.0f * ui, 460.0f * ui) : 0.0f;
  const float label_w = kLabelWidth * ui;

  // Ruler (does not scroll); dragging on it selects a range.
  ImDrawList* wdl = ImGui::GetWindowDrawList();
  const ImVec2 ruler_pos = ImGui::GetCursorScreenPos();
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float time_x0 = ruler_pos.x + label_w;
  const float time_x1 = ruler_pos.x + avail_w - ImGui::GetStyle().ScrollbarSize;
  const float ruler_h = kRulerHeight * ui;
  ImGui::InvisibleButton("##ruler", ImVec2(avail_w, ruler_h));
  const bool ruler_hovered = ImGui::IsItemHovered() && ImGui::GetIO().MousePos.x >= time_x0;

  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::BeginChild("##timeline", ImVec2(0, -bottom), false,
                    ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_AlwaysVerticalScrollbar |
                        ImGuiWindowFlags_NoMove);
  ImGui::PopStyleVar();
  const bool hovered = ImGui::IsWindowHovered();
  timeline_handle_input(time_x0, time_x1, hovered, ruler_hovered);
  timeline_draw_ruler(wdl, time_x0, time_x1, ruler_pos.y, label_w, ruler_h);

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  TimelineContext ctx = timeline_context(time_x0, time_x1, hovered);
  ctx.dl = ImGui::GetWindowDrawList();
  ctx.label_x = origin.x;
  const float win_top = ImGui::GetWindowPos().y;
  const float win_bottom = win_top + ImGui::GetWindowSize().y;
  tl_.frame_items = 0;
  tl_.frame_events = 0;
  tl_.links.clear();
  tl_.hovered = {};

  const float pins_h = timeline_pins_height(ctx);
  tl_.canvas_x0 = time_x0;
  tl_.canvas_x1 = time_x1;
  tl_.ruler_y0 = ruler_pos.y;
  tl_.ruler_y1 = ruler_pos.y + ruler_h;
  tl_.rows_top = win_top;
  tl_.rows_bottom = win_bottom;
  tl_.pins_h = pins_h;
  ctx.win_top = win_top;
  ctx.win_bottom = win_bottom;
  const float y_end = timeline_layout(ctx, origin.y + pins_h, pins_h);
  lazy_want(ctx);
  ImDrawList* dl = ctx.dl;
  // Scrolling rows, under the pinned band.
  ctx.win_top = win_top + pins_h;
  ctx.hovered = hovered && ctx.mouse.y >= ctx.win_top;
  dl->PushClipRect(ImVec2(origin.x, ctx.win_top), ImVec2(time_x1, win_bottom), true);
  tl_.critical_baseline.clear();
  timeline_draw_rows(ctx, false, origin.y + pins_h);
  dl->PopClipRect();
  // Pinned rows.
  if (pins_h > 0) {
    ctx.win_top = win_top;
    ctx.win_bottom = win_top + pins_h;
    ctx.hovered = hovered && ctx.mouse.y < ctx.win_bottom;
    dl->PushClipRect(ImVec2(origin.x, win_top), ImVec2(time_x1, win_top + pins_h), true);
    dl->AddRectFilled(ImVec2(origin.x, win_top), ImVec2(time_x1, win_top + pins_h),
                      IM_COL32(20, 23, 29, 255));
    timeline_draw_rows(ctx, true, win_top);
    dl->AddLine(ImVec2(origin.x, win_top + pins_h - 1), ImVec2(time_x1, win_top + pins_h - 1), kColSelect);
    dl->PopClipRect();
  }
  ctx.win_top = win_top;
  ctx.win_bottom = win_bottom;
  ctx.hovered = hovered;
  dl->PushClipRect(ImVec2(origin.x, win_top), ImVec2(time_x1, win_bottom), true);
  timeline_overlays(ctx);
  dl->PopClipRect();
  dl->AddLine(ImVec2(ctx.x0 - 1, win_top), ImVec2(ctx.x0 - 1, win_bottom), IM_COL32(70, 76, 90, 255));
  timeline_hover_actions(ctx);
  timeline_row_menu(ctx);
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(time_x1 - origin.x, std::max(1.0f, y_end - origin.y)));
  ImGui::EndChild();
}

float TimelinePanel::timeline_pins_height(const TimelineContext& ctx) const {
  float h = 0;
  for (std::uint32_t i : tl_.order) {
    if (tl_.pinned[i] && tl_.items[i]->visible(tl_)) h += tl_.items[i]->height(ctx);
  }
  return h > 0 ? h + 2 : 0;
}

// Sets every item's y for this frame (pinned rows in the band at the window top, the others from Y0 down,
// a gap between rank groups), scrolls to a requested event or rank, and returns the bottom of the rows.
float TimelinePanel::timeline_layout(TimelineContext& ctx, float y0, float pins_h) {
  float py = ctx.win_top;
  float y = y0;
  tl_.groups.clear();
  for (std::uint32_t i : tl_.order) {
    TimelineItem& item = *tl_.items[i];
    item.shown = false;
    if (auto* header = dynamic_cast<const RankHeaderItem*>(&item)) {
      if (!tl_.groups.empty()) y += 3.0f * ctx.ui;
      tl_.groups.push_back({i, y, y});
      if (tl_.scroll_to_rank == header->rank_index()) {
        ImGui::SetScrollY(std::max(0.0f, y - y0 + ImGui::GetScrollY() - 4.0f));
        tl_.scroll_to_rank = -1;
      }
    }
    if (!item.visible(tl_)) continue;
    const float h = item.height(ctx);
    item.shown = true;
    if (tl_.pinned[i]) {
      item.y = py;
      py += h;
      continue;
    }
    item.y = y;
    std::uint32_t lane = 0;
    if (tl_.scroll_to.valid() && item.lane_of(ctx, tl_.scroll_to, lane)) {
      const float ly = y + static_cast<float>(lane) * item.lane_height(ctx);
      const float top = ctx.win_top + pins_h, bottom = ctx.win_bottom - item.lane_height(ctx);
      if (ly < top || ly > bottom)
        ImGui::SetScrollY(std::max(0.0f, ImGui::GetScrollY() + ly - top - (bottom - top) / 3));
      tl_.scroll_to = {};
    }
    y += h;
    tl_.groups.back().bottom = y;
  }
  return y;
}

// Lazy ranks: the ranks whose events this frame shows, the most wanted first (the selected event's, a step
// asked for, pinned rows', open rank groups on screen, then collapsed headers on screen at a zoom where a
// bucket of the summary's overview is wider than a few pixels), at most as many as fit a screen.
void TimelinePanel::lazy_want(const TimelineContext& ctx) {
  if (!lazy() || !loaded() || !loaded()->lazy) return;
  constexpr std::size_t kMaxShown = 64;
  constexpr double kBucketPx = 8.0;
  const std::size_t n = loaded()->profile->ranks().size();
  std::vector<std::uint32_t> wanted;
  std::vector<std::uint8_t> seen(n, 0);
  auto add = [&](std::int32_t r) {
    if (r < 0 || static_cast<std::size_t>(r) >= n || seen[static_cast<std::size_t>(r)] ||
        wanted.size() >= kMaxShown)
      return;
    seen[static_cast<std::size_t>(r)] = 1;
    wanted.push_back(static_cast<std::uint32_t>(r));
  };
  add(tl_.selected.valid() ? tl_.selected.rank_index : -1);
  add(pending_step_.rank_index);
  for (std::uint32_t i : tl_.order) {
    if (tl_.pinned[i]) add(tl_.items[i]->rank_index());
  }
  std::vector<std::int32_t> zoomed;
  for (const auto& g : tl_.groups) {
    if (g.bottom < ctx.win_top || g.top > ctx.win_bottom) continue;
    const std::int32_t r = tl_.items[g.header]->rank_index();
    if (tl_.rank_open[static_cast<std::size_t>(r)]) {
      add(r);
      continue;
    }
    const RankSummary* s = loaded()->rank_summary(static_cast<std::size_t>(r));
    if (s && !s->overview.buckets.empty() &&
        static_cast<double>(s->overview.bucket_ns()) / ctx.ns_per_px >= kBucketPx)
      zoomed.push_back(r);
  }
  for (std::int32_t r : zoomed) add(r);
  lazy()->want(std::move(wanted));
}

void TimelinePanel::timeline_draw_rows(TimelineContext& ctx, bool pinned, float) {
  for (std::uint32_t i : tl_.order) {
    TimelineItem& item = *tl_.items[i];
    if (!item.shown || (tl_.pinned[i] != 0) != pinned) continue;
    const float h = item.height(ctx);
    if (!ctx.row_visible(item.y, h)) continue;
    item.preprocess(ctx, item.y);
    item.draw(ctx, item.y);
  }
  if (pinned) return;
  for (const auto& g : tl_.groups) {
    const auto& header = static_cast<const RankHeaderItem&>(*tl_.items[g.header]);
    if (tl_.rank_open[static_cast<std::size_t>(header.rank_index())])
      header.draw_step_lines(ctx, g.top, g.bottom);
  }
}

// The screen rectangle of EVENT: on its row and sub-lane when the row is shown, else on the row that stands
// for it (the CPU section row of a closed section, the rank header of a closed rank). False when the rank
// has no row for it.
bool TimelinePanel::timeline_event_rect(const TimelineContext& ctx, const EventRef& event, ImVec2& a,
                                        ImVec2& b) const {
  if (!event.valid()) return false;
  const auto r = static_cast<std::size_t>(event.rank_index);
  const Rank& rank = ctx.profile->ranks()[r];
  const auto& rows = tl_.rows[r];
  std::uint32_t row = kNoRow;
  switch (event.kind) {
    case EventKind::kActivity: {
      auto it = std::upper_bound(rank.streams.begin(), rank.streams.end(), event.index,
                                 [](std::uint32_t i, const GpuStream& s) { return i < s.first; });
      if (it != rank.streams.begin())
        row = rows.streams[static_cast<std::size_t>(it - rank.streams.begin() - 1)];
      break;
    }
    case EventKind::kRange:
      for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
        if (event.index >= rank.tracks[k].first && event.index < rank.tracks[k].first + rank.tracks[k].count)
          row = rows.tracks[k];
      }
      break;
    case EventKind::kApiCall:
      row = rows.api_threads[ctx.loaded->ranks[r]->launches.thread_of_api[event.index]];
      break;
    case EventKind::kStep:
      row = rows.steps;
      break;
    case EventKind::kNone:
      break;
  }
  if (row == kNoRow) return false;
  const TimelineItem* item = tl_.items[row].get();
  std::uint32_t lane = 0;
  const bool stand_in = !item->shown;
  if (stand_in) {
    item = tl_.items[tl_.rank_open[r] && rows.section != kNoRow ? rows.section : rows.header].get();
  } else if (!item->lane_of(ctx, event, lane)) {
    return false;
  }
  const float lh = stand_in ? item->height(ctx) : item->lane_height(ctx);
  const EventSpan span = span_of(*ctx.profile, event);
  const float ly = item->y + static_cast<float>(lane) * lh;
  a = ImVec2(std::max(ctx.x_of(span.start_ns), ctx.x0 - 4), ly);
  b = ImVec2(std::max(a.x + 2.0f, std::min(ctx.x_of(span.end_ns), ctx.x1 + 4)), ly + lh);
  return true;
}

// CPU op -> API call -> GPU activity arrows for EVENT (any of the three): the call that launched it, the op
// that issued the call, and everything the call launched; for a CPU range, every call made inside it.
void TimelinePanel::timeline_flows(TimelineContext& ctx, const EventRef& event, ImU32 color) {
  if (!event.valid() || event.kind == EventKind::kStep) return;
  const auto r = static_cast<std::size_t>(event.rank_index);
  const Rank& rank = ctx.profile->ranks()[r];
  const auto& launches = ctx.loaded->ranks[r]->launches;
  flow_calls_.clear();
  if (event.kind == EventKind::kActivity) {
    if (launches.api_of_activity[event.index] != measure::kNoIndex)
      flow_calls_.push_back(launches.api_of_activity[event.index]);
  } else if (event.kind == EventKind::kApiCall) {
    flow_calls_.push_back(event.index);
  } else {
    measure::api_calls_inside(rank, launches, event.index, flow_calls_);
  }
  std::size_t arrows = 0;
  ImVec2 a, b, c, d;
  for (const std::uint32_t call : flow_calls_) {
    if (arrows > kMaxFlowArrows ||
        !timeline_event_rect(ctx, {EventKind::kApiCall, event.rank_index, call}, a, b))
      continue;
    const std::uint32_t op = launches.op_of_api[call];
    if (op != measure::kNoIndex &&
        timeline_event_rect(ctx, {EventKind::kRange, event.rank_index, op}, c, d)) {
      const float x = a.x;
      const bool down = d.y <= a.y;
      draw_flow(ctx.dl, ImVec2(x, down ? d.y : c.y), ImVec2(x, down ? a.y : b.y), color, ctx.ui);
      ++arrows;
    }
    if (event.kind == EventKind::kRange || event.kind == EventKind::kApiCall)
      ctx.dl->AddRect(a, b, color, 0, 0, 1.5f * ctx.ui);
    for (const std::uint32_t act : launches.activities_of(call)) {
      if (arrows++ > kMaxFlowArrows) break;
      if (!timeline_event_rect(ctx, {EventKind::kActivity, event.rank_index, act}, c, d)) continue;
      const bool up = d.y <= a.y;
      draw_flow(ctx.dl, ImVec2(a.x, up ? a.y : b.y), ImVec2(c.x, up ? d.y : c.y), color, ctx.ui);
      if (act != event.index || event.kind != EventKind::kActivity)
        ctx.dl->AddRect(c, d, color, 0, 0, 1.0f * ctx.ui);
    }
  }
}

// Collective links, the selected event and its launch flows, the hovered event's flows, the range
// selection and the cursor line, over the rows.
void TimelinePanel::timeline_overlays(TimelineContext& ctx) {
  ImDrawList* dl = ctx.dl;
  if (tl_.links.size() > 1) {
    std::sort(tl_.links.begin(), tl_.links.end(), [](const auto& a, const auto& b) { return a.y < b.y; });
    for (std::size_t i = 1; i < tl_.links.size(); ++i) {
      dl->AddLine(ImVec2(tl_.links[i - 1].x, tl_.links[i - 1].y), ImVec2(tl_.links[i].x, tl_.links[i].y),
                  kColSelect, 1.5f);
    }
  }
  if (tl_.critical)
    timeline_critical_path(ctx);
  else
    tl_.critical_events.clear();
  const EventRef hovered = ctx.hover.kind == HoverKind::kEvent ? ctx.hover.event : EventRef{};
  if (hovered.valid() && !(hovered == tl_.selected)) timeline_flows(ctx, hovered, kColFlowHover);
  ImVec2 a, b;
  if (timeline_event_rect(ctx, tl_.selected, a, b)) {
    timeline_flows(ctx, tl_.selected, kColFlow);
    dl->AddRect(ImVec2(a.x - 1, a.y), ImVec2(b.x + 1, b.y), kColSelect, 0, 0, 2.5f * ctx.ui);
  }
  if (tl_.has_selection || tl_.selecting) {
    const float xa = std::clamp(ctx.x_of(std::min(tl_.sel_a, tl_.sel_b)), ctx.x0, ctx.x1);
    const float xb = std::clamp(ctx.x_of(std::max(tl_.sel_a, tl_.sel_b)), ctx.x0, ctx.x1);
    dl->AddRectFilled(ImVec2(xa, ctx.win_top), ImVec2(xb, ctx.win_bottom), IM_COL32(255, 214, 10, 28));
    dl->AddLine(ImVec2(xa, ctx.win_top), ImVec2(xa, ctx.win_bottom), kColSelect);
    dl->AddLine(ImVec2(xb, ctx.win_top), ImVec2(xb, ctx.win_bottom), kColSelect);
    char tb[32];
    duration_text(tb, sizeof tb, static_cast<double>(std::abs(tl_.sel_b - tl_.sel_a)));
    const ImVec2 ts = ImGui::CalcTextSize(tb);
    const float cx = (xa + xb - ts.x) * 0.5f;
    dl->AddRectFilled(ImVec2(cx - 4, ctx.win_top + 4), ImVec2(cx + ts.x + 4, ctx.win_top + 6 + ts.y),
                      IM_COL32(20, 20, 20, 220));
    dl->AddText(ImVec2(cx, ctx.win_top + 5), kColSelect, tb);
  }
  if (ctx.hovered && ctx.mouse.x >= ctx.x0 && ctx.mouse.x <= ctx.x1) {
    dl->AddLine(ImVec2(ctx.mouse.x, ctx.win_top), ImVec2(ctx.mouse.x, ctx.win_bottom),
                IM_COL32(255, 255, 255, 60));
  }
}

// The hovered item's tooltip, and what a click or double-click on it does: a click selects an event (or
// clears the selection on empty space), a double-click zooms to a step or into a fold, a right-click on a
// row label opens the row menu.
void TimelinePanel::timeline_hover_actions(const TimelineContext& ctx) {
  const Hover& hover = ctx.hover;
  if (hover.kind == HoverKind::kEvent) tl_.hovered = hover.event;
  if (hover.kind != HoverKind::kNone) hover.item->tooltip(ctx, hover);
  if (hover.kind == HoverKind::kLabel && ImGui::IsMouseClicked(1)) {
    for (std::uint32_t i = 0; i < tl_.items.size(); ++i) {
      if (tl_.items[i].get() == hover.item) tl_.menu_item = i;
    }
    ImGui::OpenPopup("##rowmenu");
  }
  if (hover.kind == HoverKind::kEvent && ctx.click) timeline_select(hover.event, false);
  if (hover.kind == HoverKind::kNone && ctx.click && ctx.mouse.x >= ctx.x0) timeline_select({}, false);
  if (!ImGui::IsMouseDoubleClicked(0)) return;
  if (hover.kind == HoverKind::kEvent && hover.event.kind == EventKind::kStep) {
    const Step& s =
        ctx.profile->ranks()[static_cast<std::size_t>(hover.event.rank_index)].steps[hover.event.index];
    tl_.view.show_padded(s.start_ns, s.end_ns, (s.end_ns - s.start_ns) / 40);
  } else if (hover.kind == HoverKind::kFolded) {
    const TimeNs pad = std::max<TimeNs>(kMinRangeNs, (hover.draw.end_ns - hover.draw.start_ns) / 10);
    tl_.view.show_padded(hover.draw.start_ns, hover.draw.end_ns, pad);
  } else if (hover.kind == HoverKind::kEvent) {
    // Any other event (a kernel, a copy, an operator, a CUDA call): zoom to it, as Perfetto does.
    const EventSpan span = span_of(*ctx.profile, hover.event);
    tl_.view.zoom_to(span.start_ns, span.end_ns);
  }
}

// [SECTION] Input
// --------------------------------------------------------------------------------------------

// Mouse: wheel zooms at the cursor (Shift scrolls rows), left drag pans, a drag on the time axis (or a
// right drag, or Shift + left drag) selects a range. RULER_HOVERED: the mouse is on the time axis.
void TimelinePanel::timeline_handle_input(float x0, float x1, bool hovered, bool ruler_hovered) {
  const ImGuiIO& io = ImGui::GetIO();
  const double nspx = tl_.view.ns_per_px(x0, x1);
  auto time_at = [&](float x) { return tl_.view.time_at(x, x0, x1); };
  if (hovered || ruler_hovered) {
    if (io.MouseWheel != 0.0f && !io.KeyShift)
      tl_.view.zoom_at(
          std::clamp(static_cast<double>(io.MousePos.x), static_cast<double>(x0), static_cast<double>(x1)),
          std::pow(0.8, io.MouseWheel), x0, x1);
    if (hovered && io.MouseWheel != 0.0f && io.KeyShift)
      ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 60.0f * ui_scale());
  }
  const bool start = (hovered && io.MousePos.x >= x0 &&
                      (ImGui::IsMouseClicked(1) || (ImGui::IsMouseClicked(0) && io.KeyShift))) ||
                     (ruler_hovered && ImGui::IsMouseClicked(0));
  if (start) {
    tl_.selecting = true;
    tl_.sel_a = tl_.sel_b = time_at(io.MousePos.x);
  }
  if (tl_.selecting) {
    tl_.sel_b = time_at(io.MousePos.x);
    if (!ImGui::IsMouseDown(0) && !ImGui::IsMouseDown(1)) {
      tl_.selecting = false;
      tl_.has_selection = std::abs(tl_.sel_b - tl_.sel_a) > static_cast<TimeNs>(2 * nspx);
      if (tl_.has_selection) {
        details_->range_start();
        tl_.details_tab = 1;
      }
    }
  } else if (hovered && ImGui::IsMouseDragging(0, 2.0f) && !io.KeyShift) {
    const TimeNs dt = static_cast<TimeNs>(-io.MouseDelta.x * nspx);
    tl_.view.pan(dt);
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
  }
  timeline_keys(x0, x1);
}

// Keyboard (whenever no text field or popup has it): W/S or Up/Down zoom, A/D or Left/Right pan (rates per
// second, not per frame), F fit, Z zoom to the range, B bookmark it, Escape clears the selection and range.
void TimelinePanel::timeline_keys(float x0, float x1) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || io.KeyCtrl || ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) return;
  auto down = [](int key, ImGuiKey named) {
    return ImGui::IsKeyDown(key) || ImGui::IsKeyDown(ImGui::GetKeyIndex(named));
  };
  const double frames = std::clamp(static_cast<double>(io.DeltaTime) * 60.0, 0.0, 2.0);
  const double mid = (x0 + x1) * 0.5;
  if (down('W', ImGuiKey_UpArrow)) tl_.view.zoom_at(mid, std::pow(0.92, frames), x0, x1);
  if (down('S', ImGuiKey_DownArrow)) tl_.view.zoom_at(mid, std::pow(1.0 / 0.92, frames), x0, x1);
  const TimeNs pan = static_cast<TimeNs>(static_cast<double>(tl_.view.range()) * 0.02 * frames);
  if (down('A', ImGuiKey_LeftArrow)) tl_.view.pan(-pan);
  if (down('D', ImGuiKey_RightArrow)) tl_.view.pan(pan);
  if (ImGui::IsKeyPressed('F', false)) timeline_fit_selection();
  const TimeNs lo = std::min(tl_.sel_a, tl_.sel_b), hi = std::max(tl_.sel_a, tl_.sel_b);
  if (ImGui::IsKeyPressed('Z', false) && tl_.has_selection) tl_.view.zoom_from(lo, hi);
  if (ImGui::IsKeyPressed('B', false) && tl_.has_selection) tl_.bookmarks.push_back({lo, hi});
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
    tl_.has_selection = false;
    details_->range_cancel();
    timeline_select({}, false);
  }
}

// [SECTION] Search
// ---------------------------------------------------------------------------------------------

void TimelinePanel::search(std::string_view text) {
  const std::size_t n = std::min(text.size(), sizeof tl_.filter - 1);
  std::memcpy(tl_.filter, text.data(), n);
  tl_.filter[n] = 0;
  if (loaded() && tl_.items.empty()) rebuild_items();
  timeline_run_search();
  timeline_jump_to_match(0);
}

// Every event whose name contains the search text (case-insensitive): kernels and copies (and, for
// collectives, their operation and process group), CPU ranges (operators, NVTX, annotations) and CUDA API
// calls. Matches go to their row's sub-lane for highlighting and, in time order, to the match list.
void TimelinePanel::timeline_run_search() {
  tl_.filter_dirty = false;
  tl_.matches.clear();
  tl_.match_cursor = -1;
  tl_.name_match.clear();
  for (auto& item : tl_.items) item->match_lanes.clear();
  if (!loaded() || !tl_.filter[0]) return;
  const Profile& profile = *loaded()->profile;
  const std::string_view needle = tl_.filter;
  auto matches = [&](StringId id) {
    if (id >= tl_.name_match.size()) tl_.name_match.resize(static_cast<std::size_t>(id) + 1, -1);
    auto& m = tl_.name_match[id];
    if (m < 0) m = contains_ci(profile.str(id), needle) ? 1 : 0;
    return m == 1;
  };
  // Walks the lanes of ITEM (LAYOUT over EVENTS; members index EVENTS, or every event when empty), adding
  // each event HIT says matches; FIRST converts an index into EVENTS into the EventRef index.
  auto scan = [&](auto events, const LaneLayout& layout, std::uint32_t row, EventKind kind, std::int32_t r,
                  std::uint32_t first, std::uint32_t lane0, auto hit) {
    TimelineItem& item = *tl_.items[row];
    for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
      const std::size_t n = layout.members.empty() ? events.size() : layout.members[lane].size();
      for (std::size_t k = 0; k < n; ++k) {
        const std::uint32_t i =
            layout.members.empty() ? static_cast<std::uint32_t>(k) : layout.members[lane][k];
        const auto& e = events[i];
        if (!hit(e)) continue;
        if (item.match_lanes.size() <= lane0 + lane) item.match_lanes.resize(lane0 + lane + 1);
        item.match_lanes[lane0 + lane].push_back({e.start_ns, e.end_ns});
        tl_.matches.push_back({e.start_ns, e.end_ns, {kind, r, first + i}, row});
      }
    }
  };
  const auto& ranks = profile.ranks();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Rank& rank = ranks[r];
    const auto& index = *loaded()->ranks[r];
    const auto& rows = tl_.rows[r];
    const auto ri = static_cast<std::int32_t>(r);
    for (std::size_t s = 0; s < rank.streams.size(); ++s) {
      scan(rank.stream_activities(s), index.streams[s], rows.streams[s], EventKind::kActivity, ri,
           rank.streams[s].first, 0, [&](const Activity& a) {
             if (matches(a.name)) return true;
             if (a.collective < 0) return false;
             const Collective& c = rank.collectives[static_cast<std::size_t>(a.collective)];
             return matches(c.op) || matches(c.pg_desc) || matches(c.communicator);
           });
    }
    for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
      scan(rank.track_ranges(k), index.tracks[k], rows.tracks[k], EventKind::kRange, ri, rank.tracks[k].first,
           0, [&](const CpuRange& c) { return matches(c.name); });
    }
    for (std::size_t t = 0; t < index.api_threads.size(); ++t) {
      const auto& item = static_cast<const CpuTrackItem&>(*tl_.items[rows.api_threads[t]]);
      const std::uint32_t lane0 = item.track() == kNoRow ? 0 : index.tracks[item.track()].lanes();
      scan(std::span<const ApiCall>(rank.api_calls), index.api_threads[t], rows.api_threads[t],
           EventKind::kApiCall, ri, 0, lane0, [&](const ApiCall& c) { return matches(c.name); });
    }
  }
  std::sort(tl_.matches.begin(), tl_.matches.end(), [](const auto& a, const auto& b) {
    return a.start < b.start || (a.start == b.start && a.event.rank_index < b.event.rank_index);
  });
}

// Moves the cursor DELTA matches on (0: the first match at or after the view's start) and selects it,
// centred at the current zoom (zooming out only when the match is wider than the view).
void TimelinePanel::timeline_jump_to_match(int delta) {
  if (tl_.matches.empty()) return;
  const int n = static_cast<int>(tl_.matches.size());
  if (tl_.match_cursor < 0 || delta == 0) {
    const auto it = std::partition_point(tl_.matches.begin(), tl_.matches.end(),
                                         [&](const auto& m) { return m.start < tl_.view.start(); });
    tl_.match_cursor = it == tl_.matches.end() ? 0 : static_cast<int>(it - tl_.matches.begin());
  } else {
    tl_.match_cursor = ((tl_.match_cursor + delta) % n + n) % n;
  }
  timeline_select(tl_.matches[static_cast<std::size_t>(tl_.match_cursor)].event, true);
}

// [SECTION] Row menu
// -----------------------------------------------------------------------------------------

void TimelinePanel::timeline_move_row(std::uint32_t item, int direction) {
  auto& order = tl_.order;
  const auto at = std::find(order.begin(), order.end(), item) - order.begin();
  const TimelineItem& moved = *tl_.items[item];
  for (auto k = at + direction; k >= 0 && k < static_cast<std::ptrdiff_t>(order.size()); k += direction) {
    const TimelineItem& other = *tl_.items[order[static_cast<std::size_t>(k)]];
    if (other.rank_index() != moved.rank_index()) return;
    if (other.group() != moved.group()) continue;
    std::swap(order[static_cast<std::size_t>(at)], order[static_cast<std::size_t>(k)]);
    return;
  }
}

void TimelinePanel::timeline_move_rank(std::int32_t rank_index, int direction) {
  auto& order = tl_.order;
  auto block = [&](std::int32_t r) {
    auto first = std::find_if(order.begin(), order.end(),
                              [&](std::uint32_t i) { return tl_.items[i]->rank_index() == r; });
    auto last =
        std::find_if(first, order.end(), [&](std::uint32_t i) { return tl_.items[i]->rank_index() != r; });
    return std::pair{first, last};
  };
  auto [first, last] = block(rank_index);
  if (direction < 0 && first != order.begin()) {
    const auto [prev_first, prev_last] = block(tl_.items[*(first - 1)]->rank_index());
    std::rotate(prev_first, first, last);
  } else if (direction > 0 && last != order.end()) {
    const auto [next_first, next_last] = block(tl_.items[*last]->rank_index());
    std::rotate(first, next_first, next_last);
  }
}

void TimelinePanel::timeline_row_menu(const TimelineContext& ctx) {
  tl_.menu_rects.clear();
  if (!ImGui::BeginPopup("##rowmenu")) return;
  auto entry = [&](const char* label) {
    const bool chosen = ImGui::MenuItem(label);
    tl_.menu_rects.push_back({label, ImGui::GetItemRectMin(), ImGui::GetItemRectMax()});
    return chosen;
  };
  const std::uint32_t i = tl_.menu_item;
  if (i < tl_.items.size()) {
    const TimelineItem& item = *tl_.items[i];
    ImGui::TextDisabled("%s", item.label(ctx).c_str());
    ImGui::Separator();
    if (item.group() != RowGroup::kHeader) {
      if (entry(tl_.pinned[i] ? "Unpin" : "Pin to top")) tl_.pinned[i] = tl_.pinned[i] ? 0 : 1;
      if (entry("Move up")) timeline_move_row(i, -1);
      if (entry("Move down")) timeline_move_row(i, 1);
    }
    if (entry("Move rank up")) timeline_move_rank(item.rank_index(), -1);
    if (entry("Move rank down")) timeline_move_rank(item.rank_index(), 1);
    ImGui::Separator();
  }
  if (entry("Expand all ranks")) set_all_ranks_open(true);
  if (entry("Collapse all ranks")) set_all_ranks_open(false);
  if (entry("Show every rank's CPU threads")) tl_.cpu_open.assign(tl_.cpu_open.size(), 1);
  if (entry("Hide every rank's CPU threads")) tl_.cpu_open.assign(tl_.cpu_open.size(), 0);
  if (entry("Reset row order and pins")) {
    for (std::uint32_t k = 0; k < tl_.order.size(); ++k) tl_.order[k] = k;
    tl_.pinned.assign(tl_.pinned.size(), 0);
  }
  ImGui::EndPopup();
}

// [SECTION] Opening a profile, a lazy profile's generations, links from other panels
// ------------------------------------------------------------------------------------------

namespace {

// What a timeline row is, independent of the items' numbering: where it was in the order survives a rebuild.
TimelinePanel::RowsKept::RowKey row_key(const TimelineItem& item) {
  std::uint32_t a = 0, b = 0;
  if (const auto* stream = dynamic_cast<const GpuStreamItem*>(&item)) a = stream->stream();
  if (const auto* track = dynamic_cast<const CpuTrackItem*>(&item)) {
    a = track->track();
    b = track->api_thread();
  }
  if (const auto* base = dynamic_cast<const BaselineItem*>(&item)) a = base->stream();
  return {item.rank_index(), item.kind_name(), a, b};
}

}  // namespace

void TimelinePanel::open_profile() {
  details_->range_cancel();
  const bool critical = tl_.critical;  // the overlay toggle outlives the profile
  tl_ = TimelineState{};
  tl_.critical = critical;
  pending_step_ = {};
  const auto& open = loaded();
  if (open) tl_.view.set_bounds(open->profile->first_ns(), open->profile->last_ns());
  const std::size_t ranks = open ? open->profile->ranks().size() : 0;
  // Small jobs open every rank; large ones open the first few (the others stay one header row each).
  tl_.rank_open.assign(ranks, ranks <= 8 ? 1 : 0);
  for (std::size_t r = 0; r < std::min<std::size_t>(ranks, 4); ++r) tl_.rank_open[r] = 1;
  tl_.cpu_open.assign(ranks, 0);
}

TimelinePanel::RowsKept TimelinePanel::rows_kept() const {
  RowsKept kept;
  for (std::size_t k = 0; k < tl_.order.size(); ++k) {
    const TimelineItem& item = *tl_.items[tl_.order[k]];
    kept.position[row_key(item)] = static_cast<double>(k);
    if (dynamic_cast<const RankHeaderItem*>(&item))
      kept.header_position[item.rank_index()] = static_cast<double>(k);
    if (tl_.pinned[tl_.order[k]]) kept.pinned.insert(row_key(item));
    kept.reordered = kept.reordered || tl_.order[k] != k;
  }
  return kept;
}

void TimelinePanel::generation_installed(const RowsKept& kept) {
  const LoadedProfile& open = *loaded();
  // Indices of events stay valid for a rank that stayed loaded (the same events); an evicted rank's do not.
  auto still_loaded = [&](const EventRef& e) {
    return e.valid() && open.rank_loaded(static_cast<std::size_t>(e.rank_index));
  };
  if (!still_loaded(tl_.selected)) tl_.selected = {};
  if (!still_loaded(tl_.scroll_to)) tl_.scroll_to = {};
  tl_.hovered = {};
  tl_.selected_instance = -1;  // instances are numbered anew with the ranks loaded
  tl_.links.clear();
  tl_.menu_item = kNoRow;
  tl_.items.clear();
  rebuild_items();
  if (kept.reordered || !kept.pinned.empty()) {
    std::vector<std::pair<double, std::uint32_t>> sorted;
    std::map<std::int32_t, int> new_rows;  // rows of a rank that had none: right after its header
    for (std::uint32_t i : tl_.order) {
      const RowsKept::RowKey key = row_key(*tl_.items[i]);
      auto at = kept.position.find(key);
      double p = 0;
      if (at != kept.position.end()) {
        p = at->second;
      } else {
        auto header = kept.header_position.find(key.rank_index);
        p = (header != kept.header_position.end() ? header->second : 1e12) +
            0.001 * ++new_rows[key.rank_index];
      }
      sorted.push_back({p, i});
      if (kept.pinned.contains(key)) tl_.pinned[i] = 1;
    }
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (std::size_t k = 0; k < sorted.size(); ++k) tl_.order[k] = sorted[k].second;
  }
  if (tl_.has_selection) details_->range_start();  // the totals of the ranks loaded now
  // A step asked for (Summary, Overview) before its rank's events were there.
  if (pending_step_.rank_index >= 0 && open.rank_loaded(static_cast<std::size_t>(pending_step_.rank_index))) {
    const Rank& rank = open.profile->ranks()[static_cast<std::size_t>(pending_step_.rank_index)];
    for (std::uint32_t k = 0; k < rank.steps.size(); ++k) {
      if (rank.steps[k].number != pending_step_.number) continue;
      timeline_select({EventKind::kStep, pending_step_.rank_index, k}, false);
      break;
    }
    pending_step_ = {};
  }
}

void TimelinePanel::show(const ShowOnTimeline& show) {
  if (show.window) set_time_range(show.start, show.end);
  const std::size_t r = show.rank_index;
  if (r < tl_.rank_open.size()) tl_.rank_open[r] = 1;
  tl_.scroll_to_rank = static_cast<std::int32_t>(r);
  const auto& open = loaded();
  if (show.step && open && r < open->profile->ranks().size()) {
    if (!open->rank_loaded(r)) pending_step_ = {static_cast<std::int32_t>(r), *show.step};
    const Rank& rank = open->profile->ranks()[r];
    for (std::uint32_t k = 0; k < rank.steps.size(); ++k) {
      if (rank.steps[k].number != *show.step) continue;
      timeline_select({EventKind::kStep, static_cast<std::int32_t>(r), k}, false);
      break;
    }
  }
}

}  // namespace meshscope::gui
