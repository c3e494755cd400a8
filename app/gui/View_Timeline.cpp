// View_Timeline.cpp: the timeline window. One group per rank (collapsible) with a header carrying the
// exposed-communication band, a steps row, one row per GPU stream sub-lane, GPU annotation rows and a
// collapsible "CPU threads" section. Each frame, every visible lane is preprocessed into draw items
// (timeline_lod.hpp: binary search on time-sorted vectors, sub-pixel folding with counts, reused vectors)
// and then drawn with ImDrawList calls only.
//
// [SECTION] Layout constants and helpers
// [SECTION] Toolbar (search, fit, legend)
// [SECTION] Canvas: ruler, rank groups, lanes, hover, links
// [SECTION] Input: zoom, pan, box select, keys
// [SECTION] Search and collectives panel
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "analysis/measure/collectives.hpp"
#include "app/gui/View.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/timeline_items.hpp"

namespace meshscope::gui {

// [SECTION] Layout constants and helpers
// ---------------------------------------------------------------------

namespace {

constexpr TimeNs kMinRangeNs = 200;

bool contains_ci(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return false;
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

}  // namespace

void View::set_time_range(TimeNs start, TimeNs end) {
  tl_.t0 = start;
  tl_.t1 = end;
}

void View::timeline_fit() {
  if (!loaded_) return;
  const auto& p = *loaded_->profile;
  TimeNs a = p.first_ns(), b = p.last_ns();
  if (b <= a) b = a + 1000;
  const TimeNs pad = (b - a) / 50;
  tl_.t0 = a - pad;
  tl_.t1 = b + pad;
}

void View::draw_timeline() {
  if (!loaded_) {
    ImGui::Spacing();
    ImGui::TextDisabled(loading() ? "Loading..."
                                  : "Open a profile to see its timeline (File > Open, or drop a trace).");
    return;
  }
  if (tl_.t1 <= tl_.t0) timeline_fit();
  timeline_toolbar();
  timeline_canvas();
  timeline_collective_panel();
}

// [SECTION] Toolbar
// ------------------------------------------------------------------------------------------

void View::timeline_toolbar() {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed('F', false)) tl_.focus_search = true;
  if (tl_.focus_search) {
    ImGui::SetKeyboardFocusHere();
    tl_.focus_search = false;
  }
  ImGui::SetNextItemWidth(260);
  if (ImGui::InputTextWithHint("##search", "Search names (Ctrl+F, Enter = next)", tl_.filter,
                               sizeof tl_.filter, ImGuiInputTextFlags_EnterReturnsTrue)) {
    if (tl_.filter_dirty) {
      timeline_run_search();
      timeline_jump_to_match(0);
    } else {
      timeline_jump_to_match(io.KeyShift ? -1 : 1);
    }
    ImGui::SetKeyboardFocusHere(-1);
  }
  if (ImGui::IsItemEdited()) tl_.filter_dirty = true;
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
  ImGui::SameLine();
  if (tl_.filter[0] && !tl_.filter_dirty) {
    if (tl_.matches.empty())
      ImGui::TextColored(to_vec4(kColExposed), "no match");
    else
      ImGui::Text("%d / %zu", tl_.match_cursor + 1, tl_.matches.size());
  } else {
    ImGui::TextDisabled("      ");
  }
  ImGui::SameLine();
  if (ImGui::Button("Fit (F)")) timeline_fit();
  ImGui::SameLine();
  char a[32], b[32];
  ImGui::TextDisabled("view %s", time_text(a, sizeof a, static_cast<double>(tl_.t1 - tl_.t0)));
  if (tl_.has_selection) {
    ImGui::SameLine();
    const TimeNs lo = std::min(tl_.sel_a, tl_.sel_b), hi = std::max(tl_.sel_a, tl_.sel_b);
    ImGui::TextColored(to_vec4(kColSelect), "selection %s (Z zooms, Esc clears)",
                       time_text(b, sizeof b, static_cast<double>(hi - lo)));
  }
  // Legend, right-aligned.
  const float legend_w = 640.0f;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX() + 10.0f, ImGui::GetWindowContentRegionMax().x - legend_w));
  legend_item(kColCompute, "compute");
  ImGui::SameLine();
  legend_item(kColComm, "communication");
  ImGui::SameLine();
  legend_item(kColMemory, "memory");
  ImGui::SameLine();
  legend_item(kColSync, "sync");
  ImGui::SameLine();
  legend_item(kColExposed, "exposed comm");
  ImGui::SameLine();
  legend_item(scale_color(kColCompute, 0.55f), "folded (n)");
}

