// overview_panel.cpp: the whole job at a glance. A heat map with one row per rank and one
// column per time bucket of the job's span, coloured by the chosen metric's share of each bucket (exposed
// communication, idle or compute) from the per-rank summaries (analysis/measure/summary.hpp), so that it
// never reads the events. Rows sort by rank, lateness or exposed communication; outlier ranks and the slowest
// step are marked; one click on a cell opens the timeline at that rank and time. The layout (grid, order,
// outliers, aggregation to pixels) is in overview_layout.*; docs/GUI.md "Overview" says what each part means.
//
// [SECTION] Preparation (once per profile, and when a choice or the size changes)
// [SECTION] Toolbar and legend
// [SECTION] Canvas: axis, rows, cells, markers, hover, click
// [SECTION] State dump
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "app/gui/overview_panel.hpp"

#include "app/gui/gui_util.hpp"
#include "app/gui/timeline_items.hpp"
#include "app/gui/timeline_lod.hpp"
#include "profiler/json_writer.hpp"
#include "profiler/text_format.hpp"

namespace meshscope::gui {

namespace {

constexpr ImU32 kColCellZero = IM_COL32(36, 40, 49, 255);  // a share of 0
constexpr ImU32 kColOutlier = IM_COL32(255, 92, 214, 255);
constexpr ImU32 kColIdleFull = IM_COL32(228, 231, 238, 255);
constexpr int kColourLevels = 64;  // cell colours are quantised to this many steps (the tooltip is exact)

ImU32 metric_color(OverviewMetric m) {
  switch (m) {
    case OverviewMetric::kExposedComm:
      return kColExposed;
    case OverviewMetric::kIdle:
      return kColIdleFull;
    case OverviewMetric::kCompute:
      return kColCompute;
  }
  return kColText;
}

ImU32 mix(ImU32 a, ImU32 b, float t) {
  auto ch = [&](int shift) {
    const float x = static_cast<float>((a >> shift) & 0xff), y = static_cast<float>((b >> shift) & 0xff);
    return static_cast<ImU32>(std::lround(x + (y - x) * t)) << shift;
  };
  return ch(IM_COL32_R_SHIFT) | ch(IM_COL32_G_SHIFT) | ch(IM_COL32_B_SHIFT) | IM_COL32_A_MASK;
}

int level_of(float share) {
  return std::clamp(static_cast<int>(std::lround(share * kColourLevels)), 0, kColourLevels);
}

std::string time_text(TimeNs ns) {
  char buf[48];
  format_time(buf, sizeof buf, ns);
  return buf;
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * share);
  return buf;
}

}  // namespace

// [SECTION] Preparation
// -----------------------------------------------------------------------------------------------

void OverviewPanel::prepare(const LoadedProfile* loaded) {
  // The choices (metric, sort) outlive the profile; what was built for it does not.
  built_ = {};
  if (!loaded) return;
  const ProfileSummary& summary = *loaded->summary;
  if (!metric_chosen_) {
    // Exposed communication is all zero on a job that never communicates (one GPU): show its idle time then.
    const bool communicates = std::any_of(summary.ranks.begin(), summary.ranks.end(),
                                          [](const RankSummary& r) { return r.total.comm_ns > 0; });
    metric_ = communicates ? OverviewMetric::kExposedComm : OverviewMetric::kIdle;
  }
  built_.grid = overview_grid(summary);
  built_.slowest = slowest_step(summary);
  std::unordered_map<std::int32_t, std::int32_t> index;
  const auto& ranks = loaded->profile->ranks();
  for (std::size_t r = 0; r < ranks.size(); ++r) index.emplace(ranks[r].rank, static_cast<std::int32_t>(r));
  built_.rank_index.assign(summary.ranks.size(), -1);
  for (std::size_t i = 0; i < summary.ranks.size(); ++i) {
    if (auto it = index.find(summary.ranks[i].rank); it != index.end()) built_.rank_index[i] = it->second;
  }
}

