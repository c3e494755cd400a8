// timeline_items.cpp: preprocess and draw of each timeline row kind (tooltips: timeline_tooltips.cpp).
//
// [SECTION] Events and context helpers
// [SECTION] Shared helpers (lane drawing, search highlights)
// [SECTION] Rank header
// [SECTION] Steps
// [SECTION] GPU stream
// [SECTION] CPU track (ranges and CUDA API calls) and CPU section
// [SECTION] OS thread state (scheduling and CPU samples)
// [SECTION] Baseline rows (another profile's steps and streams under the same rank)
// [SECTION] Building the items of a profile
#include "app/gui/timeline_items.hpp"

#include <algorithm>
#include <cfloat>
#include <cstdio>

#include <fmt/format.h>

#include "app/gui/gui_util.hpp"
#include "app/gui/loaded_profile.hpp"

namespace meshscope::gui {

// [SECTION] Events and context helpers
// ----------------------------------------------------------------------------

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kActivity:
      return "activity";
    case EventKind::kRange:
      return "range";
    case EventKind::kApiCall:
      return "api_call";
    case EventKind::kStep:
      return "step";
    case EventKind::kNone:
      break;
  }
  return "none";
}

EventSpan span_of(const Profile& profile, const EventRef& e) {
  if (!e.valid() || e.rank_index < 0 || static_cast<std::size_t>(e.rank_index) >= profile.ranks().size())
    return {};
  const Rank& rank = profile.ranks()[static_cast<std::size_t>(e.rank_index)];
  switch (e.kind) {
    case EventKind::kActivity:
      return {rank.activities[e.index].start_ns, rank.activities[e.index].end_ns};
    case EventKind::kRange:
      return {rank.ranges[e.index].start_ns, rank.ranges[e.index].end_ns};
    case EventKind::kApiCall:
      return {rank.api_calls[e.index].start_ns, rank.api_calls[e.index].end_ns};
    case EventKind::kStep:
      return {rank.steps[e.index].start_ns, rank.steps[e.index].end_ns};
    case EventKind::kNone:
      break;
  }
  return {};
}

std::string event_name(const Profile& profile, const EventRef& e) {
  if (!e.valid()) return {};
  const Rank& rank = profile.ranks()[static_cast<std::size_t>(e.rank_index)];
  switch (e.kind) {
    case EventKind::kActivity:
      return profile.str(rank.activities[e.index].name);
    case EventKind::kRange:
      return profile.str(rank.ranges[e.index].name);
    case EventKind::kApiCall:
      return profile.str(rank.api_calls[e.index].name);
    case EventKind::kStep:
      return "Step " + std::to_string(rank.steps[e.index].number);
    case EventKind::kNone:
      break;
  }
  return {};
}

float TimelineContext::label_w() const {
  return kLabelWidth * ui;
}
float TimelineContext::header_h() const {
  return kHeaderHeight * ui;
}
float TimelineContext::lane_h() const {
  return kLaneHeight * ui;
}
float TimelineContext::cpu_lane_h() const {
  return kCpuLaneHeight * ui;
}
float TimelineContext::text_y(float y, float h) const {
  return y + (h - ImGui::GetFontSize()) * 0.5f;
}

bool TimelineItem::visible(const TimelineState& tl) const {
  return tl.rank_open[static_cast<std::size_t>(rank_index_)] != 0;
}

float TimelineItem::lane_height(const TimelineContext& ctx) const {
  return ctx.lane_h();
}

// [SECTION] Shared helpers
// ---------------------------------------------------------------------------------------

void clipped_text(ImDrawList* dl, float x0, float x1, float y, ImU32 color, std::string_view text) {
  if (x1 - x0 < 12.0f || text.empty()) return;
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  const char* begin = text.data();
  const char* end = begin + text.size();
  const char* fit = end;
  font->CalcTextSizeA(size, x1 - x0, 0.0f, begin, end, &fit);
  if (fit == end) {
    dl->AddText(font, size, ImVec2(x0, y), color, begin, end);
    return;
  }
  const float dots = font->CalcTextSizeA(size, FLT_MAX, 0.0f, "...").x;
  font->CalcTextSizeA(size, std::max(0.0f, x1 - x0 - dots), 0.0f, begin, end, &fit);
  const float w = font->CalcTextSizeA(size, FLT_MAX, 0.0f, begin, fit).x;
  dl->AddText(font, size, ImVec2(x0, y), color, begin, fit);
  if (fit > begin) dl->AddText(font, size, ImVec2(x0 + w, y), color, "...");
}

