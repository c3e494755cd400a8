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

namespace meshscope::gui {

// [SECTION] Layout constants and helpers
// ---------------------------------------------------------------------

namespace {

constexpr float kLabelWidth = 200.0f;
constexpr float kRulerHeight = 24.0f;
constexpr float kHeaderHeight = 24.0f;
constexpr float kLaneHeight = 18.0f;
constexpr float kCpuLaneHeight = 15.0f;
constexpr float kBandHeight = 5.0f;
constexpr float kMinPx = 3.0f;
constexpr TimeNs kMinRangeNs = 200;

struct Canvas {
  float x0, x1;  // time area in screen x
  TimeNs t0, t1;
  double ns_per_px;
  float x_of(TimeNs t) const { return x0 + static_cast<float>(static_cast<double>(t - t0) / ns_per_px); }
  TimeNs t_of(float x) const { return t0 + static_cast<TimeNs>(static_cast<double>(x - x0) * ns_per_px); }
};

// Text clipped to [x0, x1], shortened to what can fit (so long kernel names cost nothing).
void clipped_text(ImDrawList* dl, float x0, float x1, float y, ImU32 color, std::string_view text) {
  if (x1 - x0 < 12.0f || text.empty()) return;
  const std::size_t fit = static_cast<std::size_t>((x1 - x0) / 5.0f) + 1;
  if (text.size() > fit) text = text.substr(0, fit);
  const ImVec4 clip(x0, y - 2, x1, y + 40);
  dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(x0, y), color, text.data(),
              text.data() + text.size(), 0.0f, &clip);
}

bool contains_ci(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return false;
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

const char* kind_text(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kKernel:
      return "kernel";
    case ActivityKind::kMemcpy:
      return "memcpy";
    case ActivityKind::kMemset:
      return "memset";
    case ActivityKind::kSync:
      return "sync";
  }
  return "?";
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
  const Profile& profile = *L.profile;
  const auto& ranks = profile.ranks();
  const ImGuiIO& io = ImGui::GetIO();
  const float bottom = tl_.selected_instance >= 0 ? 150.0f : 0.0f;

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

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float win_top = ImGui::GetWindowPos().y;
  const float win_bottom = win_top + ImGui::GetWindowSize().y;
  Canvas cv{time_x0, time_x1, tl_.t0, tl_.t1,
            static_cast<double>(tl_.t1 - tl_.t0) / std::max(1.0f, time_x1 - time_x0)};
  LodParams lod{tl_.t0, tl_.t1, cv.ns_per_px, kMinPx};
  const ImVec2 mouse = io.MousePos;
  const bool click =
      hovered && ImGui::IsMouseReleased(0) && !io.KeyShift && std::abs(io.MouseDragMaxDistanceSqr[0]) < 16.0f;
  bool clicked_collective = false;
  tl_.frame_items = 0;
  tl_.frame_events = 0;
  tl_.links.clear();
  tl_.hover_rank = -1;
  const bool filtering = !tl_.filter_dirty && tl_.filter[0] && !tl_.matches.empty();
  const TimelineState::Match* current =
      filtering && tl_.match_cursor >= 0 ? &tl_.matches[static_cast<std::size_t>(tl_.match_cursor)] : nullptr;
  auto name_matches = [&](StringId id) {
    return filtering && id < tl_.name_match.size() && tl_.name_match[id] == 1;
  };

  dl->PushClipRect(ImVec2(origin.x, win_top), ImVec2(time_x1, win_bottom), true);
  float y = origin.y;
  char buf[96], tb[32], tb2[32];

  // Draws one lane of EVENTS (with LAYOUT's members for lane LANE) at row Y..Y+H; returns nothing, records
  // hover. COLOR(event, index) gives the fill; ON_HOVER(index, item) shows the tooltip; NAME(event) the
  // label.
  auto draw_lane = [&](auto events, const LaneLayout* layout, std::uint32_t lane, float row_y, float h,
                       auto color, auto name_of, auto on_hover, auto on_item) {
    if (row_y + h < win_top || row_y > win_bottom) return;
    tl_.items.clear();
    std::span<const std::uint32_t> members;
    if (layout && !layout->members.empty()) members = layout->members[lane];
    preprocess_lane(events, members, lod, tl_.items);
    tl_.frame_items += tl_.items.size();
    const bool row_hovered = hovered && mouse.y >= row_y && mouse.y < row_y + h && mouse.x >= cv.x0;
    for (const DrawItem& item : tl_.items) {
      tl_.frame_events += item.count;
      const auto& e = events[item.index];
      float x0 = std::max(cv.x_of(item.start_ns), cv.x0 - 2.0f);
      float x1 = std::min(cv.x_of(item.end_ns), cv.x1 + 2.0f);
      if (x1 - x0 < 1.0f) x1 = x0 + 1.0f;
      const ImU32 fill = color(e, item.index);
      if (item.count > 1) {
        dl->AddRectFilled(ImVec2(x0, row_y + 1), ImVec2(x1, row_y + h - 1), scale_color(fill, 0.55f));
        if (x1 - x0 > 28.0f) {
          std::snprintf(buf, sizeof buf, "%u", item.count);
          clipped_text(dl, x0 + 3, x1 - 2, row_y + (h - ImGui::GetFontSize()) * 0.5f, kColTextDim, buf);
        }
      } else {
        dl->AddRectFilled(ImVec2(x0, row_y + 1), ImVec2(x1, row_y + h - 1), fill);
        if (x1 - x0 > 24.0f) {
          clipped_text(dl, x0 + 3, x1 - 2, row_y + (h - ImGui::GetFontSize()) * 0.5f,
                       IM_COL32(12, 14, 18, 255), short_name(name_of(e)));
        }
      }
      on_item(e, item, x0, x1, row_y, h);
      if (row_hovered && mouse.x >= x0 - 1 && mouse.x < x1 + 1) {
        dl->AddRect(ImVec2(x0, row_y + 1), ImVec2(x1, row_y + h - 1), kColText);
        on_hover(e, item);
      }
    }
  };
  auto folded_tooltip = [&](const DrawItem& item, std::string_view first_name) {
    ImGui::BeginTooltip();
    ImGui::Text("%u events folded (each under %.0f px: zoom in to separate them)", item.count, kMinPx);
    ImGui::Text("span %s", time_text(tb, sizeof tb, static_cast<double>(item.end_ns - item.start_ns)));
    ImGui::TextDisabled("first: %.*s", static_cast<int>(std::min<std::size_t>(first_name.size(), 90)),
                        first_name.data());
    ImGui::EndTooltip();
  };

  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Rank& rank = ranks[r];
    const auto& result = L.analysis.ranks[r];
    const auto& index = L.ranks[r];
    ImGui::PushID(static_cast<int>(r));
    const float group_top = y;
    if (tl_.scroll_to_rank == static_cast<std::int32_t>(r)) {
      ImGui::SetScrollY(std::max(0.0f, y - origin.y + ImGui::GetScrollY() - 4.0f));
      tl_.scroll_to_rank = -1;
    }
    // Rank header with the exposed-communication band.
    const bool open = tl_.rank_open[r] != 0;
    if (y + kHeaderHeight >= win_top && y <= win_bottom) {
      dl->AddRectFilled(ImVec2(origin.x, y), ImVec2(time_x1, y + kHeaderHeight), IM_COL32(30, 34, 42, 255));
      dl->AddLine(ImVec2(origin.x, y), ImVec2(time_x1, y), IM_COL32(60, 66, 80, 255));
      const char* arrow = open ? "v" : ">";
      std::snprintf(buf, sizeof buf, "%s Rank %d", arrow, rank.rank);
      dl->AddText(ImVec2(origin.x + 6, y + 4), kColText, buf);
      if (!rank.hostname.empty()) {
        clipped_text(dl, origin.x + 84, origin.x + kLabelWidth - 4, y + 4, kColTextDim, rank.hostname);
      }
      const auto& b = result.total;
      std::snprintf(buf, sizeof buf, "exposed comm %s of %s",
                    time_text(tb, sizeof tb, static_cast<double>(b.exposed_comm_ns)),
                    time_text(tb2, sizeof tb2, static_cast<double>(b.span_ns)));
      const ImVec2 ts = ImGui::CalcTextSize(buf);
      dl->AddText(ImVec2(std::max(cv.x0 + 4, cv.x1 - ts.x - 8), y + 3), kColTextDim, buf);
      // Exposed communication band (every interval, folded to pixels, none skipped).
      tl_.items.clear();
      preprocess_intervals(result.exposed_comm, lod, tl_.items);
      const float by0 = y + kHeaderHeight - kBandHeight - 1, by1 = y + kHeaderHeight - 1;
      bool band_hover = false;
      for (const DrawItem& item : tl_.items) {
        const float x0 = std::max(cv.x_of(item.start_ns), cv.x0 - 1);
        const float x1 = std::max(x0 + 1.0f, std::min(cv.x_of(item.end_ns), cv.x1 + 1));
        dl->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), kColExposed);
        if (hovered && mouse.y >= by0 - 2 && mouse.y < by1 + 2 && mouse.x >= x0 - 1 && mouse.x < x1 + 1) {
          band_hover = true;
          ImGui::SetTooltip(
              "Exposed communication on rank %d: %s here (%u interval%s)\nno compute ran while "
              "this rank communicated.\nRank total: %s exposed of %s communication.",
              rank.rank, time_text(tb, sizeof tb, static_cast<double>(item.end_ns - item.start_ns)),
              item.count, item.count == 1 ? "" : "s merged under one pixel",
              time_text(tb2, sizeof tb2, static_cast<double>(b.exposed_comm_ns)),
              time_text(buf, sizeof buf, static_cast<double>(b.comm_ns)));
        }
      }
      if (!band_hover && hovered && mouse.y >= y && mouse.y < y + kHeaderHeight && mouse.x < cv.x0) {
        ImGui::SetTooltip("Rank %d: %zu streams, %zu GPU events, %zu CPU tracks\nclick to %s", rank.rank,
                          rank.streams.size(), rank.activities.size(), rank.tracks.size(),
                          open ? "collapse" : "expand");
        if (click) tl_.rank_open[r] = open ? 0 : 1;
      }
    }
    y += kHeaderHeight;
    if (open) {
      // Steps row.
      if (!rank.steps.empty()) {
        const std::span<const Step> steps(rank.steps);
        draw_lane(
            steps, nullptr, 0, y, kLaneHeight,
            [](const Step&, std::uint32_t) { return IM_COL32(64, 68, 84, 255); },
            [&](const Step& s) -> std::string_view {
              std::snprintf(buf, sizeof buf, "Step %lld", static_cast<long long>(s.number));
              return buf;
            },
            [&](const Step& s, const DrawItem& item) {
              if (item.count > 1) return folded_tooltip(item, "step");
              ImGui::BeginTooltip();
              ImGui::Text("Step %lld (%s)", static_cast<long long>(s.number), s.source.c_str());
              ImGui::Text("CPU duration %s",
                          time_text(tb, sizeof tb, static_cast<double>(s.end_ns - s.start_ns)));
              for (const auto& sr : result.steps) {
                if (sr.number != s.number) continue;
                const auto& g = sr.gpu;
                ImGui::Separator();
                ImGui::Text("GPU span      %s", time_text(tb, sizeof tb, static_cast<double>(g.span_ns)));
                ImGui::Text("compute       %s", time_text(tb, sizeof tb, static_cast<double>(g.compute_ns)));
                ImGui::Text("communication %s", time_text(tb, sizeof tb, static_cast<double>(g.comm_ns)));
                ImGui::TextColored(to_vec4(kColExposed), "exposed comm  %s",
                                   time_text(tb, sizeof tb, static_cast<double>(g.exposed_comm_ns)));
                ImGui::Text("memory        %s", time_text(tb, sizeof tb, static_cast<double>(g.memory_ns)));
                ImGui::Text("idle          %s", time_text(tb, sizeof tb, static_cast<double>(g.idle_ns)));
              }
              ImGui::TextDisabled("double-click to zoom to this step");
              ImGui::EndTooltip();
              if (ImGui::IsMouseDoubleClicked(0)) {
                const TimeNs pad = (s.end_ns - s.start_ns) / 40;
                tl_.t0 = s.start_ns - pad;
                tl_.t1 = s.end_ns + pad;
              }
            },
            [](const Step&, const DrawItem&, float, float, float, float) {});
        if (y + kLaneHeight >= win_top && y <= win_bottom)
          dl->AddText(ImVec2(origin.x + 18, y + 1), kColTextDim, "steps");
        y += kLaneHeight;
      }
      // GPU streams.
      for (std::size_t s = 0; s < rank.streams.size(); ++s) {
        const GpuStream& stream = rank.streams[s];
        const auto events = rank.stream_activities(s);
        const LaneLayout& layout = index.streams[s];
        const std::uint32_t lanes = layout.lanes();
        const float stream_top = y;
        for (std::uint32_t lane = 0; lane < lanes; ++lane) {
          draw_lane(
              events, &layout, lane, y, kLaneHeight,
              [&](const Activity&, std::uint32_t i) { return class_color(result.classes[stream.first + i]); },
              [&](const Activity& a) -> std::string_view { return profile.str(a.name); },
              [&](const Activity& a, const DrawItem& item) {
                tl_.hover_rank = static_cast<std::int32_t>(r);
                if (item.count > 1) return folded_tooltip(item, short_name(profile.str(a.name)));
                const auto cls = result.classes[stream.first + item.index];
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
                ImGui::TextUnformatted(std::string(short_name(profile.str(a.name))).c_str());
                ImGui::PopTextWrapPos();
                ImGui::TextColored(to_vec4(class_color(cls)), "%s, %s", kind_text(a.kind),
                                   measure::to_string(cls));
                ImGui::Text("duration %s   start %s",
                            time_text(tb, sizeof tb, static_cast<double>(a.duration())),
                            time_text(tb2, sizeof tb2, static_cast<double>(a.start_ns - profile.first_ns())));
                ImGui::Text("rank %d, GPU %d, %s", rank.rank, stream.device, stream.name.c_str());
                if (a.kind == ActivityKind::kKernel && a.detail != kNoDetail &&
                    a.detail < rank.kernels.size()) {
                  const auto& k = rank.kernels[a.detail];
                  if (k.grid[0] > 0) {
                    ImGui::TextDisabled("grid [%d,%d,%d] block [%d,%d,%d] registers %d", k.grid[0], k.grid[1],
                                        k.grid[2], k.block[0], k.block[1], k.block[2], k.registers);
                  }
                }
                if ((a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) &&
                    a.detail != kNoDetail && a.detail < rank.copies.size()) {
                  const auto& c = rank.copies[a.detail];
                  if (c.bytes > 0) {
                    ImGui::Text("%s %s, %.2f GB/s", profile.str(c.copy_kind).c_str(),
                                bytes_text(tb, sizeof tb, static_cast<double>(c.bytes)),
                                a.duration() > 0
                                    ? static_cast<double>(c.bytes) / static_cast<double>(a.duration())
                                    : 0.0);
                  }
                }
                if (a.collective >= 0 && static_cast<std::size_t>(a.collective) < rank.collectives.size()) {
                  const Collective& c = rank.collectives[static_cast<std::size_t>(a.collective)];
                  const std::int64_t bytes = std::max(c.in_bytes, c.out_bytes);
                  const std::string& op = profile.str(c.op);
                  ImGui::Separator();
                  ImGui::Text("collective %s, %s, group of %lld", op.c_str(),
                              bytes > 0 ? bytes_text(tb, sizeof tb, static_cast<double>(bytes)) : "? bytes",
                              static_cast<long long>(c.group_size));
                  ImGui::Text("group %s %s", profile.str(c.pg_desc).c_str(), profile.str(c.pg_ranks).c_str());
                  if (c.seq != kNull)
                    ImGui::TextDisabled("seq %lld, dtype %s", static_cast<long long>(c.seq),
                                        profile.str(c.dtype).c_str());
                  if (bytes > 0 && a.duration() > 0) {
                    const double algbw = static_cast<double>(bytes) / static_cast<double>(a.duration());
                    ImGui::Text("algbw %.2f GB/s, busbw %.2f GB/s", algbw,
                                algbw * measure::busbw_factor(op, c.group_size));
                  }
                  const std::int32_t inst = index.instance_of[static_cast<std::size_t>(a.collective)];
                  if (inst >= 0) {
                    const auto& report = L.analysis.collectives;
                    const auto& ci = report.instances[static_cast<std::size_t>(inst)];
                    for (std::uint32_t m = 0; m < ci.member_count; ++m) {
                      const auto& mem = report.members[ci.first_member + m];
                      if (mem.rank_index != r || mem.collective != static_cast<std::uint32_t>(a.collective))
                        continue;
                      const double transfer_bw =
                          bytes > 0 && mem.transfer_ns > 0
                              ? static_cast<double>(bytes) / static_cast<double>(mem.transfer_ns)
                              : 0.0;
                      ImGui::TextColored(to_vec4(kColExposed), "wait %s",
                                         time_text(tb, sizeof tb, static_cast<double>(mem.wait_ns)));
                      ImGui::SameLine();
                      ImGui::Text("transfer %s (algbw over transfer %.2f GB/s)",
                                  time_text(tb2, sizeof tb2, static_cast<double>(mem.transfer_ns)),
                                  transfer_bw);
                    }
                    ImGui::Text("%u of %lld peers in profile, skew %s, last to arrive: rank %d",
                                ci.member_count, static_cast<long long>(ci.expected),
                                time_text(tb, sizeof tb, static_cast<double>(ci.skew_ns)), ci.last_rank);
                    ImGui::TextDisabled("click to link its peers on every rank");
                    if (click) {
                      tl_.selected_instance = inst;
                      clicked_collective = true;
                    }
                  } else {
                    ImGui::TextDisabled("not matched across ranks (peers missing from the profile)");
                  }
                }
                ImGui::EndTooltip();
              },
              [&](const Activity& a, const DrawItem& item, float x0, float x1, float ry, float h) {
                if (item.count == 1 && tl_.selected_instance >= 0 && a.collective >= 0 &&
                    index.instance_of[static_cast<std::size_t>(a.collective)] == tl_.selected_instance) {
                  dl->AddRect(ImVec2(x0 - 1, ry), ImVec2(x1 + 1, ry + h), kColSelect, 0, 0, 2.0f);
                  tl_.links.push_back({rank.rank, (x0 + x1) * 0.5f, ry + h * 0.5f});
                }
                if (filtering && name_matches(a.name)) {
                  const bool is_current = current && current->rank_index == static_cast<std::int32_t>(r) &&
                                          current->stream == static_cast<std::int32_t>(s) &&
                                          current->index >= item.index &&
                                          current->index < item.index + item.count;
                  dl->AddRect(ImVec2(x0 - 1, ry), ImVec2(x1 + 1, ry + h), is_current ? kColSelect : kColText,
                              0, 0, is_current ? 2.5f : 1.0f);
                }
              });
          y += kLaneHeight;
        }
        if (stream_top + kLaneHeight >= win_top && stream_top <= win_bottom) {
          std::snprintf(buf, sizeof buf, "GPU%d %s%s", stream.device, stream.name.c_str(),
                        lanes > 1 ? " *" : "");
          clipped_text(dl, origin.x + 18, origin.x + kLabelWidth - 4, stream_top + 1, kColText, buf);
          if (hovered && mouse.x < cv.x0 && mouse.y >= stream_top && mouse.y < y) {
            const auto& idle = result.streams[s];
            ImGui::SetTooltip(
                "GPU %d, %s: %u events on %u sub-lane%s%s\nbusy %s, idle %s (host-bound %s, "
                "kernel gaps %s, other %s)",
                stream.device, stream.name.c_str(), stream.count, lanes, lanes == 1 ? "" : "s",
                lanes > 1 ? " (overlapping events are stacked, none hidden)" : "",
                time_text(tb, sizeof tb, static_cast<double>(idle.busy_ns)),
                time_text(tb2, sizeof tb2, static_cast<double>(idle.idle_ns)),
                time_text(buf, 24, static_cast<double>(idle.host_bound_ns)),
                time_text(buf + 24, 24, static_cast<double>(idle.kernel_gap_ns)),
                time_text(buf + 48, 24, static_cast<double>(idle.other_ns)));
          }
        }
      }
      // CPU tracks: GPU annotation tracks always, CPU threads in a collapsible section.
      auto draw_track = [&](std::size_t k) {
        const CpuTrack& track = rank.tracks[k];
        const auto events = rank.track_ranges(k);
        const LaneLayout& layout = index.tracks[k];
        const float track_top = y;
        for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
          draw_lane(
              events, &layout, lane, y, kCpuLaneHeight,
              [&](const CpuRange& c, std::uint32_t) {
                switch (c.kind) {
                  case RangeKind::kStep:
                    return kColStep;
                  case RangeKind::kAnnotation:
                  case RangeKind::kGpuAnnotation:
                  case RangeKind::kNvtx:
                    return kColAnnotation;
                  case RangeKind::kPythonFunction:
                    return IM_COL32(140, 120, 100, 255);
                  default:
                    return scale_color(kColCpu, 0.85f + 0.05f * static_cast<float>(c.depth % 4));
                }
              },
              [&](const CpuRange& c) -> std::string_view { return profile.str(c.name); },
              [&](const CpuRange& c, const DrawItem& item) {
                if (item.count > 1) return folded_tooltip(item, profile.str(c.name));
                ImGui::BeginTooltip();
                ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
                ImGui::TextUnformatted(profile.str(c.name).c_str());
                ImGui::PopTextWrapPos();
                ImGui::TextDisabled("%s, depth %d, %s", to_string(c.kind), c.depth,
                                    profile.str(c.category).c_str());
                ImGui::Text("duration %s   start %s",
                            time_text(tb, sizeof tb, static_cast<double>(c.end_ns - c.start_ns)),
                            time_text(tb2, sizeof tb2, static_cast<double>(c.start_ns - profile.first_ns())));
                ImGui::Text("rank %d, %s", rank.rank, track.name.c_str());
                ImGui::EndTooltip();
              },
              [&](const CpuRange& c, const DrawItem&, float x0, float x1, float ry, float h) {
                if (filtering && name_matches(c.name)) {
                  dl->AddRect(ImVec2(x0 - 1, ry), ImVec2(x1 + 1, ry + h), kColText);
                }
              });
          y += kCpuLaneHeight;
        }
        if (track_top + kCpuLaneHeight >= win_top && track_top <= win_bottom) {
          clipped_text(dl, origin.x + 30, origin.x + kLabelWidth - 4, track_top, kColTextDim, track.name);
        }
      };
      for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
        if (rank.tracks[k].gpu) draw_track(k);
      }
      std::size_t cpu_tracks = 0;
      for (const auto& t : rank.tracks) cpu_tracks += t.gpu ? 0 : 1;
      if (cpu_tracks > 0) {
        const bool cpu_open = tl_.cpu_open[r] != 0;
        if (y + kLaneHeight >= win_top && y <= win_bottom) {
          std::snprintf(buf, sizeof buf, "%s CPU threads (%zu, %lld ranges)", cpu_open ? "v" : ">",
                        cpu_tracks, static_cast<long long>(index.cpu_ranges));
          clipped_text(dl, origin.x + 18, origin.x + kLabelWidth + 200, y + 1, kColTextDim, buf);
          if (hovered && mouse.y >= y && mouse.y < y + kLaneHeight && mouse.x < cv.x0 + 200 && click) {
            tl_.cpu_open[r] = cpu_open ? 0 : 1;
          }
        }
        y += kLaneHeight;
        if (cpu_open) {
          for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
            if (!rank.tracks[k].gpu) draw_track(k);
          }
        }
      }
    }
    // Step boundaries across the whole group.
    if (y >= win_top && group_top <= win_bottom) {
      for (const Step& s : rank.steps) {
        for (TimeNs t : {s.start_ns, s.end_ns}) {
          if (t < tl_.t0 || t > tl_.t1) continue;
          const float x = cv.x_of(t);
          dl->AddLine(ImVec2(x, group_top + kHeaderHeight), ImVec2(x, y), IM_COL32(220, 220, 240, 70));
        }
      }
    }
    y += 3.0f;
    ImGui::PopID();
  }

  // Links between the instances of the selected collective, in rank order.
  if (tl_.links.size() > 1) {
    std::sort(tl_.links.begin(), tl_.links.end(), [](const auto& a, const auto& b) { return a.y < b.y; });
    for (std::size_t i = 1; i < tl_.links.size(); ++i) {
      dl->AddLine(ImVec2(tl_.links[i - 1].x, tl_.links[i - 1].y), ImVec2(tl_.links[i].x, tl_.links[i].y),
                  kColSelect, 1.5f);
    }
  }
  // Box selection.
  if (tl_.has_selection || tl_.selecting) {
    const float xa = std::clamp(cv.x_of(std::min(tl_.sel_a, tl_.sel_b)), cv.x0, cv.x1);
    const float xb = std::clamp(cv.x_of(std::max(tl_.sel_a, tl_.sel_b)), cv.x0, cv.x1);
    dl->AddRectFilled(ImVec2(xa, win_top), ImVec2(xb, win_bottom), IM_COL32(255, 214, 10, 28));
    dl->AddLine(ImVec2(xa, win_top), ImVec2(xa, win_bottom), kColSelect);
    dl->AddLine(ImVec2(xb, win_top), ImVec2(xb, win_bottom), kColSelect);
    time_text(tb, sizeof tb, static_cast<double>(std::abs(tl_.sel_b - tl_.sel_a)));
    const ImVec2 ts = ImGui::CalcTextSize(tb);
    const float cx = (xa + xb - ts.x) * 0.5f;
    dl->AddRectFilled(ImVec2(cx - 4, win_top + 4), ImVec2(cx + ts.x + 4, win_top + 6 + ts.y),
                      IM_COL32(20, 20, 20, 220));
    dl->AddText(ImVec2(cx, win_top + 5), kColSelect, tb);
  }
  // Cursor line.
  if (hovered && mouse.x >= cv.x0 && mouse.x <= cv.x1) {
    dl->AddLine(ImVec2(mouse.x, win_top), ImVec2(mouse.x, win_bottom), IM_COL32(255, 255, 255, 60));
  }
  dl->PopClipRect();
  // Label column separator.
  dl->AddLine(ImVec2(cv.x0 - 1, win_top), ImVec2(cv.x0 - 1, win_bottom), IM_COL32(70, 76, 90, 255));
  if (click && !clicked_collective && mouse.x >= cv.x0) tl_.selected_instance = -1;
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(time_x1 - origin.x, std::max(1.0f, y - origin.y)));
  ImGui::EndChild();
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