// [SECTION] Canvas
// -------------------------------------------------------------------------------------------

void View::timeline_draw_ruler(ImDrawList* dl, float x0, float x1, float y0) {
  const double nspx = static_cast<double>(tl_.t1 - tl_.t0) / std::max(1.0f, x1 - x0);
  const TimeNs step = ruler_step(nspx, 110.0);
  const TimeNs origin = loaded_->profile->first_ns();
  dl->AddRectFilled(ImVec2(x0 - kLabelWidth, y0), ImVec2(x1, y0 + kRulerHeight), IM_COL32(24, 27, 33, 255));
  // First major tick at or after t0, on the grid anchored at the profile start.
  TimeNs rel = tl_.t0 - origin;
  TimeNs first = (rel >= 0 ? (rel + step - 1) / step : -((-rel) / step)) * step;
  char buf[48];
  for (TimeNs t = first; origin + t <= tl_.t1; t += step) {
    const float x = x0 + static_cast<float>(static_cast<double>(origin + t - tl_.t0) / nspx);
    dl->AddLine(ImVec2(x, y0 + kRulerHeight - 8), ImVec2(x, y0 + kRulerHeight), kColTextDim);
    for (int m = 1; m < 5; ++m) {
      const float xm = x + static_cast<float>(static_cast<double>(step) * m / 5.0 / nspx);
      if (xm < x1) dl->AddLine(ImVec2(xm, y0 + kRulerHeight - 4), ImVec2(xm, y0 + kRulerHeight), kColGrid);
    }
    format_time(buf, sizeof buf, t, step);
    dl->AddText(ImVec2(x + 3, y0 + 3), kColText, buf);
  }
  dl->AddText(ImVec2(x0 - kLabelWidth + 6, y0 + 4), kColTextDim, "time since profile start");
}