void OverviewPanel::refresh(const ProfileSummary& summary, std::int64_t rows, std::int64_t columns) {
  if (built_.dirty) {
    built_.order = overview_order(summary, sort_);
    // The outlier rule runs over the ranks with GPU work only (a rank without any has no share to compare).
    std::vector<double> values;
    for (std::size_t i = 0; i < summary.ranks.size(); ++i) {
      if (built_.grid.has_work[i]) values.push_back(rank_share(summary.ranks[i], metric_));
    }
    built_.cut = mad_cut(values);
    built_.outlier.assign(summary.ranks.size(), 0);
    for (std::size_t i = 0; i < summary.ranks.size(); ++i) {
      if (built_.grid.has_work[i])
        built_.outlier[i] = built_.cut.outlier(rank_share(summary.ranks[i], metric_)) ? 1 : 0;
    }
  }
  if (built_.dirty || rows != built_.map_rows || columns != built_.map_columns) {
    built_.map = overview_map(built_.grid, built_.order, metric_, rows, columns);
    built_.map_rows = rows;
    built_.map_columns = columns;
  }
  built_.dirty = false;
}

std::optional<ShowOnTimeline> OverviewPanel::draw(const LoadedProfile* loaded, bool loading) {
  if (!loaded) {
    ImGui::Spacing();
    ImGui::TextDisabled(
        loading ? "Loading..." : "Open a profile to see its ranks over time (File > Open, or drop a trace).");
    return std::nullopt;
  }
  toolbar(*loaded);
  return canvas(*loaded);
}

// [SECTION] Toolbar and legend
// ----------------------------------------------------------------------------------------------

