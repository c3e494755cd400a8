// summary_panel.cpp: the Summary panel, where each rank's time goes. Per-rank stacked bars (compute,
// overlapped communication, exposed communication, memory, idle), the per-step table of one rank (click a
// step to see it on the timeline), the top kernels and the collectives with measured bus bandwidth next to
// the predicted one for the Explorer's hardware. Tables are sortable and clipped (ImGuiListClipper).
//
// [SECTION] Preparation (once per profile)
// [SECTION] What stands out (measure::findings, as `report` opens)
// [SECTION] Rank bars
// [SECTION] Steps
// [SECTION] Kernels and collectives
// [SECTION] Baseline comparison (measure::diff_summaries of the two profiles, computed when the baseline was
// opened)
#include "app/gui/summary_panel.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "analysis/compare/calibrate.hpp"
#include "analysis/model/collectives.hpp"
#include "app/gui/gui_util.hpp"
#include "profiler/json_writer.hpp"

namespace meshscope::gui {

namespace {

struct Segment {
  const char* name;
  double ns;
  ImU32 color;
};

// Compute alone, overlapped comm, exposed comm, memory not under compute or comm, idle: sums to the span.
std::array<Segment, 5> segments(const Breakdown& b) {
  const double compute_only = static_cast<double>(b.compute_ns - b.overlap_ns);
  const double memory_only =
      static_cast<double>(std::max<TimeNs>(0, b.busy_ns - b.compute_ns - b.exposed_comm_ns));
  return {{{"compute", std::max(0.0, compute_only), kColCompute},
           {"overlapped comm", static_cast<double>(b.overlap_ns), kColOverlap},
           {"exposed comm", static_cast<double>(b.exposed_comm_ns), kColExposed},
           {"memory", memory_only, kColMemory},
           {"idle", static_cast<double>(b.idle_ns), kColIdle}}};
}

void breakdown_bar(const char* id, const Breakdown& b, double scale, float width, float height) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, ImVec2(width, height));
  const bool hovered = ImGui::IsItemHovered();
  const float mx = ImGui::GetIO().MousePos.x;
  dl->AddRectFilled(p, ImVec2(p.x + width, p.y + height), IM_COL32(30, 34, 40, 255));
  float x = p.x;
  char t[32];
  for (const auto& s : segments(b)) {
    const float w = scale > 0 ? static_cast<float>(s.ns / scale * width) : 0;
    if (w <= 0) continue;
    dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + w, p.y + height), s.color);
    if (w > 52) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.0f%%",
                    b.span_ns > 0 ? 100.0 * s.ns / static_cast<double>(b.span_ns) : 0.0);
      dl->AddText(ImVec2(x + 3, p.y + (height - ImGui::GetFontSize()) * 0.5f), IM_COL32(10, 12, 16, 255),
                  buf);
    }
    if (hovered && mx >= x && mx < x + w) {
      ImGui::SetTooltip("%s: %s (%.1f%% of the span)", s.name, duration_text(t, sizeof t, s.ns),
                        b.span_ns > 0 ? 100.0 * s.ns / static_cast<double>(b.span_ns) : 0.0);
    }
    x += w;
  }
}

}  // namespace

// [SECTION] Preparation
// --------------------------------------------------------------------------------------

void SummaryPanel::prepare(const LoadedProfile* loaded) {
  rank_ = 0;
  loaded_ = loaded;
  prepare_loaded();
  loaded_ = nullptr;
}

