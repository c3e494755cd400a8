// timeline_items.cpp: preprocess and draw of each timeline row kind (tooltips: timeline_tooltips.cpp).
//
// [SECTION] Shared helpers (lane drawing)
// [SECTION] Rank header
// [SECTION] Steps
// [SECTION] GPU stream
// [SECTION] CPU track and CPU section
// [SECTION] Building the items of a profile
#include "app/gui/timeline_items.hpp"

#include <algorithm>
#include <cstdio>

#include "app/gui/View.hpp"
#include "app/gui/gui_util.hpp"

namespace meshscope::gui {

// [SECTION] Shared helpers
// ---------------------------------------------------------------------------------------

void clipped_text(ImDrawList* dl, float x0, float x1, float y, ImU32 color, std::string_view text) {
  if (x1 - x0 < 12.0f || text.empty()) return;
  const std::size_t fit = static_cast<std::size_t>((x1 - x0) / 5.0f) + 1;
  if (text.size() > fit) text = text.substr(0, fit);
  const ImVec4 clip(x0, y - 2, x1, y + 40);
  dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(x0, y), color, text.data(),
              text.data() + text.size(), 0.0f, &clip);
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

bool TimelineContext::name_matches(StringId id) const {
  return filtering && id < tl->name_match.size() && tl->name_match[id] == 1;
}

bool TimelineItem::visible(const TimelineState& tl) const {
  return tl.rank_open[static_cast<std::size_t>(rank_index_)] != 0;
}

namespace {

// Screen extent of one draw item, at least one pixel wide, clipped a little outside the time area.
struct ItemRect {
  float x0, x1;
};
ItemRect item_rect(const TimelineContext& ctx, const DrawItem& item) {
  const float x0 = std::max(ctx.x_of(item.start_ns), ctx.x0 - 2.0f);
  float x1 = std::min(ctx.x_of(item.end_ns), ctx.x1 + 2.0f);
  if (x1 - x0 < 1.0f) x1 = x0 + 1.0f;
  return {x0, x1};
}

// Draws the draw items ITEMS of one lane of EVENTS at row Y..Y+H: a fill per event (darker with a count
// for folds), the event's name where it fits, and the hover outline. FILL(event, index) gives the colour,
// NAME(event) the label, MARK(event, item, x0, x1) draws any outline over it. Returns the hovered item
// (or nullptr).
template <class Event, class Fill, class Name, class Mark>
const DrawItem* draw_lane(TimelineContext& ctx, std::span<const Event> events,
                          const std::vector<DrawItem>& items, float y, float h, Fill fill, Name name,
                          Mark mark) {
  ImDrawList* dl = ctx.dl;
  const bool row_hovered = ctx.hovered && ctx.mouse.y >= y && ctx.mouse.y < y + h && ctx.mouse.x >= ctx.x0;
  const DrawItem* hovered = nullptr;
  char buf[32];
  ctx.tl->frame_items += items.size();
  for (const DrawItem& item : items) {
    ctx.tl->frame_events += item.count;
    const Event& e = events[item.index];
    const auto [x0, x1] = item_rect(ctx, item);
    const ImU32 color = fill(e, item.index);
    const float text_y = y + (h - ImGui::GetFontSize()) * 0.5f;
    if (item.count > 1) {
      dl->AddRectFilled(ImVec2(x0, y + 1), ImVec2(x1, y + h - 1), scale_color(color, 0.55f));
      if (x1 - x0 > 28.0f) {
        std::snprintf(buf, sizeof buf, "%u", item.count);
        clipped_text(dl, x0 + 3, x1 - 2, text_y, kColTextDim, buf);
      }
    } else {
      dl->AddRectFilled(ImVec2(x0, y + 1), ImVec2(x1, y + h - 1), color);
      if (x1 - x0 > 24.0f)
        clipped_text(dl, x0 + 3, x1 - 2, text_y, IM_COL32(12, 14, 18, 255), short_name(name(e)));
    }
    mark(e, item, x0, x1);
    if (row_hovered && ctx.mouse.x >= x0 - 1 && ctx.mouse.x < x1 + 1) {
      dl->AddRect(ImVec2(x0, y + 1), ImVec2(x1, y + h - 1), kColText);
      hovered = &item;
    }
  }
  return hovered;
}

// Records HOVERED (of ITEM's lane LANE) as this frame's hover target.
void set_hover(TimelineContext& ctx, const TimelineItem* item, EventKind kind, std::uint32_t first,
               const DrawItem& hovered, std::uint32_t lane) {
  ctx.hover.kind = hovered.count > 1 ? HoverKind::kFolded : HoverKind::kEvent;
  ctx.hover.item = item;
  ctx.hover.event = {kind, item->rank_index(), first + hovered.index};
  ctx.hover.draw = hovered;
  ctx.hover.lane = lane;
}

std::span<const std::uint32_t> lane_members(const LaneLayout& layout, std::uint32_t lane) {
  if (layout.members.empty()) return {};
  return layout.members[lane];
}

}  // namespace

// [SECTION] Rank header
// ------------------------------------------------------------------------------------------

void RankHeaderItem::preprocess(TimelineContext& ctx, float) {
  band_.clear();
  const auto& result = ctx.loaded->analysis.ranks[static_cast<std::size_t>(rank_index_)];
  preprocess_intervals(result.exposed_comm, ctx.lod, band_);
}

void RankHeaderItem::draw(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const auto& total = ctx.loaded->analysis.ranks[static_cast<std::size_t>(rank_index_)].total;
  ImDrawList* dl = ctx.dl;
  const bool open = ctx.tl->rank_open[static_cast<std::size_t>(rank_index_)] != 0;
  char buf[96], tb[32], tb2[32];
  dl->AddRectFilled(ImVec2(ctx.label_x, y), ImVec2(ctx.x1, y + kHeaderHeight), IM_COL32(30, 34, 42, 255));
  dl->AddLine(ImVec2(ctx.label_x, y), ImVec2(ctx.x1, y), IM_COL32(60, 66, 80, 255));
  std::snprintf(buf, sizeof buf, "%s Rank %d", open ? "v" : ">", rank.rank);
  dl->AddText(ImVec2(ctx.label_x + 6, y + 4), kColText, buf);
  if (!rank.hostname.empty()) {
    clipped_text(dl, ctx.label_x + 84, ctx.label_x + kLabelWidth - 4, y + 4, kColTextDim, rank.hostname);
  }
  std::snprintf(buf, sizeof buf, "exposed comm %s of %s",
                time_text(tb, sizeof tb, static_cast<double>(total.exposed_comm_ns)),
                time_text(tb2, sizeof tb2, static_cast<double>(total.span_ns)));
  const ImVec2 ts = ImGui::CalcTextSize(buf);
  dl->AddText(ImVec2(std::max(ctx.x0 + 4, ctx.x1 - ts.x - 8), y + 3), kColTextDim, buf);
  // Exposed communication band (every interval, folded to pixels, none skipped).
  const float by0 = y + kHeaderHeight - kBandHeight - 1, by1 = y + kHeaderHeight - 1;
  bool band_hover = false;
  for (const DrawItem& item : band_) {
    const float x0 = std::max(ctx.x_of(item.start_ns), ctx.x0 - 1);
    const float x1 = std::max(x0 + 1.0f, std::min(ctx.x_of(item.end_ns), ctx.x1 + 1));
    dl->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), kColExposed);
    if (ctx.hovered && ctx.mouse.y >= by0 - 2 && ctx.mouse.y < by1 + 2 && ctx.mouse.x >= x0 - 1 &&
        ctx.mouse.x < x1 + 1) {
      band_hover = true;
      ctx.hover = {HoverKind::kBand, this, {}, item, 0};
    }
  }
  if (!band_hover && ctx.hovered && ctx.mouse.y >= y && ctx.mouse.y < y + kHeaderHeight &&
      ctx.mouse.x < ctx.x0) {
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
    if (ctx.click) ctx.tl->rank_open[static_cast<std::size_t>(rank_index_)] = open ? 0 : 1;
  }
}