void View::timeline_canvas() {
  const LoadedProfile& L = *loaded_;
  const ImGuiIO& io = ImGui::GetIO();
  const float bottom = tl_.selected_instance >= 0 ? 150.0f : 0.0f;
  if (tl_.items.empty()) tl_.items = build_timeline_items(L);

  // Ruler (does not scroll).
  ImDrawList* wdl = ImGui::GetWindowDrawList();
  const ImVec2 ruler_pos = ImGui::GetCursorScreenPos();
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float time_x0 = ruler_pos.x + kLabelWidth;
  const float time_x1 = ruler_pos.x + avail_w - ImGui::GetStyle().ScrollbarSize;
  ImGui::Dummy(ImVec2(avail_w, kRulerHeight));

  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  ImGui::BeginChild("##timeline", ImVec2(0, -bottom), false,
                    ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_AlwaysVerticalScrollbar |
                        ImGuiWindowFlags_NoMove);
  ImGui::PopStyleVar();
  const bool hovered = ImGui::IsWindowHovered();
  timeline_handle_input(time_x0, time_x1, hovered);
  timeline_draw_ruler(wdl, time_x0, time_x1, ruler_pos.y);

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  TimelineContext ctx;
  ctx.loaded = &L;
  ctx.profile = L.profile.get();
  ctx.tl = &tl_;
  ctx.dl = ImGui::GetWindowDrawList();
  ctx.label_x = origin.x;
  ctx.x0 = time_x0;
  ctx.x1 = time_x1;
  ctx.t0 = tl_.t0;
  ctx.t1 = tl_.t1;
  ctx.ns_per_px = static_cast<double>(tl_.t1 - tl_.t0) / std::max(1.0f, time_x1 - time_x0);
  ctx.lod = LodParams{tl_.t0, tl_.t1, ctx.ns_per_px, kMinPx};
  ctx.win_top = ImGui::GetWindowPos().y;
  ctx.win_bottom = ctx.win_top + ImGui::GetWindowSize().y;
  ctx.mouse = io.MousePos;
  ctx.hovered = hovered;
  ctx.click =
      hovered && ImGui::IsMouseReleased(0) && !io.KeyShift && std::abs(io.MouseDragMaxDistanceSqr[0]) < 16.0f;
  ctx.filtering = !tl_.filter_dirty && tl_.filter[0] && !tl_.matches.empty();
  ctx.current = ctx.filtering && tl_.match_cursor >= 0
                    ? &tl_.matches[static_cast<std::size_t>(tl_.match_cursor)]
                    : nullptr;
  tl_.frame_items = 0;
  tl_.frame_events = 0;
  tl_.links.clear();

  ImDrawList* dl = ctx.dl;
  dl->PushClipRect(ImVec2(origin.x, ctx.win_top), ImVec2(time_x1, ctx.win_bottom), true);
  const float y = timeline_rows(ctx, origin.y);
  timeline_overlays(ctx);
  dl->PopClipRect();
  // Label column separator.
  dl->AddLine(ImVec2(ctx.x0 - 1, ctx.win_top), ImVec2(ctx.x0 - 1, ctx.win_bottom), IM_COL32(70, 76, 90, 255));
  const bool clicked_collective = timeline_hover_actions(ctx);
  if (ctx.click && !clicked_collective && ctx.mouse.x >= ctx.x0) tl_.selected_instance = -1;
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(time_x1 - origin.x, std::max(1.0f, y - origin.y)));
  ImGui::EndChild();
}

// Lays out every visible item from Y0 down, preprocessing and drawing those on screen; returns the bottom.
float View::timeline_rows(TimelineContext& ctx, float y0) {
  float y = y0;
  const RankHeaderItem* header = nullptr;
  float group_top = y0;
  auto close_group = [&] {
    if (!header) return;
    if (tl_.rank_open[static_cast<std::size_t>(header->rank_index())])
      header->draw_step_lines(ctx, group_top, y);
    y += 3.0f;
  };
  for (const auto& item : tl_.items) {
    if (const auto* h = dynamic_cast<const RankHeaderItem*>(item.get())) {
      close_group();
      header = h;
      group_top = y;
      if (tl_.scroll_to_rank == h->rank_index()) {
        ImGui::SetScrollY(std::max(0.0f, y - y0 + ImGui::GetScrollY() - 4.0f));
        tl_.scroll_to_rank = -1;
      }
    }
    if (!item->visible(tl_)) continue;
    const float h = item->height(ctx);
    if (ctx.row_visible(y, h)) {
      item->preprocess(ctx, y);
      item->draw(ctx, y);
    }
    y += h;
  }
  close_group();
  return y;
}