void SummaryPanel::prepare_loaded() {
  kernels_all_.clear();
  kernel_order_.clear();
  collective_order_.clear();
  findings_.clear();
  if (!loaded_) return;
  findings_ = measure::findings(*loaded_->profile, loaded_->job());
  gpu_line_ = profile_gpu_line(*loaded_->profile, loaded_->measured ? loaded_->measured->workload.gpu : "",
                               loaded_->start.hardware,
                               loaded_->start.stated_hardware     ? HardwareOrigin::kStated
                               : loaded_->start.recorded_hardware ? HardwareOrigin::kRecorded
                                                                  : HardwareOrigin::kPreset);
  std::unordered_map<std::uint64_t, std::size_t> at;  // (name, class) -> index
  for (const auto& r : loaded_->job().ranks) {
    for (const auto& k : r.kernels) {
      const std::uint64_t key = (static_cast<std::uint64_t>(k.name) << 8) | static_cast<std::uint64_t>(k.cls);
      auto [it, inserted] = at.try_emplace(key, kernels_all_.size());
      if (inserted) {
        kernels_all_.push_back(k);
        continue;
      }
      auto& s = kernels_all_[it->second];
      s.min_ns = std::min(s.min_ns, k.min_ns);
      s.max_ns = std::max(s.max_ns, k.max_ns);
      s.count += k.count;
      s.total_ns += k.total_ns;
    }
  }
  std::sort(kernels_all_.begin(), kernels_all_.end(),
            [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
  kernel_order_.resize(kernels_all_.size());
  std::iota(kernel_order_.begin(), kernel_order_.end(), 0u);
  collective_order_.resize(loaded_->job().collectives.stats.size());
  std::iota(collective_order_.begin(), collective_order_.end(), 0u);
}

std::optional<ShowOnTimeline> SummaryPanel::draw(const LoadedProfile* loaded, bool loading,
                                                 const FromExplorer& explorer, const Baseline& baseline) {
  if (!loaded) {
    ImGui::Spacing();
    ImGui::TextDisabled(loading ? "Loading..."
                                : "Open a profile to see its summary (File > Open, or drop a trace).");
    return std::nullopt;
  }
  loaded_ = loaded;
  followed_.reset();
  draw_loaded(explorer, baseline);
  loaded_ = nullptr;
  return std::exchange(followed_, std::nullopt);
}

void SummaryPanel::draw_loaded(const FromExplorer& explorer, const Baseline& baseline) {
  for (const auto& note : loaded_->job().notes) text_wrapped_disabled("note: " + note);
  text_wrapped_disabled("GPU: " + gpu_line_);
  draw_findings();
  draw_baseline(baseline);
  draw_rank_bars();
  ImGui::Spacing();
  draw_steps();
  ImGui::Spacing();
  const float h = std::max(160.0f, ImGui::GetContentRegionAvail().y);
  if (ImGui::BeginTable("##bottom", 2, ImGuiTableFlags_SizingStretchSame | ImGuiTableFlags_BordersInnerV,
                        ImVec2(0, h))) {
    ImGui::TableNextColumn();
    draw_kernels();
    ImGui::TableNextColumn();
    draw_collectives(explorer);
    ImGui::EndTable();
  }
}

// [SECTION] What stands out
// ----------------------------------------------------------------------------------------

void SummaryPanel::draw_findings() {
  ImGui::TextDisabled("WHAT STANDS OUT (as meshscope report says it)");
  ImGui::PushTextWrapPos(0);
  for (std::size_t i = 0; i < findings_.size(); ++i) {
    const measure::Finding& f = findings_[i];
    const bool nothing = f.kind == measure::Finding::Kind::kNothing;
    using Kind = measure::Finding::Kind;
    const ImU32 color = nothing                                 ? kColTextDim
                        : f.kind == Kind::kGpuIdle              ? kColText
                        : f.kind == Kind::kLargestCommunication ? kColComm
                                                                : kColExposed;
    ImGui::PushID(static_cast<int>(i));
    // A rank it names opens on the timeline, its lanes scrolled into view.
    std::size_t rank_index = 0;
    const bool on_timeline = f.rank >= 0 && [&] {
      const auto& ranks = loaded_->profile->ranks();
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        if (ranks[r].rank == f.rank) return (rank_index = r), true;
      }
      return false;
    }();
    if (on_timeline) {
      if (ImGui::SmallButton("show")) {
        followed_.emplace();
        followed_->rank_index = rank_index;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("rank %d's lanes on the timeline", f.rank);
      ImGui::SameLine();
    }
    ImGui::TextColored(to_vec4(color), "%s", f.text.c_str());
    ImGui::PopID();
  }
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
}

// [SECTION] Rank bars
// ----------------------------------------------------------------------------------------

void SummaryPanel::draw_rank_bars() {
  const auto& analysis = loaded_->job();
  const Profile& profile = *loaded_->profile;
  ImGui::TextDisabled("PER-RANK GPU TIME (whole profile; bars share one scale: the longest span)");
  // The legend follows on the same line when it fits, else on the next.
  float legend_w = 0;
  for (const auto& s : segments(Breakdown{}))
    legend_w +=
        ImGui::GetTextLineHeight() + 2 + ImGui::CalcTextSize(s.name).x + ImGui::GetStyle().ItemSpacing.x;
  ImGui::SameLine();
  if (ImGui::GetCursorPosX() + legend_w > ImGui::GetWindowContentRegionMax().x) ImGui::NewLine();
  bool first = true;
  for (const auto& s : segments(Breakdown{})) {
    if (!first) legend_same_line(s.name);
    first = false;
    legend_item(s.color, s.name);
  }
  double scale = 0;
  for (const auto& r : analysis.ranks) scale = std::max(scale, static_cast<double>(r.total.span_ns));
  const float row_h = ImGui::GetFrameHeight();
  const float max_h = std::min(
      static_cast<float>(analysis.ranks.size()) * (row_h + ImGui::GetStyle().ItemSpacing.y) + 8, px(230));
  ImGui::BeginChild("##rankbars", ImVec2(0, max_h), false);
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(analysis.ranks.size()), row_h + ImGui::GetStyle().ItemSpacing.y);
  char a[32], b[32], c[32], stats[160];
  auto stats_text = [&](const measure::RankResult& r) {
    std::snprintf(stats, sizeof stats, "span %s, exposed %s (%.0f%% of comm), idle %s",
                  duration_text(a, sizeof a, static_cast<double>(r.total.span_ns)),
                  duration_text(b, sizeof b, static_cast<double>(r.total.exposed_comm_ns)),
                  r.total.comm_ns > 0 ? 100.0 * static_cast<double>(r.total.exposed_comm_ns) /
                                            static_cast<double>(r.total.comm_ns)
                                      : 0.0,
                  duration_text(c, sizeof c, static_cast<double>(r.total.idle_ns)));
    return stats;
  };
  // The statistics column is as wide as its widest text (never clipped), the bars take the rest, down to a
  // minimum under which the statistics are cut with an ellipsis (full text on hover).
  float stats_w = 0;
  for (const auto& r : analysis.ranks) stats_w = std::max(stats_w, ImGui::CalcTextSize(stats_text(r)).x);
  const float label_w = ImGui::CalcTextSize("rank 00000").x + ImGui::GetStyle().ItemSpacing.x;
  const float bar_w = std::max(px(160), ImGui::GetContentRegionAvail().x - label_w - stats_w - px(16));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& r = analysis.ranks[static_cast<std::size_t>(i)];
      ImGui::PushID(i);
      ImGui::AlignTextToFramePadding();
      ImGui::Text("rank %d", profile.ranks()[r.rank_index].rank);
      ImGui::SameLine(label_w);
      breakdown_bar("##bar", r.total, scale, bar_w, row_h);
      ImGui::SameLine();
      ImGui::AlignTextToFramePadding();
      text_ellipsis(stats_text(r), 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
      ImGui::PopID();
    }
  }
  ImGui::EndChild();
}