namespace {

// Screen extent of one draw item, at least one pixel wide, clipped a little outside the time area.
struct ItemRect {
  float x0, x1;
};
ItemRect item_rect(const TimelineContext& ctx, TimeNs start, TimeNs end) {
  const float x0 = std::max(ctx.x_of(start), ctx.x0 - 2.0f);
  float x1 = std::min(ctx.x_of(end), ctx.x1 + 2.0f);
  if (x1 - x0 < 1.0f) x1 = x0 + 1.0f;
  return {x0, x1};
}

// Draws the draw items ITEMS of one lane of EVENTS at row Y..Y+H: a fill per event (darker with a count
// for folds), the event's name where it fits, and the hover outline. FILL(event, index) gives the colour,
// NAME(event) the label, MARK(event, item, x0, x1) draws any outline over it. Returns the hovered item
// (or nullptr).
// BUSY(item) gives the busy time of a fold's events (-1: unknown): a fold is then drawn as tall as the share
// of its span its events fill, over a faint full-height band, so that a sparse stream reads sparse at any
// zoom.
template <class Event, class Fill, class Name, class Mark, class Busy>
const DrawItem* draw_lane(TimelineContext& ctx, std::span<const Event> events,
                          const std::vector<DrawItem>& items, float y, float h, Fill fill, Name name,
                          Mark mark, Busy busy) {
  ImDrawList* dl = ctx.dl;
  const bool row_hovered = ctx.hovered && ctx.mouse.y >= y && ctx.mouse.y < y + h && ctx.mouse.x >= ctx.x0;
  const DrawItem* hovered = nullptr;
  char buf[32];
  ctx.tl->frame_items += items.size();
  const float text_y = ctx.text_y(y, h);
  for (const DrawItem& item : items) {
    ctx.tl->frame_events += item.count;
    const Event& e = events[item.index];
    const auto [x0, x1] = item_rect(ctx, item.start_ns, item.end_ns);
    const ImU32 color = fill(e, item.index);
    if (item.count > 1) {
      const TimeNs busy_ns = busy(item);
      const float share =
          busy_ns >= 0 && item.end_ns > item.start_ns
              ? std::clamp(static_cast<float>(busy_ns) / static_cast<float>(item.end_ns - item.start_ns),
                           0.0f, 1.0f)
              : 1.0f;
      // A fold busy most of its span is drawn solid, as before: one rectangle, not two.
      if (share < 0.95f) {
        const float top = std::min(y + h - 2, y + 1 + (h - 2) * (1.0f - share));
        dl->AddRectFilled(ImVec2(x0, y + 1), ImVec2(x1, y + h - 1),
                          (scale_color(color, 0.55f) & 0x00ffffffu) | (60u << 24));
        dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, y + h - 1), scale_color(color, 0.55f));
      } else {
        dl->AddRectFilled(ImVec2(x0, y + 1), ImVec2(x1, y + h - 1), scale_color(color, 0.55f));
      }
      if (x1 - x0 > 28.0f * ctx.ui) {
        std::snprintf(buf, sizeof buf, "%u", item.count);
        clipped_text(dl, x0 + 3, x1 - 2, text_y, kColTextDim, buf);
      }
    } else {
      dl->AddRectFilled(ImVec2(x0, y + 1), ImVec2(x1, y + h - 1), color);
      if (x1 - x0 > 24.0f * ctx.ui)
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

template <class Event, class Fill, class Name, class Mark>
const DrawItem* draw_lane(TimelineContext& ctx, std::span<const Event> events,
                          const std::vector<DrawItem>& items, float y, float h, Fill fill, Name name,
                          Mark mark) {
  return draw_lane(ctx, events, items, y, h, fill, name, mark, [](const DrawItem&) { return TimeNs{-1}; });
}

// Records HOVERED (of ITEM's lane LANE) as this frame's hover target. FIRST: index of the lane's event 0.
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

// The lane of LAYOUT whose members hold INDEX (members are in increasing order), or false.
bool find_lane(const LaneLayout& layout, std::uint32_t index, std::uint32_t& lane) {
  if (layout.members.empty()) {
    lane = 0;
    return true;
  }
  for (std::uint32_t l = 0; l < layout.members.size(); ++l) {
    if (std::binary_search(layout.members[l].begin(), layout.members[l].end(), index)) {
      lane = l;
      return true;
    }
  }
  return false;
}

}  // namespace

void TimelineItem::draw_matches(TimelineContext& ctx, std::uint32_t lane, float ly, float h) const {
  if (!ctx.filtering || lane >= match_lanes.size() || match_lanes[lane].empty()) return;
  ctx.scratch.clear();
  preprocess_lane(std::span<const MatchSpan>(match_lanes[lane]), {},
                  LodParams{ctx.t0, ctx.t1, ctx.ns_per_px, 1.0f}, ctx.scratch);
  for (const DrawItem& m : ctx.scratch) {
    const auto [x0, x1] = item_rect(ctx, m.start_ns, m.end_ns);
    ctx.dl->AddRect(ImVec2(x0 - 1, ly), ImVec2(x1 + 1, ly + h), kColText, 0, 0, 1.5f);
  }
}

// [SECTION] Rank header
// ------------------------------------------------------------------------------------------

std::string RankHeaderItem::label(const TimelineContext& ctx) const {
  return "Rank " + std::to_string(ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)].rank);
}

void RankHeaderItem::preprocess(TimelineContext& ctx, float) {
  band_.clear();
  const auto r = static_cast<std::size_t>(rank_index_);
  if (!ctx.loaded->rank_loaded(r)) {
    // A lazily loaded rank not read yet: its summary's overview buckets that hold exposed communication
    // (index: the bucket; count 0 marks a summary bucket).
    const RankSummary* s = ctx.loaded->rank_summary(r);
    if (!s) return;
    const Overview& o = s->overview;
    const TimeNs width = o.bucket_ns();
    for (std::size_t b = 0; b < o.buckets.size(); ++b) {
      const TimeNs start = (o.first_bucket + static_cast<std::int64_t>(b)) * width;
      if (start > ctx.t1 || start + width < ctx.t0 || o.buckets[b].exposed_comm_ns <= 0) continue;
      band_.push_back({start, start + width, static_cast<std::uint32_t>(b), 0});
    }
    return;
  }
  const auto& result = ctx.loaded->analysis().ranks[r];
  preprocess_intervals(result.exposed_comm, ctx.lod, band_);
}