// Collective links, the box selection and the cursor line, over the rows.
void View::timeline_overlays(TimelineContext& ctx) {
  ImDrawList* dl = ctx.dl;
  if (tl_.links.size() > 1) {
    std::sort(tl_.links.begin(), tl_.links.end(), [](const auto& a, const auto& b) { return a.y < b.y; });
    for (std::size_t i = 1; i < tl_.links.size(); ++i) {
      dl->AddLine(ImVec2(tl_.links[i - 1].x, tl_.links[i - 1].y), ImVec2(tl_.links[i].x, tl_.links[i].y),
                  kColSelect, 1.5f);
    }
  }
  if (tl_.has_selection || tl_.selecting) {
    const float xa = std::clamp(ctx.x_of(std::min(tl_.sel_a, tl_.sel_b)), ctx.x0, ctx.x1);
    const float xb = std::clamp(ctx.x_of(std::max(tl_.sel_a, tl_.sel_b)), ctx.x0, ctx.x1);
    dl->AddRectFilled(ImVec2(xa, ctx.win_top), ImVec2(xb, ctx.win_bottom), IM_COL32(255, 214, 10, 28));
    dl->AddLine(ImVec2(xa, ctx.win_top), ImVec2(xa, ctx.win_bottom), kColSelect);
    dl->AddLine(ImVec2(xb, ctx.win_top), ImVec2(xb, ctx.win_bottom), kColSelect);
    char tb[32];
    time_text(tb, sizeof tb, static_cast<double>(std::abs(tl_.sel_b - tl_.sel_a)));
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

// The hovered item's tooltip, and what a click or double-click on it does. True when a click selected a
// collective.
bool View::timeline_hover_actions(const TimelineContext& ctx) {
  const Hover& hover = ctx.hover;
  if (hover.kind == HoverKind::kNone) return false;
  hover.item->tooltip(ctx, hover);
  if (hover.kind != HoverKind::kEvent) return false;
  const LoadedProfile& L = *loaded_;
  const auto r = static_cast<std::size_t>(hover.event.rank_index);
  const Rank& rank = L.profile->ranks()[r];
  if (hover.event.kind == EventKind::kActivity && ctx.click) {
    const Activity& a = rank.activities[hover.event.index];
    if (a.collective >= 0 && static_cast<std::size_t>(a.collective) < rank.collectives.size()) {
      const std::int32_t inst = L.ranks[r].instance_of[static_cast<std::size_t>(a.collective)];
      if (inst >= 0) {
        tl_.selected_instance = inst;
        return true;
      }
    }
  }
  if (hover.event.kind == EventKind::kStep && ImGui::IsMouseDoubleClicked(0)) {
    const Step& s = rank.steps[hover.event.index];
    const TimeNs pad = (s.end_ns - s.start_ns) / 40;
    tl_.t0 = s.start_ns - pad;
    tl_.t1 = s.end_ns + pad;
  }
  return false;
}

// [SECTION] Input
// --------------------------------------------------------------------------------------------

void View::timeline_handle_input(float x0, float x1, bool hovered) {
  const ImGuiIO& io = ImGui::GetIO();
  const Profile& profile = *loaded_->profile;
  const double width = std::max(1.0f, x1 - x0);
  const double nspx = static_cast<double>(tl_.t1 - tl_.t0) / width;
  const TimeNs full = std::max<TimeNs>(kMinRangeNs, profile.last_ns() - profile.first_ns());
  auto zoom_at = [&](double x, double factor) {
    const double anchor = static_cast<double>(tl_.t0) + (x - x0) * nspx;
    double range = static_cast<double>(tl_.t1 - tl_.t0) * factor;
    range = std::clamp(range, static_cast<double>(kMinRangeNs), static_cast<double>(full) * 4.0);
    const double left = (x - x0) / width;
    tl_.t0 = static_cast<TimeNs>(anchor - left * range);
    tl_.t1 = tl_.t0 + static_cast<TimeNs>(range);
  };
  if (hovered) {
    if (io.MouseWheel != 0.0f && !io.KeyShift)
      zoom_at(std::clamp(static_cast<double>(io.MousePos.x), (double)x0, (double)x1),
              std::pow(0.8, io.MouseWheel));
    if (io.MouseWheel != 0.0f && io.KeyShift) ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 60.0f);
    // Left drag pans (time and rows); shift + left drag or right drag selects a range.
    const bool select_button = ImGui::IsMouseClicked(1) || (ImGui::IsMouseClicked(0) && io.KeyShift);
    if (select_button && io.MousePos.x >= x0) {
      tl_.selecting = true;
      tl_.sel_a = tl_.sel_b = tl_.t0 + static_cast<TimeNs>((io.MousePos.x - x0) * nspx);
    }
  }
  if (tl_.selecting) {
    tl_.sel_b = tl_.t0 + static_cast<TimeNs>((std::clamp(io.MousePos.x, x0, x1) - x0) * nspx);
    if (!ImGui::IsMouseDown(0) && !ImGui::IsMouseDown(1)) {
      tl_.selecting = false;
      tl_.has_selection = std::abs(tl_.sel_b - tl_.sel_a) > static_cast<TimeNs>(2 * nspx);
    }
  } else if (hovered && ImGui::IsMouseDragging(0, 2.0f) && !io.KeyShift) {
    const TimeNs dt = static_cast<TimeNs>(-io.MouseDelta.x * nspx);
    tl_.t0 += dt;
    tl_.t1 += dt;
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
  }
  if ((hovered || ImGui::IsWindowFocused()) && !io.WantTextInput && !io.KeyCtrl) {
    const double mid = (x0 + x1) * 0.5;
    if (ImGui::IsKeyDown('W')) zoom_at(mid, 0.92);
    if (ImGui::IsKeyDown('S')) zoom_at(mid, 1.0 / 0.92);
    const TimeNs pan = static_cast<TimeNs>(static_cast<double>(tl_.t1 - tl_.t0) * 0.02);
    if (ImGui::IsKeyDown('A')) tl_.t0 -= pan, tl_.t1 -= pan;
    if (ImGui::IsKeyDown('D')) tl_.t0 += pan, tl_.t1 += pan;
    if (ImGui::IsKeyPressed('F', false)) timeline_fit();
    if (ImGui::IsKeyPressed('Z', false) && tl_.has_selection) {
      tl_.t0 = std::min(tl_.sel_a, tl_.sel_b);
      tl_.t1 = std::max(tl_.t0 + kMinRangeNs, std::max(tl_.sel_a, tl_.sel_b));
      tl_.has_selection = false;
    }
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) {
      tl_.has_selection = false;
      tl_.selected_instance = -1;
    }
  }
}