// [SECTION] Steps
// --------------------------------------------------------------------------------------------

void SummaryPanel::draw_steps() {
  const auto& analysis = loaded_->job();
  const Profile& profile = *loaded_->profile;
  if (analysis.ranks.empty()) return;
  rank_ = std::clamp(rank_, 0, static_cast<int>(analysis.ranks.size()) - 1);
  const auto& r = analysis.ranks[static_cast<std::size_t>(rank_)];
  step_rects_.clear();
  ImGui::TextDisabled("STEPS OF RANK");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(px(90));
  char label[32];
  std::snprintf(label, sizeof label, "%d", profile.ranks()[r.rank_index].rank);
  if (ImGui::BeginCombo("##steprank", label)) {
    for (std::size_t i = 0; i < analysis.ranks.size(); ++i) {
      std::snprintf(label, sizeof label, "%d", profile.ranks()[analysis.ranks[i].rank_index].rank);
      if (ImGui::Selectable(label, static_cast<int>(i) == rank_)) rank_ = static_cast<int>(i);
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  if (r.steps.empty()) {
    ImGui::TextDisabled("this rank has no steps (no ProfilerStep or NVTX step ranges)");
    return;
  }
  char note[160];
  std::snprintf(note, sizeof note,
                "(%s; GPU work launched inside each step; click a row to show the step on the timeline)",
                r.step_source.c_str());
  text_ellipsis(note, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  // Horizontal scrolling rather than squeezed columns when the window is narrow.
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit;
  const float h =
      std::min(static_cast<float>(r.steps.size() + 1) * (ImGui::GetTextLineHeightWithSpacing() + px(4)) +
                   px(6) + ImGui::GetStyle().ScrollbarSize,
               px(200));
  const float avail = ImGui::GetContentRegionAvail().x;
  if (!ImGui::BeginTable("##steps", 10, flags, ImVec2(0, h), std::max(avail, px(1000)))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* c : {"step", "CPU duration", "GPU span", "compute", "comm", "overlapped", "exposed comm",
                        "memory", "idle"}) {
    ImGui::TableSetupColumn(c);
  }
  ImGui::TableSetupColumn("breakdown", ImGuiTableColumnFlags_WidthStretch, 1.0f);
  ImGui::TableHeadersRow();
  double scale = 0;
  for (const auto& s : r.steps) scale = std::max(scale, static_cast<double>(s.gpu.span_ns));
  char t[32];
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(r.steps.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& s = r.steps[static_cast<std::size_t>(i)];
      const auto& g = s.gpu;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      std::snprintf(label, sizeof label, "%lld", static_cast<long long>(s.number));
      const bool clicked = ImGui::Selectable(label, false, ImGuiSelectableFlags_SpanAllColumns);
      step_rects_.push_back({s.number,
                             {ImGui::GetItemRectMin().x, ImGui::GetItemRectMin().y, ImGui::GetItemRectMax().x,
                              ImGui::GetItemRectMax().y}});
      if (clicked) {
        const TimeNs lo = std::min(s.cpu_start_ns, g.span_ns > 0 ? g.start_ns : s.cpu_start_ns);
        const TimeNs hi = std::max(s.cpu_end_ns, g.end_ns);
        const TimeNs pad = (hi - lo) / 40;
        // The step is selected too: its details (breakdown) show under the timeline.
        followed_ = ShowOnTimeline{
            .rank_index = r.rank_index, .window = true, .start = lo - pad, .end = hi + pad, .step = s.number};
      }
      ImGui::PopID();
      const double cols[] = {static_cast<double>(s.cpu_end_ns - s.cpu_start_ns),
                             static_cast<double>(g.span_ns),
                             static_cast<double>(g.compute_ns),
                             static_cast<double>(g.comm_ns),
                             static_cast<double>(g.overlap_ns),
                             static_cast<double>(g.exposed_comm_ns),
                             static_cast<double>(g.memory_ns),
                             static_cast<double>(g.idle_ns)};
      for (int c = 0; c < 8; ++c) {
        ImGui::TableNextColumn();
        if (c == 5 && cols[c] > 0)
          ImGui::TextColored(to_vec4(kColExposed), "%s", duration_text(t, sizeof t, cols[c]));
        else
          ImGui::TextUnformatted(duration_text(t, sizeof t, cols[c]));
      }
      ImGui::TableNextColumn();
      breakdown_bar("##sb", g, scale, ImGui::GetContentRegionAvail().x, ImGui::GetTextLineHeight());
    }
  }
  ImGui::EndTable();
}

// [SECTION] Kernels and collectives
// --------------------------------------------------------------------------

void SummaryPanel::draw_kernels() {
  const Profile& profile = *loaded_->profile;
  TimeNs total = 0;
  for (const auto& k : kernels_all_) total += k.total_ns;
  ImGui::TextDisabled("TOP KERNELS (all ranks, %zu names; click a header to sort)", kernels_all_.size());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_Sortable |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
  // As wide as the area less the vertical scroll bar: as wide as the area, it scrolled sideways by the bar's
  // width and hid the last column.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!ImGui::BeginTable("##kernels", 6, flags, ImVec2(0, avail.y),
                         std::max(avail.x - ImGui::GetStyle().ScrollbarSize, px(560))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("class");
  ImGui::TableSetupColumn("count");
  ImGui::TableSetupColumn("total",
                          ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("mean");
  ImGui::TableSetupColumn("%");
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
      specs && specs->SpecsDirty && specs->SpecsCount > 0) {
    const auto& spec = specs->Specs[0];
    const bool asc = spec.SortDirection == ImGuiSortDirection_Ascending;
    auto key = [&](const measure::KernelStat& k) -> double {
      switch (spec.ColumnIndex) {
        case 1:
          return static_cast<double>(k.cls);
        case 2:
          return static_cast<double>(k.count);
        case 4:
          return k.count ? static_cast<double>(k.total_ns) / static_cast<double>(k.count) : 0.0;
        default:
          return static_cast<double>(k.total_ns);
      }
    };
    std::stable_sort(kernel_order_.begin(), kernel_order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto& ka = kernels_all_[a];
      const auto& kb = kernels_all_[b];
      if (spec.ColumnIndex == 0) {
        const int c = profile.str(ka.name).compare(profile.str(kb.name));
        return asc ? c < 0 : c > 0;
      }
      return asc ? key(ka) < key(kb) : key(ka) > key(kb);
    });
    specs->SpecsDirty = false;
  }
  char t[32];
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(kernel_order_.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& k = kernels_all_[kernel_order_[static_cast<std::size_t>(i)]];
      kernel_row_cells(profile.str(k.name), k);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(duration_text(
          t, sizeof t, k.count ? static_cast<double>(k.total_ns) / static_cast<double>(k.count) : 0.0));
      ImGui::TableNextColumn();
      ImGui::Text("%.1f",
                  total > 0 ? 100.0 * static_cast<double>(k.total_ns) / static_cast<double>(total) : 0.0);
    }
  }
  ImGui::EndTable();
}