void RankHeaderItem::draw(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const bool loaded = ctx.loaded->rank_loaded(static_cast<std::size_t>(rank_index_));
  const RankSummary* summary =
      loaded ? nullptr : ctx.loaded->rank_summary(static_cast<std::size_t>(rank_index_));
  const auto& total =
      summary ? summary->total : ctx.loaded->analysis().ranks[static_cast<std::size_t>(rank_index_)].total;
  ImDrawList* dl = ctx.dl;
  const float h = ctx.header_h();
  const bool open = ctx.tl->rank_open[static_cast<std::size_t>(rank_index_)] != 0;
  char buf[96], tb[32], tb2[32];
  dl->AddRectFilled(ImVec2(ctx.label_x, y), ImVec2(ctx.x1, y + h), IM_COL32(30, 34, 42, 255));
  dl->AddLine(ImVec2(ctx.label_x, y), ImVec2(ctx.x1, y), IM_COL32(60, 66, 80, 255));
  std::snprintf(buf, sizeof buf, "%s Rank %d", open ? "v" : ">", rank.rank);
  const float ty = ctx.text_y(y, h - kBandHeight * ctx.ui * 0.5f);
  dl->AddText(ImVec2(ctx.label_x + 6 * ctx.ui, ty), kColText, buf);
  if (!rank.hostname.empty()) {
    const float name_x = ctx.label_x + 12 * ctx.ui + ImGui::CalcTextSize(buf).x;
    clipped_text(dl, name_x, ctx.label_x + ctx.label_w() - 4, ty, kColTextDim, rank.hostname);
  }
  std::snprintf(buf, sizeof buf, "%sexposed comm %s of %s",
                loaded ? ""
                : open ? "loading events...  "
                       : "summary  ",
                duration_text(tb, sizeof tb, static_cast<double>(total.exposed_comm_ns)),
                duration_text(tb2, sizeof tb2, static_cast<double>(total.span_ns)));
  const ImVec2 ts = ImGui::CalcTextSize(buf);
  dl->AddText(ImVec2(std::max(ctx.x0 + 4, ctx.x1 - ts.x - 8), ty - 1), kColTextDim, buf);
  // Exposed communication band (every interval, folded to pixels, none skipped).
  const float by0 = y + h - kBandHeight * ctx.ui - 1, by1 = y + h - 1;
  if (summary) {
    // A rank not loaded: where its steps start, from its summary (a tick over the band).
    for (const StepSummary& step : summary->steps) {
      if (step.cpu_start_ns < ctx.t0 || step.cpu_start_ns > ctx.t1) continue;
      const float x = ctx.x_of(step.cpu_start_ns);
      dl->AddLine(ImVec2(x, by0 - 4 * ctx.ui), ImVec2(x, by1), IM_COL32(220, 220, 240, 110));
    }
  }
  bool band_hover = false;
  for (const DrawItem& item : band_) {
    const float x0 = std::max(ctx.x_of(item.start_ns), ctx.x0 - 1);
    const float x1 = std::max(x0 + 1.0f, std::min(ctx.x_of(item.end_ns), ctx.x1 + 1));
    ImU32 color = kColExposed;
    if (summary) {
      // A summary bucket: as opaque as the share of the bucket that was exposed communication.
      const auto& bucket = summary->overview.buckets[item.index];
      const double share = static_cast<double>(bucket.exposed_comm_ns) /
                           static_cast<double>(std::max<TimeNs>(1, summary->overview.bucket_ns()));
      color = (kColExposed & ~IM_COL32_A_MASK) |
              (static_cast<ImU32>(std::clamp(60.0 + 195.0 * share, 60.0, 255.0)) << IM_COL32_A_SHIFT);
    }
    dl->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), color);
    if (ctx.hovered && ctx.mouse.y >= by0 - 2 && ctx.mouse.y < by1 + 2 && ctx.mouse.x >= x0 - 1 &&
        ctx.mouse.x < x1 + 1) {
      band_hover = true;
      ctx.hover = {HoverKind::kBand, this, {}, item, 0};
    }
  }
  if (!band_hover && ctx.hovered && ctx.mouse.y >= y && ctx.mouse.y < y + h && ctx.mouse.x < ctx.x0) {
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
    if (ctx.click) ctx.tl->rank_open[static_cast<std::size_t>(rank_index_)] = open ? 0 : 1;
  }
}

void RankHeaderItem::draw_step_lines(TimelineContext& ctx, float group_top, float group_bottom) const {
  if (group_bottom < ctx.win_top || group_top > ctx.win_bottom) return;
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  // Steps are sorted by start: only those that can reach into the visible range.
  auto it = std::partition_point(rank.steps.begin(), rank.steps.end(),
                                 [&](const Step& s) { return s.end_ns < ctx.t0; });
  for (; it != rank.steps.end() && it->start_ns <= ctx.t1; ++it) {
    for (TimeNs t : {it->start_ns, it->end_ns}) {
      if (t < ctx.t0 || t > ctx.t1) continue;
      const float x = ctx.x_of(t);
      ctx.dl->AddLine(ImVec2(x, group_top + ctx.header_h()), ImVec2(x, group_bottom),
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
  const float h = ctx.lane_h();
  char buf[48];
  const DrawItem* hovered = draw_lane(
      ctx, std::span<const Step>(rank.steps), items_, y, h,
      [](const Step&, std::uint32_t) { return IM_COL32(64, 68, 84, 255); },
      [&](const Step& s) -> std::string_view {
        std::snprintf(buf, sizeof buf, "Step %lld", static_cast<long long>(s.number));
        return buf;
      },
      [](const Step&, const DrawItem&, float, float) {});
  if (hovered) set_hover(ctx, this, EventKind::kStep, 0, *hovered, 0);
  ctx.dl->AddText(ImVec2(ctx.label_x + 18 * ctx.ui, ctx.text_y(y, h)), kColTextDim, "steps");
}

bool StepsItem::lane_of(const TimelineContext&, const EventRef& event, std::uint32_t& lane) const {
  if (event.kind != EventKind::kStep || event.rank_index != rank_index_) return false;
  lane = 0;
  return true;
}

// [SECTION] GPU stream
// --------------------------------------------------------------------------------------------

std::string GpuStreamItem::label(const TimelineContext& ctx) const {
  const GpuStream& s = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)].streams[stream_];
  return "GPU" + std::to_string(s.device) + " " + s.name;
}

float GpuStreamItem::height(const TimelineContext& ctx) const {
  const auto& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->streams[stream_];
  return static_cast<float>(layout.lanes()) * ctx.lane_h() + kUtilisationHeight * ctx.ui;
}

// The utilisation lane at UY: per bucket of kUtilisationBucketPx pixels, a bar as tall as the share of the
// bucket's time the stream was busy, so that a sparse stream reads sparse at any zoom (folds alone look
// solid). At least a pixel where it was busy at all.
void GpuStreamItem::draw_utilisation(TimelineContext& ctx, float uy) {
  const LaneLayout& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->streams[stream_];
  const float uh = kUtilisationHeight * ctx.ui;
  // Buckets a power of two of nanoseconds wide (0.7 to 1.4 times kUtilisationBucketPx pixels), so that a zoom
  // keeps the grid, and computes only the buckets it brings into view, until it crosses to the next power.
  const double width =
      std::max(1.0, std::exp2(std::round(std::log2(ctx.ns_per_px * kUtilisationBucketPx * ctx.ui))));
  const auto bucket_px = static_cast<float>(width / ctx.ns_per_px);
  const TimeNs origin = ctx.profile->first_ns();
  const double view_from_origin = static_cast<double>(ctx.t0 - origin);
  // The grid's buckets that meet the view: one more than fit the width, as the grid does not start at x0.
  const auto first = static_cast<std::int64_t>(std::floor(view_from_origin / width));
  const auto buckets = static_cast<std::size_t>(std::max(0.0f, std::ceil((ctx.x1 - ctx.x0) / bucket_px))) + 1;
  {
    const auto r = static_cast<std::size_t>(rank_index_);
    update_utilisation_grid(utilisation_, layout, ctx.profile->ranks()[r].stream_activities(stream_), origin,
                            first, buckets, width);
  }
  const std::vector<float>& shares = utilisation_.shares;
  auto bucket_x = [&](std::int64_t k) {
    const double x = (static_cast<double>(k) * width - view_from_origin) / ctx.ns_per_px;
    return std::clamp(ctx.x0 + static_cast<float>(x), ctx.x0, ctx.x1);
  };
  ctx.dl->AddLine(ImVec2(ctx.x0, uy + uh - 0.5f), ImVec2(ctx.x1, uy + uh - 0.5f), kColUtilisationBase);
  // Bars in whole pixels, and a run of buckets of one height drawn as one rectangle: a busy or an idle
  // stretch costs one rectangle, not one per bucket.
  auto bar_px = [&](float share) {
    return share <= 0 ? 0 : std::max(1, static_cast<int>(share * (uh - 1) + 0.5f));
  };
  for (std::size_t k = 0; k < shares.size();) {
    const int bar = bar_px(shares[k]);
    std::size_t end = k + 1;
    while (end < shares.size() && bar_px(shares[end]) == bar) ++end;
    const float bx0 = bucket_x(first + static_cast<std::int64_t>(k));
    const float bx1 = bucket_x(first + static_cast<std::int64_t>(end));
    if (bar > 0 && bx1 > bx0) {
      ctx.dl->AddRectFilled(ImVec2(bx0, uy + uh - 1 - static_cast<float>(bar)), ImVec2(bx1, uy + uh - 1),
                            kColUtilisation);
    }
    k = end;
  }
  if (ctx.hovered && ctx.mouse.x >= ctx.x0 && ctx.mouse.x < ctx.x1 && ctx.mouse.y >= uy &&
      ctx.mouse.y < uy + uh) {
    const auto k = static_cast<std::int64_t>(
        std::floor((static_cast<double>(ctx.mouse.x - ctx.x0) * ctx.ns_per_px + view_from_origin) / width));
    const TimeNs a = origin + static_cast<TimeNs>(static_cast<double>(k) * width);
    const TimeNs b = origin + static_cast<TimeNs>(static_cast<double>(k + 1) * width);
    ctx.hover = {HoverKind::kBand, this, {}, DrawItem{a, b, 0, 0}, layout.lanes()};
  }
}

void GpuStreamItem::preprocess(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const LaneLayout& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->streams[stream_];
  const auto events = rank.stream_activities(stream_);
  lanes_.resize(layout.lanes());
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    lanes_[lane].clear();
    if (!ctx.row_visible(y + static_cast<float>(lane) * ctx.lane_h(), ctx.lane_h())) continue;
    preprocess_lane(events, lane_members(layout, lane), ctx.lod, lanes_[lane], lane_fold_index(layout, lane));
  }
}