void RankHeaderItem::draw_step_lines(TimelineContext& ctx, float group_top, float group_bottom) const {
  if (group_bottom < ctx.win_top || group_top > ctx.win_bottom) return;
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  for (const Step& s : rank.steps) {
    for (TimeNs t : {s.start_ns, s.end_ns}) {
      if (t < ctx.t0 || t > ctx.t1) continue;
      const float x = ctx.x_of(t);
      ctx.dl->AddLine(ImVec2(x, group_top + kHeaderHeight), ImVec2(x, group_bottom),
                      IM_COL32(220, 220, 240, 70));
    }
  }
}

// [SECTION] Steps
// -------------------------------------------------------------------------------------------------

void StepsItem::preprocess(TimelineContext& ctx, float) {
  items_.clear();
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  preprocess_lane(std::span<const Step>(rank.steps), {}, ctx.lod, items_);
}

void StepsItem::draw(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  char buf[48];
  const DrawItem* hovered = draw_lane(
      ctx, std::span<const Step>(rank.steps), items_, y, kLaneHeight,
      [](const Step&, std::uint32_t) { return IM_COL32(64, 68, 84, 255); },
      [&](const Step& s) -> std::string_view {
        std::snprintf(buf, sizeof buf, "Step %lld", static_cast<long long>(s.number));
        return buf;
      },
      [](const Step&, const DrawItem&, float, float) {});
  if (hovered) set_hover(ctx, this, EventKind::kStep, 0, *hovered, 0);
  ctx.dl->AddText(ImVec2(ctx.label_x + 18, y + 1), kColTextDim, "steps");
}