void SummaryPanel::draw_collectives(const FromExplorer& explorer) {
  const auto& report = loaded_->job().collectives;
  char line[256];
  std::snprintf(line, sizeof line,
                "COLLECTIVES: measured busbw next to predicted by the alpha-beta collective model on %s (%s)",
                explorer.hardware->name.c_str(), explorer.hardware_note.c_str());
  text_ellipsis(line, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  if (loaded_->job_analysis) {
    // Lazy ranks: the statistics are the summaries'; instances are matched among the ranks loaded.
    std::snprintf(
        line, sizeof line,
        "from the summaries of every rank (count, total, mean); instances are matched in the timeline "
        "among the %zu ranks loaded",
        loaded_->lazy ? loaded_->lazy->loaded_ranks : std::size_t{0});
  } else {
    std::snprintf(line, sizeof line,
                  "%lld instances matched across ranks, %lld incomplete, mean skew %.1f \xC2\xB5s",
                  static_cast<long long>(report.matched), static_cast<long long>(report.incomplete),
                  static_cast<double>(report.mean_skew_ns) / 1e3);
  }
  text_ellipsis(line, 0, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_Sortable |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!ImGui::BeginTable("##collectives", 9, flags, ImVec2(0, avail.y),
                         std::max(avail.x - ImGui::GetStyle().ScrollbarSize, px(780))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("op", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("ranks");
  ImGui::TableSetupColumn("size");
  ImGui::TableSetupColumn("count");
  ImGui::TableSetupColumn("total",
                          ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("mean");
  ImGui::TableSetupColumn("algbw GB/s");
  ImGui::TableSetupColumn("busbw GB/s");
  ImGui::TableSetupColumn("predicted busbw");
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
      specs && specs->SpecsDirty && specs->SpecsCount > 0) {
    const auto& spec = specs->Specs[0];
    const bool asc = spec.SortDirection == ImGuiSortDirection_Ascending;
    auto key = [&](const measure::CollectiveStats& s) -> double {
      switch (spec.ColumnIndex) {
        case 1:
          return static_cast<double>(s.group_size);
        case 2:
          return static_cast<double>(s.bytes);
        case 3:
          return static_cast<double>(s.count);
        case 5:
          return static_cast<double>(s.mean_ns);
        case 6:
          return std::isfinite(s.algbw_gbps) ? s.algbw_gbps : -1.0;
        case 7:
          return std::isfinite(s.busbw_gbps) ? s.busbw_gbps : -1.0;
        default:
          return static_cast<double>(s.total_ns);
      }
    };
    std::stable_sort(collective_order_.begin(), collective_order_.end(),
                     [&](std::uint32_t a, std::uint32_t b) {
                       const auto& sa = report.stats[a];
                       const auto& sb = report.stats[b];
                       if (spec.ColumnIndex == 0) return asc ? sa.op < sb.op : sa.op > sb.op;
                       return asc ? key(sa) < key(sb) : key(sa) > key(sb);
                     });
    specs->SpecsDirty = false;
  }
  char t[32];
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(collective_order_.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& s = report.stats[collective_order_[static_cast<std::size_t>(i)]];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      text_ellipsis(s.from_metadata ? s.op : s.op + " (by kernel name: no sizes)");
      ImGui::TableNextColumn();
      if (s.group_size > 0)
        ImGui::Text("%lld", static_cast<long long>(s.group_size));
      else
        ImGui::TextDisabled("?");
      ImGui::TableNextColumn();
      if (s.bytes > 0)
        ImGui::TextUnformatted(bytes_text(t, sizeof t, static_cast<double>(s.bytes)));
      else
        ImGui::TextDisabled("?");
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.count));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(s.total_ns)));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(s.mean_ns)));
      ImGui::TableNextColumn();
      if (std::isfinite(s.algbw_gbps))
        ImGui::Text("%.3g", s.algbw_gbps);
      else
        ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      if (std::isfinite(s.busbw_gbps))
        ImGui::Text("%.3g", s.busbw_gbps);
      else
        ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      const double predicted = predicted_busbw(explorer, s.op, s.group_size, s.bytes);
      if (std::isfinite(predicted)) {
        const bool low = std::isfinite(s.busbw_gbps) && s.busbw_gbps < 0.5 * predicted;
        ImGui::TextColored(to_vec4(low ? kColExposed : kColText), "%.3g", predicted);
        if (ImGui::IsItemHovered()) {
          ImGui::SetTooltip("alpha-beta model on %s (%d GPUs per %s domain)%s",
                            explorer.hardware->name.c_str(), explorer.hardware->gpus_per_node,
                            explorer.hardware->intra_node_link.c_str(),
                            low ? "\nmeasured is under half of predicted" : "");
        }
      } else {
        ImGui::TextDisabled("-");
      }
    }
  }
  ImGui::EndTable();
}