// The outline of an instance of the selected collective, and its link point.
void GpuStreamItem::mark(TimelineContext& ctx, const Activity& a, const DrawItem& item, float x0, float x1,
                         float ly) {
  if (item.count != 1 || ctx.tl->selected_instance < 0 || a.collective < 0) return;
  if (ctx.loaded->instance_of[static_cast<std::size_t>(rank_index_)]
                             [static_cast<std::size_t>(a.collective)] != ctx.tl->selected_instance)
    return;
  const float h = ctx.lane_h();
  ctx.dl->AddRect(ImVec2(x0 - 1, ly), ImVec2(x1 + 1, ly + h), kColSelect, 0, 0, 2.0f);
  const std::int32_t rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)].rank;
  ctx.tl->links.push_back({rank, (x0 + x1) * 0.5f, ly + h * 0.5f});
}

void GpuStreamItem::draw(TimelineContext& ctx, float y) {
  const auto r = static_cast<std::size_t>(rank_index_);
  const Rank& rank = ctx.profile->ranks()[r];
  const GpuStream& stream = rank.streams[stream_];
  const auto& result = ctx.loaded->analysis().ranks[r];
  const auto events = rank.stream_activities(stream_);
  const LaneLayout& layout = ctx.loaded->ranks[r]->streams[stream_];
  const float h = ctx.lane_h();
  for (std::uint32_t lane = 0; lane < lanes_.size(); ++lane) {
    const float ly = y + static_cast<float>(lane) * h;
    if (!ctx.row_visible(ly, h)) continue;
    const DrawItem* hovered = draw_lane(
        ctx, events, lanes_[lane], ly, h,
        [&](const Activity&, std::uint32_t i) { return class_color(result.classes[stream.first + i]); },
        [&](const Activity& a) -> std::string_view { return ctx.profile->str(a.name); },
        [&](const Activity& a, const DrawItem& item, float x0, float x1) { mark(ctx, a, item, x0, x1, ly); },
        [&](const DrawItem& item) { return busy_of_run(layout, lane, item.index, item.count); });
    draw_matches(ctx, lane, ly, h);
    if (hovered) set_hover(ctx, this, EventKind::kActivity, stream.first, *hovered, lane);
  }
  const auto lanes = static_cast<std::uint32_t>(lanes_.size());
  const float uy = y + static_cast<float>(lanes) * h;
  if (ctx.row_visible(uy, kUtilisationHeight * ctx.ui)) draw_utilisation(ctx, uy);
  if (ctx.row_visible(y, h)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "GPU%d %s%s", stream.device, stream.name.c_str(), lanes > 1 ? " *" : "");
    clipped_text(ctx.dl, ctx.label_x + 18 * ctx.ui, ctx.label_x + ctx.label_w() - 4, ctx.text_y(y, h),
                 kColText, buf);
  }
  const float bottom = uy + kUtilisationHeight * ctx.ui;
  if (ctx.hovered && ctx.mouse.x < ctx.x0 && ctx.mouse.y >= y && ctx.mouse.y < bottom) {
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
  }
}

bool GpuStreamItem::lane_of(const TimelineContext& ctx, const EventRef& event, std::uint32_t& lane) const {
  if (event.kind != EventKind::kActivity || event.rank_index != rank_index_) return false;
  const GpuStream& s = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)].streams[stream_];
  if (event.index < s.first || event.index >= s.first + s.count) return false;
  return find_lane(ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->streams[stream_],
                   event.index - s.first, lane);
}

// [SECTION] CPU track and CPU section
// --------------------------------------------------------------------------------

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

std::string CpuTrackItem::label(const TimelineContext& ctx) const {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  if (track_ != kNoRow) return rank.tracks[track_].name;
  const auto& thread =
      ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->launches.threads[api_thread_];
  return "thread " + std::to_string(thread.tid) + " (CUDA API)";
}