// [SECTION] GPU stream
// --------------------------------------------------------------------------------------------

float GpuStreamItem::height(const TimelineContext& ctx) const {
  const auto& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)].streams[stream_];
  return static_cast<float>(layout.lanes()) * kLaneHeight;
}

void GpuStreamItem::preprocess(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const LaneLayout& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)].streams[stream_];
  const auto events = rank.stream_activities(stream_);
  lanes_.resize(layout.lanes());
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    lanes_[lane].clear();
    if (!ctx.row_visible(y + static_cast<float>(lane) * kLaneHeight, kLaneHeight)) continue;
    preprocess_lane(events, lane_members(layout, lane), ctx.lod, lanes_[lane]);
  }
}

void GpuStreamItem::draw(TimelineContext& ctx, float y) {
  const auto r = static_cast<std::size_t>(rank_index_);
  const Rank& rank = ctx.profile->ranks()[r];
  const GpuStream& stream = rank.streams[stream_];
  const auto& result = ctx.loaded->analysis.ranks[r];
  const auto& index = ctx.loaded->ranks[r];
  const auto events = rank.stream_activities(stream_);
  ImDrawList* dl = ctx.dl;
  for (std::uint32_t lane = 0; lane < lanes_.size(); ++lane) {
    const float ly = y + static_cast<float>(lane) * kLaneHeight;
    if (!ctx.row_visible(ly, kLaneHeight)) continue;
    const DrawItem* hovered = draw_lane(
        ctx, events, lanes_[lane], ly, kLaneHeight,
        [&](const Activity&, std::uint32_t i) { return class_color(result.classes[stream.first + i]); },
        [&](const Activity& a) -> std::string_view { return ctx.profile->str(a.name); },
        [&](const Activity& a, const DrawItem& item, float x0, float x1) {
          if (item.count == 1 && ctx.tl->selected_instance >= 0 && a.collective >= 0 &&
              index.instance_of[static_cast<std::size_t>(a.collective)] == ctx.tl->selected_instance) {
            dl->AddRect(ImVec2(x0 - 1, ly), ImVec2(x1 + 1, ly + kLaneHeight), kColSelect, 0, 0, 2.0f);
            ctx.tl->links.push_back({rank.rank, (x0 + x1) * 0.5f, ly + kLaneHeight * 0.5f});
          }
          if (ctx.filtering && ctx.name_matches(a.name)) {
            const auto* cur = ctx.current;
            const bool is_current = cur && cur->rank_index == rank_index_ &&
                                    cur->stream == static_cast<std::int32_t>(stream_) &&
                                    cur->index >= item.index && cur->index < item.index + item.count;
            dl->AddRect(ImVec2(x0 - 1, ly), ImVec2(x1 + 1, ly + kLaneHeight),
                        is_current ? kColSelect : kColText, 0, 0, is_current ? 2.5f : 1.0f);
          }
        });
    if (hovered) set_hover(ctx, this, EventKind::kActivity, stream.first, *hovered, lane);
  }
  const std::uint32_t lanes = static_cast<std::uint32_t>(lanes_.size());
  if (ctx.row_visible(y, kLaneHeight)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "GPU%d %s%s", stream.device, stream.name.c_str(), lanes > 1 ? " *" : "");
    clipped_text(dl, ctx.label_x + 18, ctx.label_x + kLabelWidth - 4, y + 1, kColText, buf);
  }
  const float bottom = y + static_cast<float>(lanes) * kLaneHeight;
  if (ctx.hovered && ctx.mouse.x < ctx.x0 && ctx.mouse.y >= y && ctx.mouse.y < bottom) {
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
  }
}

// [SECTION] CPU track and CPU section
// --------------------------------------------------------------------------------