// [SECTION] Baseline comparison
// ------------------------------------------------------------------------------------------

namespace {

// "+1.2 ms" / "-340 µs" / "0"
const char* delta_text(char* buf, std::size_t size, TimeNs ns) {
  if (ns == 0) return std::snprintf(buf, size, "0"), buf;
  char t[32];
  duration_text(t, sizeof t, static_cast<double>(ns < 0 ? -ns : ns));
  std::snprintf(buf, size, "%s%s", ns < 0 ? "-" : "+", t);
  return buf;
}

// A delta coloured by its sign: more time (B slower) red, less green.
void delta_cell(TimeNs ns) {
  char t[40];
  delta_text(t, sizeof t, ns);
  if (ns > 0)
    ImGui::TextColored(to_vec4(kColExposed), "%s", t);
  else if (ns < 0)
    ImGui::TextColored(to_vec4(kColMemory), "%s", t);
  else
    ImGui::TextDisabled("%s", t);
}

void time_cell(TimeNs ns) {
  char t[32];
  ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(ns)));
}

// The rows of a kernel or collective diff table (whole profile and per rank-step), clipped.
void diff_rows_table(const char* id, const std::vector<measure::DiffRow>& rows, bool kernels, float height) {
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Resizable;
  const float avail = ImGui::GetContentRegionAvail().x;
  if (!ImGui::BeginTable(id, 8, flags, ImVec2(0, height), std::max(avail, px(640)))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn(kernels ? "kernel (normalised name)" : "collective",
                          ImGuiTableColumnFlags_WidthStretch);
  for (const char* c : {"count A", "count B", "A", "B", "delta", "A / step", "B / step"})
    ImGui::TableSetupColumn(c);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& row = rows[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      text_ellipsis(short_name(row.name));
      if (ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s\nA: %s (%d names)\nB: %s (%d names)", row.name.c_str(),
                          row.a_example.empty() ? "absent" : row.a_example.c_str(), row.a_variants,
                          row.b_example.empty() ? "absent" : row.b_example.c_str(), row.b_variants);
      }
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(row.a_count));
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(row.b_count));
      ImGui::TableNextColumn();
      time_cell(row.a_ns);
      ImGui::TableNextColumn();
      time_cell(row.b_ns);
      ImGui::TableNextColumn();
      delta_cell(row.delta_ns());
      ImGui::TableNextColumn();
      time_cell(row.a_step_ns);
      ImGui::TableNextColumn();
      time_cell(row.b_step_ns);
    }
  }
  ImGui::EndTable();
}

}  // namespace