void OverviewPanel::toolbar(const LoadedProfile& loaded) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Colour");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(px(210));
  if (ImGui::BeginCombo("##metric", to_string(metric_))) {
    for (int m = 0; m < kOverviewMetricCount; ++m) {
      const auto metric = static_cast<OverviewMetric>(m);
      if (ImGui::Selectable(to_string(metric), metric == metric_) && metric != metric_) {
        metric_ = metric;
        metric_chosen_ = true;
        built_.dirty = true;
      }
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Each cell: the metric's share of the time the rank was active in the bucket (from its first to its\n"
        "last GPU work). Exposed communication: communication not overlapped by compute; idle: no GPU work\n"
        "(synchronisation waits count as idle); compute: compute kernels.");
  const ImGuiStyle& style = ImGui::GetStyle();
  same_line_if_fits(ImGui::CalcTextSize("Sort rows by").x + style.ItemSpacing.x + px(210), px(16));
  ImGui::TextUnformatted("Sort rows by");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(px(210));
  if (ImGui::BeginCombo("##sort", to_string(sort_))) {
    for (int s = 0; s < kOverviewSortCount; ++s) {
      const auto sort = static_cast<OverviewSort>(s);
      if (ImGui::Selectable(to_string(sort), sort == sort_) && sort != sort_) {
        sort_ = sort;
        built_.dirty = true;
      }
    }
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "rank: by rank number.\n"
        "lateness: by the rank's total wait in collectives, ascending: the rank the others wait for waits\n"
        "the least and comes first.\n"
        "exposed communication: by the rank's exposed communication over the whole run, most first.");
  // Colour scale.
  same_line_if_fits(ImGui::CalcTextSize("0 %100 %").x + px(118), px(16));
  {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImGui::TextUnformatted("0 %");
    ImGui::SameLine(0, px(4));
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = px(110), h = ImGui::GetTextLineHeight();
    for (int i = 0; i < 22; ++i) {
      const float a = p.x + w * static_cast<float>(i) / 22, b = p.x + w * static_cast<float>(i + 1) / 22;
      dl->AddRectFilled(ImVec2(a, p.y + 2), ImVec2(b, p.y + h - 2),
                        mix(kColCellZero, metric_color(metric_), static_cast<float>(i) / 21));
    }
    ImGui::Dummy(ImVec2(w, h));
    ImGui::SameLine(0, px(4));
    ImGui::TextUnformatted("100 %");
  }
  // Markers.
  const auto outliers = std::count(built_.outlier.begin(), built_.outlier.end(), std::uint8_t{1});
  char text[160];
  std::snprintf(text, sizeof text, "outlier (%lld)", static_cast<long long>(outliers));
  same_line_if_fits(ImGui::CalcTextSize(text).x + ImGui::GetTextLineHeight() + px(4), px(16));
  {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddTriangleFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + h * 0.7f, p.y + h / 2),
                                                  ImVec2(p.x, p.y + h - 2), kColOutlier);
    ImGui::Dummy(ImVec2(h * 0.7f, h));
    ImGui::SameLine(0, px(4));
    ImGui::TextUnformatted(text);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "A rank whose share of %s over its whole run is more than %.0f MADs from the median\n"
          "of all ranks with GPU work: |x - median| > %.0f x 1.4826 x MAD (Leys et al. 2013).\n"
          "median %s, MAD %s.",
          to_string(metric_), built_.cut.k, built_.cut.k, percent(built_.cut.median).c_str(),
          percent(built_.cut.mad).c_str());
  }
  if (built_.slowest) {
    std::snprintf(text, sizeof text, "slowest step %lld: mean GPU span %s over %lld rank%s",
                  static_cast<long long>(built_.slowest->number),
                  duration_text(static_cast<TimeNs>(built_.slowest->mean_span_ns)).c_str(),
                  static_cast<long long>(built_.slowest->ranks), built_.slowest->ranks == 1 ? "" : "s");
    same_line_if_fits(ImGui::CalcTextSize(text).x + ImGui::GetTextLineHeight() + px(4), px(16));
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x, p.y + 2), ImVec2(p.x + h, p.y + h - 2), kColSelect, 0, 0,
                                        px(2));
    ImGui::Dummy(ImVec2(h, h));
    ImGui::SameLine(0, px(4));
    ImGui::TextUnformatted(text);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "The step with the largest mean GPU span over the ranks that ran it; the band spans its\n"
          "earliest GPU start to its latest GPU end over those ranks.");
  }
  const ProfileSummary& summary = *loaded.summary;
  const auto with_work =
      std::count(built_.grid.has_work.begin(), built_.grid.has_work.end(), std::uint8_t{1});
  std::string line = std::to_string(summary.ranks.size()) + (summary.ranks.size() == 1 ? " rank" : " ranks");
  if (static_cast<std::size_t>(with_work) != summary.ranks.size())
    line += " (" + std::to_string(with_work) + " with GPU work)";
  if (built_.map.columns > 0) {
    line += " | " + std::to_string(built_.map.columns) + " columns of " + time_text(built_.map.column_ns);
    if (built_.map.ranks_per_row > 1)
      line += " | " + std::to_string(built_.map.ranks_per_row) +
              " ranks per row: a cell shows the largest share among them";
  }
  line += summary.from_tables ? " | from the profile's summaries" : " | computed from the events";
  if (!loaded.summary_note.empty()) line += " (" + loaded.summary_note + ")";
  line += " | click a cell: the timeline at that rank and time";
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", line.c_str());
  ImGui::PopStyleColor();
}

// [SECTION] Canvas
// -----------------------------------------------------------------------------------------------

namespace {

// The map's cells: runs of equal colour level along a row merged into one rectangle, from the cell colour of
// zero to TOP.
void draw_overview_cells(ImDrawList* dl, const OverviewMap& map, float x0, float y0, float col_w, float row_h,
                         ImU32 top) {
  for (std::int64_t r = 0; r < map.rows; ++r) {
    const float ya = y0 + row_h * static_cast<float>(r), yb = ya + std::max(row_h, 1.0f);
    std::int64_t c = 0;
    while (c < map.columns) {
      const float v = map.at(r, c);
      std::int64_t e = c + 1;
      const int level = v < 0 ? -1 : level_of(v);
      while (e < map.columns && (map.at(r, e) < 0 ? -1 : level_of(map.at(r, e))) == level) ++e;
      if (level >= 0)
        dl->AddRectFilled(ImVec2(x0 + col_w * static_cast<float>(c), ya),
                          ImVec2(x0 + col_w * static_cast<float>(e), yb),
                          mix(kColCellZero, top, static_cast<float>(level) / kColourLevels));
      c = e;
    }
  }
}

}  // namespace