bool CpuTrackItem::visible(const TimelineState& tl) const {
  const auto r = static_cast<std::size_t>(rank_index_);
  return tl.rank_open[r] != 0 && (gpu_ || tl.cpu_open[r] != 0);
}

float CpuTrackItem::height(const TimelineContext& ctx) const {
  const auto& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)].tracks[track_];
  return static_cast<float>(layout.lanes()) * kCpuLaneHeight;
}

void CpuTrackItem::preprocess(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const LaneLayout& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)].tracks[track_];
  const auto events = rank.track_ranges(track_);
  lanes_.resize(layout.lanes());
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    lanes_[lane].clear();
    if (!ctx.row_visible(y + static_cast<float>(lane) * kCpuLaneHeight, kCpuLaneHeight)) continue;
    preprocess_lane(events, lane_members(layout, lane), ctx.lod, lanes_[lane]);
  }
}

namespace {

ImU32 range_color(const CpuRange& c) {
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
}

}  // namespace

void CpuTrackItem::draw(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const CpuTrack& track = rank.tracks[track_];
  const auto events = rank.track_ranges(track_);
  ImDrawList* dl = ctx.dl;
  for (std::uint32_t lane = 0; lane < lanes_.size(); ++lane) {
    const float ly = y + static_cast<float>(lane) * kCpuLaneHeight;
    if (!ctx.row_visible(ly, kCpuLaneHeight)) continue;
    const DrawItem* hovered = draw_lane(
        ctx, events, lanes_[lane], ly, kCpuLaneHeight,
        [](const CpuRange& c, std::uint32_t) { return range_color(c); },
        [&](const CpuRange& c) -> std::string_view { return ctx.profile->str(c.name); },
        [&](const CpuRange& c, const DrawItem&, float x0, float x1) {
          if (ctx.filtering && ctx.name_matches(c.name)) {
            dl->AddRect(ImVec2(x0 - 1, ly), ImVec2(x1 + 1, ly + kCpuLaneHeight), kColText);
          }
        });
    if (hovered) set_hover(ctx, this, EventKind::kRange, track.first, *hovered, lane);
  }
  if (ctx.row_visible(y, kCpuLaneHeight)) {
    clipped_text(dl, ctx.label_x + 30, ctx.label_x + kLabelWidth - 4, y, kColTextDim, track.name);
  }
}

void CpuSectionItem::draw(TimelineContext& ctx, float y) {
  const auto r = static_cast<std::size_t>(rank_index_);
  const bool open = ctx.tl->cpu_open[r] != 0;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s CPU threads (%zu, %lld ranges)", open ? "v" : ">", threads_,
                static_cast<long long>(ctx.loaded->ranks[r].cpu_ranges));
  clipped_text(ctx.dl, ctx.label_x + 18, ctx.label_x + kLabelWidth + 200, y + 1, kColTextDim, buf);
  if (ctx.hovered && ctx.mouse.y >= y && ctx.mouse.y < y + kLaneHeight && ctx.mouse.x < ctx.x0 + 200 &&
      ctx.click) {
    ctx.tl->cpu_open[r] = open ? 0 : 1;
  }
}

// [SECTION] Building the items of a profile
// ---------------------------------------------------------------------------

std::vector<std::unique_ptr<TimelineItem>> build_timeline_items(const LoadedProfile& loaded) {
  std::vector<std::unique_ptr<TimelineItem>> items;
  const auto& ranks = loaded.profile->ranks();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Rank& rank = ranks[r];
    const auto ri = static_cast<std::int32_t>(r);
    items.push_back(std::make_unique<RankHeaderItem>(ri));
    if (!rank.steps.empty()) items.push_back(std::make_unique<StepsItem>(ri));
    for (std::size_t s = 0; s < rank.streams.size(); ++s) {
      items.push_back(std::make_unique<GpuStreamItem>(ri, static_cast<std::uint32_t>(s)));
    }
    std::size_t threads = 0;
    for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
      if (rank.tracks[k].gpu)
        items.push_back(std::make_unique<CpuTrackItem>(ri, static_cast<std::uint32_t>(k), true));
      else
        ++threads;
    }
    if (threads == 0) continue;
    items.push_back(std::make_unique<CpuSectionItem>(ri, threads));
    for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
      if (!rank.tracks[k].gpu)
        items.push_back(std::make_unique<CpuTrackItem>(ri, static_cast<std::uint32_t>(k), false));
    }
  }
  return items;
}

}  // namespace meshscope::gui