// Both runs side by side: the diff's headline, the step and every class per rank-step (means over each
// profile's rank-steps, so runs of different lengths compare), and the kernels and collectives that changed
// most over the whole profile. Everything shown is measure::diff_summaries' (A = the baseline, B = this run).
void SummaryPanel::draw_baseline(const Baseline& baseline) {
  if (!baseline.loaded && !baseline.busy && baseline.error.empty()) return;
  const measure::Diff* diff = baseline.diff;
  if (!ImGui::CollapsingHeader("COMPARED WITH THE BASELINE", ImGuiTreeNodeFlags_DefaultOpen)) return;
  if (!baseline.error.empty()) ImGui::TextColored(to_vec4(kColExposed), "%s", baseline.error.c_str());
  if (!diff) {
    if (baseline.busy) ImGui::TextDisabled("loading and comparing the baseline...");
    return;
  }
  char a[32], b[32];
  ImGui::TextDisabled("A = baseline %s (%lld ranks, %lld steps)   B = this run %s (%lld ranks, %lld steps)",
                      baseline.loaded->source.filename().c_str(), static_cast<long long>(diff->a.ranks),
                      static_cast<long long>(diff->a.steps), loaded_->source.filename().c_str(),
                      static_cast<long long>(diff->b.ranks), static_cast<long long>(diff->b.steps));
  for (const auto& item : diff->headline) {
    const ImU32 color = item.kind == "unrelated" ? kColExposed
                        : item.delta_ns > 0      ? kColExposed
                        : item.delta_ns < 0      ? kColMemory
                                                 : kColText;
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + px(14) * static_cast<float>(item.level));
    ImGui::PushStyleColor(ImGuiCol_Text, to_vec4(item.level == 0 ? kColText : color));
    text_ellipsis(item.text);
    ImGui::PopStyleColor();
  }
  for (const auto& note : diff->notes) text_wrapped_disabled("note: " + note);
  // Tall enough for every class row (the tables scroll only when the window is short).
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const float table_h = std::max(px(170), (static_cast<float>(diff->classes.size()) + 3.0f) * row_h + px(10));
  if (ImGui::BeginTable("##baseline", 2, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerV,
                        ImVec2(0, table_h))) {
    ImGui::TableSetupColumn("classes", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("rows", ImGuiTableColumnFlags_WidthStretch, 2.2f);
    ImGui::TableNextColumn();
    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
    if (ImGui::BeginTable("##bl_classes", 4, flags, ImVec2(0, table_h - px(4)))) {
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableSetupColumn("per step", ImGuiTableColumnFlags_WidthStretch);
      for (const char* c : {"A", "B", "delta"}) ImGui::TableSetupColumn(c);
      ImGui::TableHeadersRow();
      auto row = [&](const char* name, TimeNs va, TimeNs vb) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(name);
        ImGui::TableNextColumn();
        time_cell(va);
        ImGui::TableNextColumn();
        time_cell(vb);
        ImGui::TableNextColumn();
        delta_cell(vb - va);
      };
      row("step (GPU span)", diff->a.step_ns, diff->b.step_ns);
      row("step (CPU)", diff->a.cpu_step_ns, diff->b.cpu_step_ns);
      for (const auto& c : diff->classes) {
        if (c.name == "step") continue;  // the GPU span, shown first
        row(c.name.c_str(), c.a_step_ns, c.b_step_ns);
      }
      ImGui::EndTable();
    }
    ImGui::TableNextColumn();
    // Inside a table cell the region below reaches the window's bottom: the tables get the cell's height.
    const float rows_h = table_h - ImGui::GetFrameHeightWithSpacing() - px(4);
    if (ImGui::BeginTabBar("##bl_tabs")) {
      std::snprintf(a, sizeof a, "kernels (%zu)###blk", diff->kernels.size());
      if (ImGui::BeginTabItem(a)) {
        diff_rows_table("##bl_kernels", diff->kernels, true, rows_h);
        ImGui::EndTabItem();
      }
      std::snprintf(b, sizeof b, "collectives (%zu)###blc", diff->collectives.size());
      if (ImGui::BeginTabItem(b)) {
        diff_rows_table("##bl_collectives", diff->collectives, false, rows_h);
        ImGui::EndTabItem();
      }
      ImGui::EndTabBar();
    }
    ImGui::EndTable();
  }
  ImGui::Spacing();
}