bool CpuTrackItem::visible(const TimelineState& tl) const {
  const auto r = static_cast<std::size_t>(rank_index_);
  return tl.rank_open[r] != 0 && (gpu_ || tl.cpu_open[r] != 0);
}

std::uint32_t CpuTrackItem::range_lanes(const TimelineContext& ctx) const {
  return track_ == kNoRow ? 0
                          : ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->tracks[track_].lanes();
}

std::uint32_t CpuTrackItem::api_lanes(const TimelineContext& ctx) const {
  if (api_thread_ == kNoRow) return 0;
  return ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->api_threads[api_thread_].lanes();
}

float CpuTrackItem::height(const TimelineContext& ctx) const {
  return static_cast<float>(range_lanes(ctx) + api_lanes(ctx)) * ctx.cpu_lane_h();
}

void CpuTrackItem::preprocess(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const auto& index = *ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)];
  const std::uint32_t ranges = range_lanes(ctx), apis = api_lanes(ctx);
  const float h = ctx.cpu_lane_h();
  lanes_.resize(ranges + apis);
  for (std::uint32_t lane = 0; lane < ranges + apis; ++lane) {
    lanes_[lane].clear();
    if (!ctx.row_visible(y + static_cast<float>(lane) * h, h)) continue;
    if (lane < ranges) {
      preprocess_lane(rank.track_ranges(track_), lane_members(index.tracks[track_], lane), ctx.lod,
                      lanes_[lane]);
    } else {
      preprocess_lane(std::span<const ApiCall>(rank.api_calls),
                      index.api_threads[api_thread_].members[lane - ranges], ctx.lod, lanes_[lane]);
    }
  }
}

void CpuTrackItem::draw_ranges(TimelineContext& ctx, float y) {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const auto events = rank.track_ranges(track_);
  const float h = ctx.cpu_lane_h();
  for (std::uint32_t lane = 0; lane < range_lanes(ctx); ++lane) {
    const float ly = y + static_cast<float>(lane) * h;
    if (!ctx.row_visible(ly, h)) continue;
    const DrawItem* hovered = draw_lane(
        ctx, events, lanes_[lane], ly, h, [](const CpuRange& c, std::uint32_t) { return range_color(c); },
        [&](const CpuRange& c) -> std::string_view { return ctx.profile->str(c.name); },
        [](const CpuRange&, const DrawItem&, float, float) {});
    draw_matches(ctx, lane, ly, h);
    if (hovered) set_hover(ctx, this, EventKind::kRange, rank.tracks[track_].first, *hovered, lane);
  }
}

void CpuTrackItem::draw_api(TimelineContext& ctx, float y) {
  const auto r = static_cast<std::size_t>(rank_index_);
  const Rank& rank = ctx.profile->ranks()[r];
  const auto& launches = ctx.loaded->ranks[r]->launches;
  const std::uint32_t first_lane = range_lanes(ctx);
  const float h = ctx.cpu_lane_h();
  for (std::uint32_t lane = first_lane; lane < first_lane + api_lanes(ctx); ++lane) {
    const float ly = y + static_cast<float>(lane) * h;
    if (!ctx.row_visible(ly, h)) continue;
    const DrawItem* hovered = draw_lane(
        ctx, std::span<const ApiCall>(rank.api_calls), lanes_[lane], ly, h,
        [&](const ApiCall&, std::uint32_t i) {
          return launches.launched_first[i + 1] > launches.launched_first[i] ? kColApiLaunch : kColApi;
        },
        [&](const ApiCall& c) -> std::string_view { return ctx.profile->str(c.name); },
        [](const ApiCall&, const DrawItem&, float, float) {});
    draw_matches(ctx, lane, ly, h);
    if (hovered) set_hover(ctx, this, EventKind::kApiCall, 0, *hovered, lane);
  }
  const float api_y = y + static_cast<float>(first_lane) * h;
  if (first_lane > 0 && ctx.row_visible(api_y, h)) {
    clipped_text(ctx.dl, ctx.label_x + 42 * ctx.ui, ctx.label_x + ctx.label_w() - 4, ctx.text_y(api_y, h),
                 kColApi, "CUDA API");
  }
}

void CpuTrackItem::draw(TimelineContext& ctx, float y) {
  if (track_ != kNoRow) draw_ranges(ctx, y);
  if (api_thread_ != kNoRow) draw_api(ctx, y);
  const float h = ctx.cpu_lane_h();
  if (ctx.row_visible(y, h)) {
    clipped_text(ctx.dl, ctx.label_x + 30 * ctx.ui, ctx.label_x + ctx.label_w() - 4, ctx.text_y(y, h),
                 kColTextDim, label(ctx));
  }
  if (ctx.hovered && ctx.mouse.x < ctx.x0 && ctx.mouse.y >= y && ctx.mouse.y < y + height(ctx)) {
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
  }
}

bool CpuTrackItem::lane_of(const TimelineContext& ctx, const EventRef& event, std::uint32_t& lane) const {
  if (event.rank_index != rank_index_) return false;
  const auto& index = *ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)];
  if (event.kind == EventKind::kRange && track_ != kNoRow) {
    const CpuTrack& t = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)].tracks[track_];
    if (event.index < t.first || event.index >= t.first + t.count) return false;
    return find_lane(index.tracks[track_], event.index - t.first, lane);
  }
  if (event.kind == EventKind::kApiCall && api_thread_ != kNoRow) {
    if (index.launches.thread_of_api[event.index] != api_thread_) return false;
    if (!find_lane(index.api_threads[api_thread_], event.index, lane)) return false;
    lane += range_lanes(ctx);
    return true;
  }
  return false;
}

void CpuSectionItem::draw(TimelineContext& ctx, float y) {
  const auto r = static_cast<std::size_t>(rank_index_);
  const bool open = ctx.tl->cpu_open[r] != 0;
  const float h = ctx.lane_h();
  char buf[128];
  std::snprintf(buf, sizeof buf, "%s CPU threads (%zu, %lld ranges, %zu CUDA API calls)", open ? "v" : ">",
                threads_, static_cast<long long>(ctx.loaded->ranks[r]->cpu_ranges),
                ctx.profile->ranks()[r].api_calls.size());
  clipped_text(ctx.dl, ctx.label_x + 18 * ctx.ui, ctx.x1, ctx.text_y(y, h), kColTextDim, buf);
  const float text_end = ctx.label_x + 18 * ctx.ui + ImGui::CalcTextSize(buf).x;
  if (ctx.hovered && ctx.mouse.y >= y && ctx.mouse.y < y + h && ctx.mouse.x < std::max(ctx.x0, text_end)) {
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
    if (ctx.click) ctx.tl->cpu_open[r] = open ? 0 : 1;
  }
}