// [SECTION] Search and collectives panel
// ---------------------------------------------------------------------

void View::timeline_run_search() {
  tl_.filter_dirty = false;
  tl_.matches.clear();
  tl_.match_cursor = -1;
  tl_.name_match.clear();
  if (!loaded_ || !tl_.filter[0]) return;
  const Profile& profile = *loaded_->profile;
  const std::string_view needle = tl_.filter;
  auto matches = [&](StringId id) {
    if (id >= tl_.name_match.size()) tl_.name_match.resize(static_cast<std::size_t>(id) + 1, -1);
    auto& m = tl_.name_match[id];
    if (m < 0) m = contains_ci(profile.str(id), needle) ? 1 : 0;
    return m == 1;
  };
  const auto& ranks = profile.ranks();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Rank& rank = ranks[r];
    for (std::size_t s = 0; s < rank.streams.size(); ++s) {
      const auto events = rank.stream_activities(s);
      for (std::uint32_t i = 0; i < events.size(); ++i) {
        if (matches(events[i].name)) {
          tl_.matches.push_back({events[i].start_ns, events[i].end_ns, static_cast<std::int32_t>(r),
                                 static_cast<std::int32_t>(s), i});
        }
      }
    }
    for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
      const auto events = rank.track_ranges(k);
      for (std::uint32_t i = 0; i < events.size(); ++i) {
        if (matches(events[i].name)) {
          tl_.matches.push_back({events[i].start_ns, events[i].end_ns, static_cast<std::int32_t>(r),
                                 -1 - static_cast<std::int32_t>(k), i});
        }
      }
    }
  }
  std::sort(tl_.matches.begin(), tl_.matches.end(), [](const auto& a, const auto& b) {
    return a.start < b.start || (a.start == b.start && a.rank_index < b.rank_index);
  });
}