// The whole-run figures of the ranks of map row R (hover on its label).
void OverviewPanel::row_tooltip(const LoadedProfile& loaded, std::int64_t r) {
  const OverviewMap& map = built_.map;
  const auto n = static_cast<std::int64_t>(built_.order.size());
  const std::int64_t a = r * map.ranks_per_row, b = std::min(n, a + map.ranks_per_row);
  ImGui::BeginTooltip();
  ImGui::TextDisabled(
      "whole run: exposed communication, idle, compute (shares of the GPU span); wait in "
      "collectives");
  for (std::int64_t i = a; i < b && i < a + 16; ++i) {
    const std::uint32_t row = built_.order[static_cast<std::size_t>(i)];
    const RankSummary& rank = loaded.summary->ranks[row];
    if (!built_.grid.has_work[row]) {
      ImGui::Text("rank %d: no GPU work", rank.rank);
      continue;
    }
    if (built_.outlier[row]) ImGui::PushStyleColor(ImGuiCol_Text, to_vec4(kColOutlier));
    ImGui::Text("rank %d: %s, %s, %s; %s%s", rank.rank,
                percent(rank_share(rank, OverviewMetric::kExposedComm)).c_str(),
                percent(rank_share(rank, OverviewMetric::kIdle)).c_str(),
                percent(rank_share(rank, OverviewMetric::kCompute)).c_str(),
                duration_text(rank.collective_wait_ns).c_str(), built_.outlier[row] ? " (outlier)" : "");
    if (built_.outlier[row]) ImGui::PopStyleColor();
  }
  if (b - a > 16) ImGui::TextDisabled("and %lld more", static_cast<long long>(b - a - 16));
  ImGui::EndTooltip();
}