// [SECTION] OS thread state (scheduling and CPU samples)
// -----------------------------------------------------------------------------------

namespace {
constexpr ImU32 kColOnCpu = IM_COL32(96, 186, 104, 255);    // running on a core, as Nsight Systems draws it
constexpr ImU32 kColSample = IM_COL32(250, 222, 120, 255);  // a CPU sample
}  // namespace

std::string ThreadStateItem::label(const TimelineContext& ctx) const {
  const OsThread& t = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)].os_threads[thread_];
  return (t.name.empty() ? "thread " + std::to_string(t.tid) : t.name) + " · on CPU";
}

bool ThreadStateItem::visible(const TimelineState& tl) const {
  const auto r = static_cast<std::size_t>(rank_index_);
  return tl.rank_open[r] != 0 && tl.cpu_open[r] != 0;
}

std::uint32_t ThreadStateItem::lanes(const TimelineContext& ctx) const {
  return ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->os_threads[thread_].lanes();
}

float ThreadStateItem::height(const TimelineContext& ctx) const {
  return static_cast<float>(lanes(ctx)) * ctx.cpu_lane_h();
}

void ThreadStateItem::preprocess(TimelineContext& ctx, float y) {
  const auto r = static_cast<std::size_t>(rank_index_);
  const Rank& rank = ctx.profile->ranks()[r];
  const LaneLayout& layout = ctx.loaded->ranks[r]->os_threads[thread_];
  const auto runs = rank.thread_on_cpu(thread_);
  const float h = ctx.cpu_lane_h();
  lanes_.resize(layout.lanes());
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    lanes_[lane].clear();
    if (ctx.row_visible(y + static_cast<float>(lane) * h, h))
      preprocess_lane(runs, lane_members(layout, lane), ctx.lod, lanes_[lane], lane_fold_index(layout, lane));
  }
  // One tick per pixel column: the samples of a column are jumped over by binary search, never dropped
  // (the tick counts them).
  ticks_.clear();
  if (!ctx.row_visible(y, h)) return;
  const auto samples = rank.thread_samples(thread_);
  auto by_time = [](const CpuSample& s, TimeNs t) { return s.time_ns < t; };
  auto it = std::lower_bound(samples.begin(), samples.end(), ctx.t0, by_time);
  while (it != samples.end() && it->time_ns < ctx.t1) {
    const float column = std::floor(ctx.x_of(it->time_ns));
    const TimeNs next_column = std::max(ctx.t_of(column + 1.0f), it->time_ns + 1);
    const auto next = std::lower_bound(it, samples.end(), next_column, by_time);
    ticks_.push_back({it->time_ns, std::prev(next)->time_ns, static_cast<std::uint32_t>(it - samples.begin()),
                      static_cast<std::uint32_t>(next - it)});
    it = next;
  }
}

void ThreadStateItem::draw(TimelineContext& ctx, float y) {
  const auto r = static_cast<std::size_t>(rank_index_);
  const Rank& rank = ctx.profile->ranks()[r];
  const LaneLayout& layout = ctx.loaded->ranks[r]->os_threads[thread_];
  const auto runs = rank.thread_on_cpu(thread_);
  const float h = ctx.cpu_lane_h();
  for (std::uint32_t lane = 0; lane < lanes_.size(); ++lane) {
    const float ly = y + static_cast<float>(lane) * h;
    if (!ctx.row_visible(ly, h)) continue;
    const DrawItem* hovered = draw_lane(
        ctx, runs, lanes_[lane], ly, h, [](const OnCpu&, std::uint32_t) { return kColOnCpu; },
        [](const OnCpu&) -> std::string_view { return "on CPU"; },
        [](const OnCpu&, const DrawItem&, float, float) {},
        [&](const DrawItem& item) { return busy_of_run(layout, lane, item.index, item.count); });
    if (hovered)
      ctx.hover = {hovered->count > 1 ? HoverKind::kFolded : HoverKind::kBand, this, {}, *hovered, lane};
  }
  if (ctx.row_visible(y, h)) {
    ctx.tl->frame_items += ticks_.size();
    const bool row_hovered = ctx.hovered && ctx.mouse.y >= y && ctx.mouse.y < y + h && ctx.mouse.x >= ctx.x0;
    const DrawItem* nearest = nullptr;
    float nearest_px = 3.0f * ctx.ui;
    for (const DrawItem& tick : ticks_) {
      ctx.tl->frame_events += tick.count;
      const float x = std::floor(ctx.x_of(tick.start_ns)) + 0.5f;
      ctx.dl->AddLine(ImVec2(x, y + 1), ImVec2(x, y + 1 + (h - 2) * 0.45f), kColSample);
      if (row_hovered && std::abs(ctx.mouse.x - x) <= nearest_px) {
        nearest_px = std::abs(ctx.mouse.x - x);
        nearest = &tick;
      }
    }
    if (nearest) ctx.hover = {HoverKind::kBand, this, {}, *nearest, kSampleLane};
    clipped_text(ctx.dl, ctx.label_x + 30 * ctx.ui, ctx.label_x + ctx.label_w() - 4, ctx.text_y(y, h),
                 kColTextDim, label(ctx));
  }
  if (ctx.hovered && ctx.mouse.x < ctx.x0 && ctx.mouse.y >= y && ctx.mouse.y < y + height(ctx))
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
}

// [SECTION] Baseline rows
// -----------------------------------------------------------------------------------------

std::string BaselineItem::label(const TimelineContext&) const {
  const Rank& rank = base_->profile->ranks()[base_rank_];
  if (stream_ == kNoRow) return steps_label();
  const GpuStream& s = rank.streams[stream_];
  return base_->baseline_name + " GPU" + std::to_string(s.device) + " " + s.name;
}

std::string BaselineItem::steps_label() const {
  const Rank& r = base_->profile->ranks()[base_rank_];
  if (base_->pipeline_world > 0)
    return fmt::format("{} steps (rank {}, stage {})", base_->baseline_name, r.rank,
                       r.rank / base_->pipeline_world);
  return fmt::format("{} steps (rank {})", base_->baseline_name, r.rank);
}