// The bus bandwidth the α-β collective model predicts for OP over GROUP ranks moving BYTES on the
// Explorer's hardware (hierarchical over its scale-up domains); NaN when there is no prediction (no model
// yet, a group of one, no bytes, an operation the model does not know).
double SummaryPanel::predicted_busbw(const FromExplorer& explorer, const std::string& op, std::int64_t group,
                                     std::int64_t bytes) {
  model::Collective kind{};
  if (!explorer.ready || group < 2 || bytes <= 0 || !compare::collective_of(op, kind)) return std::nan("");
  const int n = static_cast<int>(group);
  const auto shape = model::group_shape(n, 1, explorer.hardware->gpus_per_node);
  const double t = model::hierarchical_time(kind, static_cast<double>(bytes), shape,
                                            model::intra_node_link(*explorer.efficiencies),
                                            model::inter_node_link(*explorer.efficiencies));
  if (!(t > 0)) return std::nan("");
  return static_cast<double>(bytes) / t / 1e9 * model::busbw_factor(kind, n);
}

void SummaryPanel::dump_state(JsonWriter& j) const {
  j.key("summary").begin_object();
  j.field("rank_index", rank_);
  j.key("steps").begin_array();
  for (const auto& row : step_rects_) {
    j.begin_object().field("number", row.number);
    j.field("x0", static_cast<double>(row.rect[0])).field("y0", static_cast<double>(row.rect[1]));
    j.field("x1", static_cast<double>(row.rect[2])).field("y1", static_cast<double>(row.rect[3]));
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace meshscope::gui