std::optional<ShowOnTimeline> OverviewPanel::canvas(const LoadedProfile& loaded) {
  ImGui::BeginChild("##overview", ImVec2(0, 0), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const OverviewGrid& grid = built_.grid;
  if (grid.columns == 0) {
    refresh(*loaded.summary, 1, 1);
    ImGui::Spacing();
    ImGui::TextDisabled("No rank of this profile has GPU work: there is nothing to show over time.");
    std::fill(std::begin(built_.canvas), std::end(built_.canvas), 0.0f);
    ImGui::EndChild();
    return std::nullopt;
  }
  const float ui = ui_scale();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float font = ImGui::GetFontSize();
  const float label_w = ImGui::CalcTextSize("ranks 00000-00000").x + 8 * ui;
  const float marker_w = 12 * ui;
  const float axis_h = 2 * font + 14 * ui;  // time labels, then the slowest step's label and band
  const float x0 = pos.x + label_w + marker_w, x1 = std::max(x0 + 1, pos.x + avail.x - 8 * ui);
  const float y0 = pos.y + axis_h, y1 = std::max(y0 + 1, pos.y + avail.y - 4 * ui);
  refresh(*loaded.summary, static_cast<std::int64_t>(y1 - y0), static_cast<std::int64_t>(x1 - x0));
  const OverviewMap& map = built_.map;
  const float row_h = std::min(22 * ui, (y1 - y0) / static_cast<float>(std::max<std::int64_t>(1, map.rows)));
  const float col_w = (x1 - x0) / static_cast<float>(std::max<std::int64_t>(1, map.columns));
  const float map_y1 = y0 + row_h * static_cast<float>(map.rows);
  built_.canvas[0] = x0;
  built_.canvas[1] = y0;
  built_.canvas[2] = x1;
  built_.canvas[3] = map_y1;
  built_.row_h = row_h;
  const auto n = static_cast<std::int64_t>(built_.order.size());
  const TimeNs t0 = map.start_ns;
  const double ns_per_px = static_cast<double>(map.column_ns) * static_cast<double>(map.columns) / (x1 - x0);
  auto x_of = [&](TimeNs t) { return x0 + static_cast<float>(static_cast<double>(t - t0) / ns_per_px); };

  // Axis: time from the profile's start, as on the timeline.
  dl->AddRectFilled(ImVec2(pos.x, pos.y), ImVec2(x1, pos.y + axis_h - 2 * ui), IM_COL32(24, 27, 33, 255));
  const TimeNs origin = loaded.profile->first_ns();
  const TimeNs step = ruler_step(ns_per_px, 110.0 * ui);
  char buf[64];
  {
    const TimeNs rel = t0 - origin;
    const TimeNs first = (rel >= 0 ? (rel + step - 1) / step : -((-rel) / step)) * step;
    const TimeNs t_end = t0 + map.column_ns * map.columns;
    for (TimeNs t = first; origin + t <= t_end; t += step) {
      const float x = x_of(origin + t);
      dl->AddLine(ImVec2(x, pos.y + axis_h - 10 * ui), ImVec2(x, pos.y + axis_h - 2 * ui), kColTextDim);
      dl->AddLine(ImVec2(x, y0), ImVec2(x, map_y1), kColGrid);
      format_time(buf, sizeof buf, t, step);
      dl->AddText(ImVec2(x + 3, pos.y + 2 * ui), kColText, buf);
    }
    clipped_text(dl, pos.x + 4, x0 - 4, pos.y + 2 * ui, kColTextDim,
                 std::string("rows by ") + to_string(sort_));
  }

  draw_overview_cells(dl, map, x0, y0, col_w, row_h, metric_color(metric_));

  // Row labels: every row when they fit, else every k-th row.
  const std::int64_t label_every =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((font + 2) / std::max(row_h, 0.01f))));
  for (std::int64_t r = 0; r < map.rows; r += label_every) {
    const std::int64_t a = r * map.ranks_per_row, b = std::min(n, a + map.ranks_per_row);
    const auto& ranks = loaded.summary->ranks;
    if (b - a == 1 && label_every == 1) {
      std::snprintf(buf, sizeof buf, "rank %d", ranks[built_.order[static_cast<std::size_t>(a)]].rank);
    } else {
      std::snprintf(buf, sizeof buf, "%d", ranks[built_.order[static_cast<std::size_t>(a)]].rank);
    }
    const float y = y0 + row_h * static_cast<float>(r);
    const float w = ImGui::CalcTextSize(buf).x;
    const float ty = label_every == 1 ? y + (row_h - font) / 2 : y - 1;
    dl->AddText(ImVec2(x0 - marker_w - 4 * ui - w, ty), kColTextDim, buf);
    if (label_every > 1) dl->AddLine(ImVec2(x0 - marker_w, y), ImVec2(x0 - 2 * ui, y), kColTextDim);
  }

  // Outliers: a triangle on the row of each (a row of several ranks: when any of them is one).
  for (std::int64_t r = 0; r < map.rows; ++r) {
    const std::int64_t a = r * map.ranks_per_row, b = std::min(n, a + map.ranks_per_row);
    bool any = false;
    for (std::int64_t i = a; i < b && !any; ++i)
      any = built_.outlier[built_.order[static_cast<std::size_t>(i)]] != 0;
    if (!any) continue;
    const float cy = y0 + row_h * (static_cast<float>(r) + 0.5f);
    const float half = std::max(row_h * 0.45f, 4 * ui);
    dl->AddTriangleFilled(ImVec2(x0 - marker_w, cy - half), ImVec2(x0 - 2 * ui, cy),
                          ImVec2(x0 - marker_w, cy + half), kColOutlier);
  }

  // Slowest step: a band on the axis and its window outlined over the map.
  if (built_.slowest) {
    const float a = std::max(x0, x_of(built_.slowest->start_ns)),
                b = std::min(x1, x_of(built_.slowest->end_ns));
    if (b > a) {
      dl->AddRectFilled(ImVec2(a, pos.y + axis_h - 6 * ui), ImVec2(b, pos.y + axis_h - 2 * ui),
                        IM_COL32(255, 214, 10, 160));
      dl->AddRect(ImVec2(a, y0), ImVec2(b, map_y1), kColSelect, 0, 0, 2 * ui);
      std::snprintf(buf, sizeof buf, "slowest step %lld", static_cast<long long>(built_.slowest->number));
      const float tw = ImGui::CalcTextSize(buf).x;
      const float tx = std::clamp((a + b - tw) / 2, x0, std::max(x0, x1 - tw));
      dl->AddText(ImVec2(tx, pos.y + font + 5 * ui), kColSelect, buf);
    }
  }

  // Hover on a row's label: the whole-run figures of its rank(s).
  if (const ImVec2 m = ImGui::GetIO().MousePos;
      ImGui::IsWindowHovered() && m.x >= pos.x && m.x < x0 && m.y >= y0 && m.y < map_y1) {
    row_tooltip(loaded,
                std::clamp(static_cast<std::int64_t>((m.y - y0) / row_h), std::int64_t{0}, map.rows - 1));
  }

  // Hover and click.
  ImGui::SetCursorScreenPos(ImVec2(x0, y0));
  ImGui::InvisibleButton("##cells", ImVec2(x1 - x0, std::max(1.0f, map_y1 - y0)));
  std::optional<ShowOnTimeline> clicked;
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const auto r = std::clamp(static_cast<std::int64_t>((m.y - y0) / row_h), std::int64_t{0}, map.rows - 1);
    const auto c =
        std::clamp(static_cast<std::int64_t>((m.x - x0) / col_w), std::int64_t{0}, map.columns - 1);
    dl->AddRect(ImVec2(x0 + col_w * static_cast<float>(c), y0 + row_h * static_cast<float>(r)),
                ImVec2(x0 + col_w * static_cast<float>(c + 1), y0 + row_h * static_cast<float>(r + 1)),
                kColText, 0, 0, 1.5f * ui);
    cell_tooltip(loaded, r, c);
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
      // The rank whose share the cell shows (a row of one rank: that rank, active or not).
      std::int32_t row = map.arg_at(r, c);
      if (row < 0)
        row = static_cast<std::int32_t>(built_.order[static_cast<std::size_t>(r * map.ranks_per_row)]);
      clicked = cell_window(static_cast<std::size_t>(row), c);
    }
  }
  ImGui::EndChild();
  return clicked;
}