float BaselineItem::height(const TimelineContext& ctx) const {
  if (stream_ == kNoRow) return ctx.lane_h();
  return static_cast<float>(base_->ranks[base_rank_]->streams[stream_].lanes()) * ctx.lane_h();
}

void BaselineItem::preprocess(TimelineContext& ctx, float y) {
  const Rank& rank = base_->profile->ranks()[base_rank_];
  // The visible range on the baseline's own clock.
  const LodParams lod{ctx.t0 - offset_ns_, ctx.t1 - offset_ns_, ctx.ns_per_px, kMinPx};
  if (stream_ == kNoRow) {
    lanes_.resize(1);
    lanes_[0].clear();
    preprocess_lane(std::span<const Step>(rank.steps), {}, lod, lanes_[0]);
    return;
  }
  const LaneLayout& layout = base_->ranks[base_rank_]->streams[stream_];
  const auto events = rank.stream_activities(stream_);
  lanes_.resize(layout.lanes());
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    lanes_[lane].clear();
    if (!ctx.row_visible(y + static_cast<float>(lane) * ctx.lane_h(), ctx.lane_h())) continue;
    preprocess_lane(events, lane_members(layout, lane), lod, lanes_[lane], lane_fold_index(layout, lane));
  }
}

void BaselineItem::draw(TimelineContext& ctx, float y) {
  const Rank& rank = base_->profile->ranks()[base_rank_];
  const float h = ctx.lane_h();
  const float bottom = y + height(ctx);
  // Tinted background and a stripe at the label's left edge: these rows are the baseline's.
  ctx.dl->AddRectFilled(ImVec2(ctx.label_x, y), ImVec2(ctx.x1, bottom), IM_COL32(70, 200, 190, 22));
  ctx.dl->AddRectFilled(ImVec2(ctx.label_x, y), ImVec2(ctx.label_x + 4 * ctx.ui, bottom), kColBaseline);
  // Draw on the baseline's clock: the lanes' times are the baseline's, x_of() reads ctx.t0.
  const TimeNs t0 = ctx.t0, t1 = ctx.t1;
  ctx.t0 -= offset_ns_;
  ctx.t1 -= offset_ns_;
  char buf[96];
  for (std::uint32_t lane = 0; lane < lanes_.size(); ++lane) {
    const float ly = y + static_cast<float>(lane) * h;
    if (!ctx.row_visible(ly, h)) continue;
    const DrawItem* hovered = nullptr;
    if (stream_ == kNoRow) {
      hovered = draw_lane(
          ctx, std::span<const Step>(rank.steps), lanes_[lane], ly, h,
          [](const Step&, std::uint32_t) { return IM_COL32(58, 88, 92, 255); },
          [&](const Step& s) -> std::string_view {
            const measure::ReplayedStep* w = base_->whatif_step(rank.rank, s.number);
            if (w && w->measured_ns > 0)
              std::snprintf(buf, sizeof buf, "Step %lld  %+.1f %%", static_cast<long long>(s.number),
                            100.0 * static_cast<double>(w->replayed_ns - w->measured_ns) /
                                static_cast<double>(w->measured_ns));
            else
              std::snprintf(buf, sizeof buf, "Step %lld", static_cast<long long>(s.number));
            return buf;
          },
          [](const Step&, const DrawItem&, float, float) {});
    } else {
      const GpuStream& stream = rank.streams[stream_];
      const auto& result = base_->analysis().ranks[base_rank_];
      hovered = draw_lane(
          ctx, rank.stream_activities(stream_), lanes_[lane], ly, h,
          [&](const Activity&, std::uint32_t i) {
            return scale_color(class_color(result.classes[stream.first + i]), 0.8f);
          },
          [&](const Activity& a) -> std::string_view { return base_->profile->str(a.name); },
          [](const Activity&, const DrawItem&, float, float) {});
    }
    if (hovered) {
      ctx.hover = {HoverKind::kBaseline, this, {}, *hovered, lane};
    }
  }
  if (ctx.tl->critical && stream_ != kNoRow) draw_critical_path(ctx, y);
  ctx.t0 = t0;
  ctx.t1 = t1;
  if (ctx.row_visible(y, h)) {
    const float tx = ctx.label_x + 10 * ctx.ui;
    ctx.dl->AddText(ImVec2(tx, ctx.text_y(y, h)), kColBaseline, base_->whatif_edits.empty() ? "B" : "W");
    const Rank& r = base_->profile->ranks()[base_rank_];
    if (stream_ == kNoRow)
      std::snprintf(buf, sizeof buf, "%s", steps_label().c_str());
    else
      std::snprintf(buf, sizeof buf, "GPU%d %s", r.streams[stream_].device, r.streams[stream_].name.c_str());
    clipped_text(ctx.dl, tx + 18 * ctx.ui, ctx.label_x + ctx.label_w() - 4, ctx.text_y(y, h), kColBaseline,
                 buf);
  }
  if (ctx.hovered && ctx.mouse.x < ctx.x0 && ctx.mouse.y >= y && ctx.mouse.y < bottom) {
    ctx.hover = {HoverKind::kLabel, this, {}, {}, 0};
  }
}

BaselinePairing baseline_pairing(const Profile& profile, const Profile& base) {
  BaselinePairing pairing;
  pairing.base_of.assign(profile.ranks().size(), -1);
  std::size_t matched = 0;
  for (std::size_t r = 0; r < profile.ranks().size(); ++r) {
    pairing.base_of[r] = base.rank_index(profile.ranks()[r].rank);
    matched += pairing.base_of[r] >= 0;
  }
  if (matched == 0 && !base.ranks().empty()) {
    // No rank in common (rank 3 of one job against rank 0 of another): paired in order.
    pairing.in_order = true;
    for (std::size_t r = 0; r < profile.ranks().size() && r < base.ranks().size(); ++r)
      pairing.base_of[r] = static_cast<std::ptrdiff_t>(r);
  }
  return pairing;
}

