// timeline_critical_path.cpp: the critical path on the timeline and in the step's details. The paths are
// measure::critical_paths() of every rank and step, computed once when the profile is loaded
// (LoadedProfile::critical); a frame only looks up the segments in view and draws them.
//
// The overlay draws, for the selected step (or the step around the selected event on its rank; with nothing
// selected, every visible step of the open ranks), each segment on the row of the event it refers to: work
// (CPU, CUDA calls, kernels, copies, communication) as a filled band over the part on the path, with kernels,
// copies and CUDA calls outlined whole; waits (launch delay, queueing, stream and collective waits,
// synchronisation) as a line; and where the path moves from one row to another a vertical link. The events
// whose segments it drew (CPU ranges, CUDA calls, GPU activities on screen) are kept for tests in
// TimelineState::critical_events.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "app/gui/gui_util.hpp"
#include "app/gui/timeline_details.hpp"
#include "app/gui/timeline_panel.hpp"

namespace meshscope::gui {

namespace {

constexpr std::size_t kMaxSegmentsDrawn = 20000;

bool is_work(measure::PathKind kind) {
  switch (kind) {
    case measure::PathKind::kCpu:
    case measure::PathKind::kRuntime:
    case measure::PathKind::kCompute:
    case measure::PathKind::kComm:
    case measure::PathKind::kMemory:
      return true;
    default:
      return false;
  }
}

EventRef event_of(const measure::PathSegment& s, std::int32_t rank_index) {
  switch (s.ref) {
    case measure::PathSegment::Ref::kActivity:
      return {EventKind::kActivity, rank_index, s.index};
    case measure::PathSegment::Ref::kApiCall:
      return {EventKind::kApiCall, rank_index, s.index};
    case measure::PathSegment::Ref::kRange:
      return {EventKind::kRange, rank_index, s.index};
    case measure::PathSegment::Ref::kNone:
      break;
  }
  return {};
}

// The path of step NUMBER of PATHS (nullptr when it has none).
const measure::StepPath* find_step(const measure::RankPaths& paths, std::int64_t number) {
  for (const auto& s : paths.steps) {
    if (s.step == number) return &s;
  }
  return nullptr;
}

}  // namespace

void TimelinePanel::timeline_critical_path(TimelineContext& ctx) {
  tl_.critical_events.clear();
  tl_.critical_rank = -1;
  const auto& paths = loaded()->critical;
  // The step whose path is drawn: the selected one, or the one around the selected event.
  const measure::StepPath* only = nullptr;
  if (tl_.selected.valid()) {
    const auto r = static_cast<std::size_t>(tl_.selected.rank_index);
    if (r < paths.ranks.size()) {
      const Rank& rank = ctx.profile->ranks()[r];
      if (tl_.selected.kind == EventKind::kStep) {
        only = find_step(paths.ranks[r], rank.steps[tl_.selected.index].number);
      } else {
        const TimeNs t = span_of(*ctx.profile, tl_.selected).start_ns;
        for (const auto& s : paths.ranks[r].steps) {
          if (t >= s.start_ns && t < s.end_ns) only = &s;
        }
      }
      if (only) {
        tl_.critical_rank = static_cast<std::int32_t>(r);
        tl_.critical_step = only->step;
      }
    }
  }
  ImDrawList* dl = ctx.dl;
  const float ui = ctx.ui;
  std::size_t drawn = 0;  // primitives, not segments: a zoomed-out path merges thousands into a few
  // Segments on one row that touch within a pixel are drawn as one band (work) or one line (waits): at full
  // zoom a step's path of thousands of segments costs what its pixels do, and every step's path fits the
  // budget.
  struct Pending {
    bool active = false, work = false;
    float xa = 0, xb = 0, y0 = 0, y1 = 0;
  } pending;
  auto flush = [&] {
    if (!pending.active) return;
    const float ym = (pending.y0 + pending.y1) * 0.5f;
    if (pending.work)
      dl->AddRectFilled(ImVec2(pending.xa, pending.y0 + 1), ImVec2(pending.xb, pending.y1 - 1),
                        IM_COL32(255, 80, 190, 70));
    else
      dl->AddLine(ImVec2(pending.xa, ym), ImVec2(pending.xb, ym), kColCritical, 2.0f * ui);
    pending.active = false;
    ++drawn;
  };
  auto draw_path = [&](const measure::StepPath& path, std::int32_t r) {
    bool have_prev = false;
    float prev_y = 0;
    EventRef outlined;
    // The segments tile the step's window in time order: only those in view are visited.
    const auto first = std::partition_point(path.segments.begin(), path.segments.end(),
                                            [&](const measure::PathSegment& s) { return s.end_ns < ctx.t0; });
    for (auto it = first; it != path.segments.end() && it->start_ns <= ctx.t1; ++it) {
      const measure::PathSegment& seg = *it;
      const EventRef e = event_of(seg, r);
      if (!e.valid()) {
        have_prev = false;
        continue;
      }
      ImVec2 a, b;
      if (!timeline_event_rect(ctx, e, a, b)) {
        have_prev = false;
        continue;
      }
      if (tl_.critical_events.empty() || !(tl_.critical_events.back() == e)) tl_.critical_events.push_back(e);
      const float xa = std::clamp(ctx.x_of(seg.start_ns), ctx.x0 - 2, ctx.x1 + 2);
      const float xb = std::max(xa + 1.0f, std::clamp(ctx.x_of(seg.end_ns), ctx.x0 - 2, ctx.x1 + 2));
      const float ym = (a.y + b.y) * 0.5f;
      const bool work = is_work(seg.kind);
      const bool same_row = pending.active && std::abs((pending.y0 + pending.y1) * 0.5f - ym) <= 1.0f;
      if (same_row && pending.work == work && xa <= pending.xb + 1.0f) {
        pending.xb = std::max(pending.xb, xb);
      } else {
        flush();
        if (drawn > kMaxSegmentsDrawn) return;
        if (have_prev && std::abs(prev_y - ym) > 1.0f) {
          dl->AddLine(ImVec2(xa, prev_y), ImVec2(xa, ym), kColCritical);
          ++drawn;
        }
        pending = {true, work, xa, xb, a.y, b.y};
      }
      // Kernels, copies and CUDA calls are outlined whole when they are wide enough to see; a CPU range (an
      // operator, a step) can be much longer than its part on the path, and its row may be the closed CPU
      // section standing in for it.
      if (work && e.kind != EventKind::kRange && !(e == outlined) && b.x - a.x >= 3.0f) {
        dl->AddRect(ImVec2(a.x - 1, a.y), ImVec2(b.x + 1, b.y), kColCritical, 0, 0, 2.0f * ui);
        outlined = e;
        ++drawn;
      }
      have_prev = true;
      prev_y = ym;
    }
    flush();
  };
  if (only) {
    draw_path(*only, tl_.critical_rank);
    return;
  }
  for (const auto& rp : paths.ranks) {
    if (!tl_.rank_open[rp.rank_index]) continue;
    for (const auto& path : rp.steps) {
      if (path.end_ns < ctx.t0 || path.start_ns > ctx.t1) continue;
      draw_path(path, static_cast<std::int32_t>(rp.rank_index));
      if (drawn > kMaxSegmentsDrawn) return;
    }
  }
}

void BaselineItem::draw_critical_path(TimelineContext& ctx, float y) const {
  if (base_rank_ >= base_->critical.ranks.size()) return;
  const Rank& rank = base_->profile->ranks()[base_rank_];
  const GpuStream& stream = rank.streams[stream_];
  const LaneLayout& layout = base_->ranks[base_rank_]->streams[stream_];
  const float h = ctx.lane_h();
  // The lane an activity of this stream is drawn on (lanes hold their members in start order).
  const auto lane_of = [&](std::uint32_t local) -> std::uint32_t {
    for (std::uint32_t lane = 0; lane < layout.members.size(); ++lane) {
      const auto& m = layout.members[lane];
      if (std::binary_search(m.begin(), m.end(), local)) return lane;
    }
    return 0;
  };
  // With a step selected, the measured overlay shows that step's path alone: these rows show the same step's
  // (the overlay's rank and step of the last frame), under that rank only.
  const bool one_step = ctx.tl->critical_rank >= 0;
  if (one_step && ctx.tl->critical_rank != rank_index()) return;
  std::size_t drawn = 0;
  std::uint32_t outlined = kNoRow;
  for (const measure::StepPath& path : base_->critical.ranks[base_rank_].steps) {
    if (one_step && path.step != ctx.tl->critical_step) continue;
    if (path.end_ns < ctx.t0 || path.start_ns > ctx.t1) continue;
    const auto first = std::partition_point(path.segments.begin(), path.segments.end(),
                                            [&](const measure::PathSegment& s) { return s.end_ns < ctx.t0; });
    for (auto it = first; it != path.segments.end() && it->start_ns <= ctx.t1; ++it) {
      if (it->ref != measure::PathSegment::Ref::kActivity || it->index < stream.first ||
          it->index >= stream.first + stream.count)
        continue;
      if (++drawn > kMaxSegmentsDrawn) return;
      const std::uint32_t local = it->index - stream.first;
      const float ly = y + static_cast<float>(lane_of(local)) * h;
      if (!ctx.row_visible(ly, h)) continue;
      const float xa = std::clamp(ctx.x_of(it->start_ns), ctx.x0 - 2, ctx.x1 + 2);
      const float xb = std::max(xa + 1.0f, std::clamp(ctx.x_of(it->end_ns), ctx.x0 - 2, ctx.x1 + 2));
      if (!is_work(it->kind)) {
        ctx.dl->AddLine(ImVec2(xa, ly + h * 0.5f), ImVec2(xb, ly + h * 0.5f), kColCritical, 2.0f * ctx.ui);
        continue;
      }
      ctx.dl->AddRectFilled(ImVec2(xa, ly + 1), ImVec2(xb, ly + h - 1), IM_COL32(255, 80, 190, 70));
      if (it->index == outlined) continue;
      outlined = it->index;
      ctx.tl->critical_baseline.emplace_back(static_cast<std::int32_t>(base_rank_), it->index);
      const Activity& a = rank.activities[it->index];
      const float ax = ctx.x_of(a.start_ns), bx = ctx.x_of(a.end_ns);
      if (bx - ax >= 3.0f)
        ctx.dl->AddRect(ImVec2(ax - 1, ly), ImVec2(bx + 1, ly + h), kColCritical, 0, 0, 2.0f * ctx.ui);
    }
  }
}

// The selected step's critical path: its length split by kind, and the names that took the most of it.
void TimelineDetails::details_critical_path(std::size_t rank_index, std::int64_t step) {
  const auto& paths = loaded()->critical;
  if (rank_index >= paths.ranks.size()) return;
  const auto& rp = paths.ranks[rank_index];
  const measure::StepPath* path = find_step(rp, step);
  ImGui::Spacing();
  char t[32], t2[32];
  if (!path) {
    ImGui::TextDisabled("CRITICAL PATH: none for this step (it launched no GPU work)");
    return;
  }
  const double length = static_cast<double>(path->length_ns());
  ImGui::TextDisabled("CRITICAL PATH %s (%lld segments%s)", duration_text(t, sizeof t, length),
                      static_cast<long long>(path->segment_count),
                      rp.per_stream ? "; no launch links: GPU streams only" : "");
  if (!ImGui::BeginTable("##critical", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) return;
  ImGui::TableSetupColumn("kind", ImGuiTableColumnFlags_WidthFixed, px(110));
  ImGui::TableSetupColumn("time", ImGuiTableColumnFlags_WidthFixed, px(90));
  ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_WidthStretch);
  for (int k = 0; k < measure::kPathKindCount; ++k) {
    const TimeNs ns = path->by_kind[static_cast<std::size_t>(k)];
    if (ns <= 0) continue;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", measure::to_string(static_cast<measure::PathKind>(k)));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(duration_text(t, sizeof t, static_cast<double>(ns)));
    ImGui::TableNextColumn();
    ImGui::Text("%.1f %%", length > 0 ? 100.0 * static_cast<double>(ns) / length : 0.0);
  }
  ImGui::EndTable();
  if (path->top.empty()) return;
  ImGui::TextDisabled("TOP CONTRIBUTORS");
  const Profile& profile = *loaded()->profile;
  for (const auto& c : path->top) {
    std::snprintf(t2, sizeof t2, "%s", measure::to_string(c.kind));
    std::string name = c.name != kNoString ? std::string(short_name(profile.str(c.name))) : std::string("-");
    if (c.peer_rank >= 0) name += " (waiting for rank " + std::to_string(c.peer_rank) + ")";
    ImGui::Text("%9s  %-13s", duration_text(t, sizeof t, static_cast<double>(c.ns)), t2);
    ImGui::SameLine();
    text_ellipsis(name);
  }
}

}  // namespace meshscope::gui