void OverviewPanel::cell_tooltip(const LoadedProfile& loaded, std::int64_t row, std::int64_t column) {
  const OverviewMap& map = built_.map;
  const auto& ranks = loaded.summary->ranks;
  const auto n = static_cast<std::int64_t>(built_.order.size());
  const std::int64_t a = row * map.ranks_per_row, b = std::min(n, a + map.ranks_per_row);
  const TimeNs lo = map.start_ns + map.column_ns * column, origin = loaded.profile->first_ns();
  const std::int32_t shown = map.arg_at(row, column);
  ImGui::BeginTooltip();
  if (b - a == 1) {
    ImGui::Text("rank %d", ranks[built_.order[static_cast<std::size_t>(a)]].rank);
  } else {
    std::string list;
    for (std::int64_t i = a; i < b && i < a + 8; ++i)
      list += (i == a ? "" : ", ") + std::to_string(ranks[built_.order[static_cast<std::size_t>(i)]].rank);
    if (b - a > 8) list += ", ...";
    ImGui::Text("%lld ranks: %s", static_cast<long long>(b - a), list.c_str());
    if (shown >= 0)
      ImGui::TextDisabled("the cell shows the largest %s share among them: rank %d's", to_string(metric_),
                          ranks[static_cast<std::size_t>(shown)].rank);
  }
  ImGui::Text("%s to %s (%s)", time_text(lo - origin).c_str(), time_text(lo + map.column_ns - origin).c_str(),
              time_text(map.column_ns).c_str());
  const std::size_t detail =
      shown >= 0 ? static_cast<std::size_t>(shown) : built_.order[static_cast<std::size_t>(a)];
  const OverviewBucket bucket = merged_bucket(built_.grid, map, detail, column);
  if (bucket.span_ns <= 0) {
    ImGui::TextDisabled("no GPU work of %s in this window", b - a == 1 ? "the rank" : "these ranks");
  } else {
    if (b - a > 1) ImGui::Text("rank %d:", ranks[detail].rank);
    ImGui::Text("active %s (from its first to its last GPU work)", duration_text(bucket.span_ns).c_str());
    for (int m = 0; m < kOverviewMetricCount; ++m) {
      const auto metric = static_cast<OverviewMetric>(m);
      const bool chosen = metric == metric_;
      if (chosen) ImGui::PushStyleColor(ImGuiCol_Text, to_vec4(kColSelect));
      ImGui::Text("%s %s (%s)", to_string(metric), percent(metric_share(bucket, metric)).c_str(),
                  duration_text(metric_ns(bucket, metric)).c_str());
      if (chosen) ImGui::PopStyleColor();
    }
  }
  if (built_.outlier[detail]) {
    ImGui::PushStyleColor(ImGuiCol_Text, to_vec4(kColOutlier));
    ImGui::Text("outlier: %s is %s of its whole run (median of the ranks %s)", to_string(metric_),
                percent(rank_share(ranks[detail], metric_)).c_str(), percent(built_.cut.median).c_str());
    ImGui::PopStyleColor();
  }
  ImGui::TextDisabled("click: rank %d's lanes at this time on the timeline", ranks[detail].rank);
  ImGui::EndTooltip();
}