std::size_t add_baseline_items(const LoadedProfile& loaded, const LoadedProfile& base, TimelineState& state) {
  const auto& ranks = loaded.profile->ranks();
  const auto& base_ranks = base.profile->ranks();
  const BaselinePairing pairing = baseline_pairing(*loaded.profile, *base.profile);
  std::size_t added = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    // The rank paired with this one, and with a pipelined what-if its other stages' ranks.
    std::vector<std::uint32_t> bases;
    if (pairing.base_of[r] >= 0) bases.push_back(static_cast<std::uint32_t>(pairing.base_of[r]));
    if (const std::int32_t world = base.pipeline_world; world > 0)
      for (std::uint32_t b = 0; b < base_ranks.size(); ++b)
        if (base_ranks[b].rank >= world && base_ranks[b].rank % world == ranks[r].rank) bases.push_back(b);
    if (bases.empty()) continue;
    // Align at each run's first step start (the profile starts when neither has steps).
    const TimeNs mine = ranks[r].steps.empty() ? loaded.profile->first_ns() : ranks[r].steps.front().start_ns;
    const auto& rows = state.rows[r];
    // After the rank's last GPU row (stream or GPU annotation track), else after its steps or header.
    std::uint32_t after = rows.steps != kNoRow ? rows.steps : rows.header;
    for (std::uint32_t i : rows.streams) after = std::max(after, i);
    for (std::size_t k = 0; k < rows.tracks.size(); ++k) {
      if (rows.tracks[k] != kNoRow && ranks[r].tracks[k].gpu) after = std::max(after, rows.tracks[k]);
    }
    auto at = std::find(state.order.begin(), state.order.end(), after);
    if (at != state.order.end()) ++at;
    std::vector<std::uint32_t> mine_rows;
    const auto ri = static_cast<std::int32_t>(r);
    for (const std::uint32_t b : bases) {
      const Rank* other = &base_ranks[b];
      const TimeNs theirs = other->steps.empty() ? base.profile->first_ns() : other->steps.front().start_ns;
      const TimeNs offset = mine - theirs;
      auto add = [&](std::uint32_t stream) {
        state.items.push_back(std::make_unique<BaselineItem>(ri, &base, b, stream, offset));
        mine_rows.push_back(static_cast<std::uint32_t>(state.items.size() - 1));
      };
      if (!other->steps.empty()) add(kNoRow);
      for (std::uint32_t s = 0; s < other->streams.size(); ++s) add(s);
    }
    const auto pos = at - state.order.begin();
    state.order.insert(state.order.begin() + pos, mine_rows.begin(), mine_rows.end());
    added += mine_rows.size();
  }
  state.pinned.resize(state.items.size(), 0);
  return added;
}

// [SECTION] Building the items of a profile
// ---------------------------------------------------------------------------

void build_timeline_items(const LoadedProfile& loaded, TimelineState& state) {
  auto& items = state.items;
  items.clear();
  const auto& ranks = loaded.profile->ranks();
  state.rows.assign(ranks.size(), {});
  auto add = [&](std::unique_ptr<TimelineItem> item) {
    items.push_back(std::move(item));
    return static_cast<std::uint32_t>(items.size() - 1);
  };
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Rank& rank = ranks[r];
    const auto& launches = loaded.ranks[r]->launches;
    const auto ri = static_cast<std::int32_t>(r);
    auto& rows = state.rows[r];
    rows.streams.assign(rank.streams.size(), kNoRow);
    rows.tracks.assign(rank.tracks.size(), kNoRow);
    rows.api_threads.assign(launches.threads.size(), kNoRow);
    rows.header = add(std::make_unique<RankHeaderItem>(ri));
    if (!rank.steps.empty()) rows.steps = add(std::make_unique<StepsItem>(ri));
    for (std::size_t s = 0; s < rank.streams.size(); ++s) {
      rows.streams[s] = add(std::make_unique<GpuStreamItem>(ri, static_cast<std::uint32_t>(s)));
    }
    std::vector<std::uint32_t> api_of_track(rank.tracks.size(), kNoRow);
    std::size_t threads = 0;
    for (std::uint32_t t = 0; t < launches.threads.size(); ++t) {
      if (launches.threads[t].track != measure::kNoIndex)
        api_of_track[launches.threads[t].track] = t;
      else
        ++threads;
    }
    for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
      if (rank.tracks[k].gpu)
        rows.tracks[k] = add(std::make_unique<CpuTrackItem>(ri, static_cast<std::uint32_t>(k), true, kNoRow));
      else
        ++threads;
    }
    // The OS's record of a thread goes above the thread's own row; a thread with nothing else gets it alone.
    std::vector<std::uint8_t> os_placed(rank.os_threads.size(), 0);
    auto add_os_thread = [&](std::int64_t pid, std::int64_t tid) {
      const std::int64_t t = rank.os_thread_of(pid, tid);
      if (t < 0 || os_placed[static_cast<std::size_t>(t)]) return;
      os_placed[static_cast<std::size_t>(t)] = 1;
      add(std::make_unique<ThreadStateItem>(ri, static_cast<std::uint32_t>(t)));
    };
    std::size_t os_only = 0;
    for (const OsThread& t : rank.os_threads) {
      const bool traced =
          std::any_of(rank.tracks.begin(), rank.tracks.end(),
                      [&](const CpuTrack& k) { return !k.gpu && k.pid == t.pid && k.tid == t.tid; }) ||
          std::any_of(launches.threads.begin(), launches.threads.end(),
                      [&](const auto& a) { return a.pid == t.pid && a.tid == t.tid; });
      if (!traced) ++os_only;
    }
    threads += os_only;
    if (threads == 0) continue;
    rows.section = add(std::make_unique<CpuSectionItem>(ri, threads));
    for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
      if (rank.tracks[k].gpu) continue;
      add_os_thread(rank.tracks[k].pid, rank.tracks[k].tid);
      const std::uint32_t api = api_of_track[k];
      rows.tracks[k] = add(std::make_unique<CpuTrackItem>(ri, static_cast<std::uint32_t>(k), false, api));
      if (api != kNoRow) rows.api_threads[api] = rows.tracks[k];
    }
    for (std::uint32_t t = 0; t < launches.threads.size(); ++t) {
      if (launches.threads[t].track != measure::kNoIndex) continue;
      add_os_thread(launches.threads[t].pid, launches.threads[t].tid);
      rows.api_threads[t] = add(std::make_unique<CpuTrackItem>(ri, kNoRow, false, t));
    }
    for (const OsThread& t : rank.os_threads) add_os_thread(t.pid, t.tid);
  }
  state.order.resize(items.size());
  for (std::uint32_t i = 0; i < items.size(); ++i) state.order[i] = i;
  state.pinned.assign(items.size(), 0);
}

}  // namespace meshscope::gui