void View::timeline_jump_to_match(int delta) {
  if (tl_.matches.empty()) return;
  const int n = static_cast<int>(tl_.matches.size());
  tl_.match_cursor = tl_.match_cursor < 0 ? 0 : ((tl_.match_cursor + delta) % n + n) % n;
  const auto& m = tl_.matches[static_cast<std::size_t>(tl_.match_cursor)];
  const TimeNs dur = std::max<TimeNs>(m.end - m.start, 1);
  TimeNs range = tl_.t1 - tl_.t0;
  if (range < 3 * dur || range > 400 * dur) range = std::max<TimeNs>(kMinRangeNs, 8 * dur);
  const TimeNs mid = m.start + dur / 2;
  tl_.t0 = mid - range / 2;
  tl_.t1 = tl_.t0 + range;
  tl_.rank_open[static_cast<std::size_t>(m.rank_index)] = 1;
  if (m.stream < 0) {
    const auto& rank = loaded_->profile->ranks()[static_cast<std::size_t>(m.rank_index)];
    if (!rank.tracks[static_cast<std::size_t>(-1 - m.stream)].gpu)
      tl_.cpu_open[static_cast<std::size_t>(m.rank_index)] = 1;
  }
  tl_.scroll_to_rank = m.rank_index;
}

void View::timeline_collective_panel() {
  if (tl_.selected_instance < 0 || !loaded_) return;
  const auto& report = loaded_->analysis.collectives;
  if (static_cast<std::size_t>(tl_.selected_instance) >= report.instances.size()) return;
  const Profile& profile = *loaded_->profile;
  const auto& ci = report.instances[static_cast<std::size_t>(tl_.selected_instance)];
  char a[32], b[32], c[32];
  ImGui::BeginChild("##collective", ImVec2(0, 0), true);
  ImGui::TextColored(to_vec4(kColSelect), "Collective %s", profile.str(ci.op).c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("communicator %s, %s %lld, %u of %lld ranks, skew %s, last arrival rank %d%s",
                      profile.str(ci.communicator).c_str(), ci.by_seq ? "seq" : "ordinal",
                      static_cast<long long>(ci.key), ci.member_count, static_cast<long long>(ci.expected),
                      time_text(a, sizeof a, static_cast<double>(ci.skew_ns)), ci.last_rank,
                      ci.complete ? "" : " (incomplete)");
  ImGui::SameLine();
  if (ImGui::SmallButton("Zoom to it")) {
    TimeNs lo = ci.first_arrival_ns, hi = lo;
    for (std::uint32_t m = 0; m < ci.member_count; ++m)
      hi = std::max(hi, report.members[ci.first_member + m].end_ns);
    const TimeNs pad = std::max<TimeNs>((hi - lo) / 5, 1000);
    tl_.t0 = lo - pad;
    tl_.t1 = hi + pad;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Clear (Esc)")) tl_.selected_instance = -1;
  if (ImGui::BeginTable("##members", 5,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("rank");
    ImGui::TableSetupColumn("arrival (after first)");
    ImGui::TableSetupColumn("wait");
    ImGui::TableSetupColumn("transfer");
    ImGui::TableSetupColumn("duration");
    ImGui::TableHeadersRow();
    for (std::uint32_t m = 0; m < ci.member_count; ++m) {
      const auto& mem = report.members[ci.first_member + m];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", profile.ranks()[mem.rank_index].rank);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(time_text(a, sizeof a, static_cast<double>(mem.start_ns - ci.first_arrival_ns)));
      ImGui::TableNextColumn();
      ImGui::TextColored(to_vec4(mem.wait_ns > 0 ? kColExposed : kColTextDim), "%s",
                         time_text(b, sizeof b, static_cast<double>(mem.wait_ns)));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(time_text(c, sizeof c, static_cast<double>(mem.transfer_ns)));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(time_text(a, sizeof a, static_cast<double>(mem.end_ns - mem.start_ns)));
    }
    ImGui::EndTable();
  }
  ImGui::EndChild();
}

}  // namespace meshscope::gui