std::optional<ShowOnTimeline> OverviewPanel::cell_window(std::size_t grid_row, std::int64_t column) const {
  if (grid_row >= built_.rank_index.size() || built_.rank_index[grid_row] < 0) return std::nullopt;
  const TimeNs lo = built_.map.start_ns + built_.map.column_ns * column;
  ShowOnTimeline show;
  show.rank_index = static_cast<std::size_t>(built_.rank_index[grid_row]);
  show.window = true;
  show.start = lo;
  show.end = lo + built_.map.column_ns;
  return show;
}

// [SECTION] State dump
// -----------------------------------------------------------------------------------------------

void OverviewPanel::dump_state(JsonWriter& j, const LoadedProfile& loaded) const {
  const auto& ranks = loaded.summary->ranks;
  const OverviewMap& map = built_.map;
  j.key("overview").begin_object();
  j.field("metric", to_string(metric_)).field("sort", to_string(sort_));
  j.key("canvas").begin_array();
  for (float v : built_.canvas) j.value(static_cast<double>(v));
  j.end_array();
  j.field("row_h", static_cast<double>(built_.row_h));
  j.field("rows", map.rows).field("columns", map.columns).field("ranks_per_row", map.ranks_per_row);
  j.field("start_ns", map.start_ns).field("column_ns", map.column_ns);
  j.key("order").begin_array();
  for (std::uint32_t i : built_.order) j.value(ranks[i].rank);
  j.end_array();
  j.key("outliers").begin_array();
  for (std::size_t i = 0; i < built_.outlier.size(); ++i) {
    if (built_.outlier[i]) j.value(ranks[i].rank);
  }
  j.end_array();
  j.field("slowest_step", built_.slowest ? built_.slowest->number : std::int64_t{-1});
  j.field("from_tables", loaded.summary->from_tables);
  j.end_object();
}

}  // namespace meshscope::gui
