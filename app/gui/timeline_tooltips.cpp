// timeline_tooltips.cpp: what each timeline row kind shows for the thing under the mouse (the tooltip
// phase of the timeline items; the controller calls it once per frame for the hovered item).
//
// [SECTION] Shared (folded runs)
// [SECTION] Rank header (exposed-communication band, label)
// [SECTION] Steps
// [SECTION] GPU stream (activities, collectives, label)
// [SECTION] CPU track
// [SECTION] Baseline rows
#include <imgui.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "analysis/measure/collectives.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/loaded_profile.hpp"
#include "app/gui/timeline_items.hpp"

namespace meshscope::gui {

// [SECTION] Shared
// ---------------------------------------------------------------------------------------------

void folded_tooltip(const DrawItem& item, std::string_view first_name, TimeNs busy_ns) {
  char tb[32], tb2[32];
  ImGui::BeginTooltip();
  ImGui::Text("%u events folded (each under %.0f px: double-click or zoom in to separate them)", item.count,
              kMinPx);
  const TimeNs span = item.end_ns - item.start_ns;
  if (busy_ns >= 0 && span > 0) {
    ImGui::Text("span %s, busy %s of it (%.0f%%; the fold is drawn that tall)",
                duration_text(tb, sizeof tb, static_cast<double>(span)),
                duration_text(tb2, sizeof tb2, static_cast<double>(busy_ns)),
                100.0 * static_cast<double>(busy_ns) / static_cast<double>(span));
  } else {
    ImGui::Text("span %s", duration_text(tb, sizeof tb, static_cast<double>(span)));
  }
  ImGui::TextDisabled("first: %.*s", static_cast<int>(std::min<std::size_t>(first_name.size(), 90)),
                      first_name.data());
  ImGui::EndTooltip();
}

// [SECTION] Rank header
// ----------------------------------------------------------------------------------------

void RankHeaderItem::tooltip(const TimelineContext& ctx, const Hover& hover) const {
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  char tb[32], tb2[32], tb3[32];
  const bool open = ctx.tl->rank_open[static_cast<std::size_t>(rank_index_)] != 0;
  if (!ctx.loaded->rank_loaded(static_cast<std::size_t>(rank_index_))) {
    // A lazily loaded rank whose events are not read yet: what its summary says.
    const RankSummary* s = ctx.loaded->rank_summary(static_cast<std::size_t>(rank_index_));
    if (hover.kind == HoverKind::kBand && s) {
      const auto& bucket = s->overview.buckets[hover.draw.index];
      const double span = static_cast<double>(std::max<TimeNs>(1, bucket.span_ns));
      ImGui::SetTooltip(
          "Rank %d, summary bucket of %s (events not loaded):\ncompute %.0f%%, exposed communication %.0f%%, "
          "memory only %.0f%%, idle %.0f%% of the time the rank was active\nZoom in or open the rank to load "
          "its events.",
          rank.rank, duration_text(tb, sizeof tb, static_cast<double>(s->overview.bucket_ns())),
          100.0 * static_cast<double>(bucket.compute_ns) / span,
          100.0 * static_cast<double>(bucket.exposed_comm_ns) / span,
          100.0 * static_cast<double>(bucket.memory_only_ns) / span,
          100.0 * static_cast<double>(bucket.idle_ns()) / span);
      return;
    }
    ImGui::SetTooltip(
        "Rank %d: %s\nexposed communication %s of %s span (from the profile's summary)\nclick to %s",
        rank.rank,
        ctx.loaded->rank_absent(static_cast<std::size_t>(rank_index_))
            ? "the profile holds its summary only (a part merged without its events)"
        : open ? "its events are loading"
               : "its events load when you open it or zoom in",
        duration_text(tb, sizeof tb, s ? static_cast<double>(s->total.exposed_comm_ns) : 0.0),
        duration_text(tb2, sizeof tb2, s ? static_cast<double>(s->total.span_ns) : 0.0),
        open ? "collapse" : "expand and load it");
    return;
  }
  const auto& b = ctx.loaded->analysis().ranks[static_cast<std::size_t>(rank_index_)].total;
  if (hover.kind == HoverKind::kBand) {
    const DrawItem& item = hover.draw;
    ImGui::SetTooltip(
        "Exposed communication on rank %d: %s here (%u interval%s)\nno compute ran while "
        "this rank communicated.\nRank total: %s exposed of %s communication.",
        rank.rank, duration_text(tb, sizeof tb, static_cast<double>(item.end_ns - item.start_ns)), item.count,
        item.count == 1 ? "" : "s merged under one pixel",
        duration_text(tb2, sizeof tb2, static_cast<double>(b.exposed_comm_ns)),
        duration_text(tb3, sizeof tb3, static_cast<double>(b.comm_ns)));
    return;
  }
  ImGui::SetTooltip(
      "Rank %d: %zu streams, %zu GPU events, %zu CPU tracks, %zu CUDA API calls\nclick to %s, "
      "right-click to move the rank or collapse all",
      rank.rank, rank.streams.size(), rank.activities.size(), rank.tracks.size(), rank.api_calls.size(),
      open ? "collapse" : "expand");
}

// [SECTION] Steps
// ---------------------------------------------------------------------------------------------

void StepsItem::tooltip(const TimelineContext& ctx, const Hover& hover) const {
  if (hover.kind == HoverKind::kFolded) return folded_tooltip(hover.draw, "step");
  const Rank& rank = ctx.profile->ranks()[static_cast<std::size_t>(rank_index_)];
  const auto& result = ctx.loaded->analysis().ranks[static_cast<std::size_t>(rank_index_)];
  const Step& s = rank.steps[hover.event.index];
  char tb[32];
  ImGui::BeginTooltip();
  ImGui::Text("Step %lld (%s)", static_cast<long long>(s.number), s.source.c_str());
  ImGui::Text("CPU duration %s", duration_text(tb, sizeof tb, static_cast<double>(s.end_ns - s.start_ns)));
  for (const auto& sr : result.steps) {
    if (sr.number != s.number) continue;
    const auto& g = sr.gpu;
    ImGui::Separator();
    ImGui::Text("GPU span      %s", duration_text(tb, sizeof tb, static_cast<double>(g.span_ns)));
    ImGui::Text("compute       %s", duration_text(tb, sizeof tb, static_cast<double>(g.compute_ns)));
    ImGui::Text("communication %s", duration_text(tb, sizeof tb, static_cast<double>(g.comm_ns)));
    ImGui::TextColored(to_vec4(kColExposed), "exposed comm  %s",
                       duration_text(tb, sizeof tb, static_cast<double>(g.exposed_comm_ns)));
    ImGui::Text("memory        %s", duration_text(tb, sizeof tb, static_cast<double>(g.memory_ns)));
    ImGui::Text("idle          %s", duration_text(tb, sizeof tb, static_cast<double>(g.idle_ns)));
  }
  ImGui::TextDisabled("double-click to zoom to this step");
  ImGui::EndTooltip();
}

// [SECTION] GPU stream
// ------------------------------------------------------------------------------------------

namespace {

// The collective part of an activity's tooltip: metadata, bandwidth, and this rank's wait and transfer in
// the matched instance.
void collective_tooltip(const TimelineContext& ctx, std::size_t r, const Activity& a) {
  const Profile& profile = *ctx.profile;
  const Rank& rank = profile.ranks()[r];
  const Collective& c = rank.collectives[static_cast<std::size_t>(a.collective)];
  const std::int64_t bytes = std::max(c.in_bytes, c.out_bytes);
  const std::string& op = profile.str(c.op);
  char tb[32], tb2[32];
  ImGui::Separator();
  // A trace that does not say the group's size (kNull) reads "group size unknown", never the sentinel.
  const std::string group =
      c.group_size > 0 ? fmt::format("group of {}", c.group_size) : std::string("group size unknown");
  ImGui::Text("collective %s, %s, %s", op.c_str(),
              bytes > 0 ? bytes_text(tb, sizeof tb, static_cast<double>(bytes)) : "bytes unknown",
              group.c_str());
  ImGui::Text("group %s %s", profile.str(c.pg_desc).c_str(), profile.str(c.pg_ranks).c_str());
  if (c.seq != kNull)
    ImGui::TextDisabled("seq %lld, dtype %s", static_cast<long long>(c.seq), profile.str(c.dtype).c_str());
  if (bytes > 0 && a.duration() > 0) {
    const double algbw = static_cast<double>(bytes) / static_cast<double>(a.duration()) * 1e9;
    char bus[48];
    ImGui::Text("algbw %s, busbw %s", bandwidth_text(tb, sizeof tb, algbw),
                bandwidth_text(bus, sizeof bus, algbw * measure::busbw_factor(op, c.group_size)));
  }
  const std::int32_t inst = ctx.loaded->instance_of[r][static_cast<std::size_t>(a.collective)];
  if (inst < 0) {
    ImGui::TextDisabled("not matched across ranks (peers missing from the profile)");
    return;
  }
  const auto& report = ctx.loaded->analysis().collectives;
  const auto& ci = report.instances[static_cast<std::size_t>(inst)];
  for (std::uint32_t m = 0; m < ci.member_count; ++m) {
    const auto& mem = report.members[ci.first_member + m];
    if (mem.rank_index != r || mem.collective != static_cast<std::uint32_t>(a.collective)) continue;
    const double transfer_bw = bytes > 0 && mem.transfer_ns > 0
                                   ? static_cast<double>(bytes) / static_cast<double>(mem.transfer_ns) * 1e9
                                   : 0.0;
    ImGui::TextColored(to_vec4(kColExposed), "wait %s",
                       duration_text(tb, sizeof tb, static_cast<double>(mem.wait_ns)));
    ImGui::SameLine();
    char bw[48];
    ImGui::Text("transfer %s (algbw over transfer %s)",
                duration_text(tb2, sizeof tb2, static_cast<double>(mem.transfer_ns)),
                bandwidth_text(bw, sizeof bw, transfer_bw));
  }
  const std::string peers = ci.expected > 0 ? fmt::format("{} of {} peers", ci.member_count, ci.expected)
                                            : fmt::format("{} peers (group size unknown)", ci.member_count);
  ImGui::Text("%s in profile, skew %s, last to arrive: rank %d", peers.c_str(),
              duration_text(tb, sizeof tb, static_cast<double>(ci.skew_ns)), ci.last_rank);
}

void stream_label_tooltip(const TimelineContext& ctx, std::size_t r, std::uint32_t s) {
  const GpuStream& stream = ctx.profile->ranks()[r].streams[s];
  const auto& idle = ctx.loaded->analysis().ranks[r].streams[s];
  const std::uint32_t lanes = ctx.loaded->ranks[r]->streams[s].lanes();
  char a[32], b[32], c[32], d[32], e[32];
  ImGui::SetTooltip(
      "GPU %d, %s: %u events on %u sub-lane%s%s\nbusy %s, idle %s (host-bound %s, "
      "kernel gaps %s, other %s)\nright-click: pin to the top, move up or down",
      stream.device, stream.name.c_str(), stream.count, lanes, lanes == 1 ? "" : "s",
      lanes > 1 ? " (overlapping events are stacked, none hidden)" : "",
      duration_text(a, sizeof a, static_cast<double>(idle.busy_ns)),
      duration_text(b, sizeof b, static_cast<double>(idle.idle_ns)),
      duration_text(c, sizeof c, static_cast<double>(idle.host_bound_ns)),
      duration_text(d, sizeof d, static_cast<double>(idle.kernel_gap_ns)),
      duration_text(e, sizeof e, static_cast<double>(idle.other_ns)));
}

}  // namespace

void GpuStreamItem::tooltip(const TimelineContext& ctx, const Hover& hover) const {
  const auto r = static_cast<std::size_t>(rank_index_);
  if (hover.kind == HoverKind::kLabel) return stream_label_tooltip(ctx, r, stream_);
  const Profile& profile = *ctx.profile;
  const Rank& rank = profile.ranks()[r];
  const GpuStream& stream = rank.streams[stream_];
  if (hover.kind == HoverKind::kBand) {  // the utilisation lane: one bucket
    const LaneLayout& layout = ctx.loaded->ranks[r]->streams[stream_];
    std::vector<float> share(1);
    const TimeNs width = hover.draw.end_ns - hover.draw.start_ns;
    lane_utilisation(layout, rank.stream_activities(stream_), hover.draw.start_ns, static_cast<double>(width),
                     share);
    char tb[32], tb2[32];
    ImGui::BeginTooltip();
    ImGui::Text("GPU%d %s busy %.1f %% of %s", stream.device, stream.name.c_str(), 100.0 * share[0],
                duration_text(tb, sizeof tb, static_cast<double>(width)));
    ImGui::TextDisabled(
        "from %s; the lane's bar is this share of its height",
        duration_text(tb2, sizeof tb2, static_cast<double>(hover.draw.start_ns - profile.first_ns())));
    ImGui::EndTooltip();
    return;
  }
  const Activity& a = rank.activities[hover.event.index];
  if (hover.kind == HoverKind::kFolded) {
    const LaneLayout& layout = ctx.loaded->ranks[r]->streams[stream_];
    return folded_tooltip(hover.draw, short_name(profile.str(a.name)),
                          busy_of_run(layout, hover.lane, hover.draw.index, hover.draw.count));
  }
  const auto cls = ctx.loaded->analysis().ranks[r].classes[hover.event.index];
  char tb[32], tb2[32];
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(std::string(short_name(profile.str(a.name))).c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextColored(to_vec4(class_color(cls)), "%s, %s", to_string(a.kind), measure::to_string(cls));
  ImGui::Text("duration %s   start %s", duration_text(tb, sizeof tb, static_cast<double>(a.duration())),
              duration_text(tb2, sizeof tb2, static_cast<double>(a.start_ns - profile.first_ns())));
  ImGui::Text("rank %d, GPU %d, %s", rank.rank, stream.device, stream.name.c_str());
  if (a.kind == ActivityKind::kKernel && a.detail != kNoDetail && a.detail < rank.kernels.size()) {
    const auto& k = rank.kernels[a.detail];
    if (k.grid[0] > 0) {
      ImGui::TextDisabled("grid [%d,%d,%d] block [%d,%d,%d] registers %d", k.grid[0], k.grid[1], k.grid[2],
                          k.block[0], k.block[1], k.block[2], k.registers);
    }
  }
  if ((a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) && a.detail != kNoDetail &&
      a.detail < rank.copies.size()) {
    const auto& c = rank.copies[a.detail];
    if (c.bytes > 0) {
      char bw[48];
      ImGui::Text("%s %s, %s", profile.str(c.copy_kind).c_str(),
                  bytes_text(tb, sizeof tb, static_cast<double>(c.bytes)),
                  a.duration() > 0
                      ? bandwidth_text(bw, sizeof bw,
                                       static_cast<double>(c.bytes) / static_cast<double>(a.duration()) * 1e9)
                      : "duration 0");
    }
  }
  if (a.collective >= 0 && static_cast<std::size_t>(a.collective) < rank.collectives.size()) {
    collective_tooltip(ctx, r, a);
  }
  launch_tooltip_lines(ctx, r, hover.event.index);
  ImGui::TextDisabled("click: select it (details, launch flows%s)",
                      a.collective >= 0 ? ", peers on every rank" : "");
  ImGui::EndTooltip();
}

// [SECTION] CPU track
// -------------------------------------------------------------------------------------------

void launch_tooltip_lines(const TimelineContext& ctx, std::size_t r, std::uint32_t activity) {
  const Profile& profile = *ctx.profile;
  const Rank& rank = profile.ranks()[r];
  const auto& launches = ctx.loaded->ranks[r]->launches;
  const std::uint32_t api = launches.api_of_activity[activity];
  ImGui::Separator();
  if (api == measure::kNoIndex) {
    ImGui::TextDisabled("launch not recorded (no CUDA API call carries its correlation id)");
    return;
  }
  const ApiCall& call = rank.api_calls[api];
  char tb[32];
  ImGui::Text("launched by %s (%s) on thread %lld", profile.str(call.name).c_str(),
              duration_text(tb, sizeof tb, static_cast<double>(call.end_ns - call.start_ns)),
              static_cast<long long>(rank.thread_of(call).tid));
  const std::uint32_t op = launches.op_of_api[api];
  if (op != measure::kNoIndex) {
    const std::string& name = profile.str(rank.ranges[op].name);
    ImGui::Text("from %.*s", static_cast<int>(std::min<std::size_t>(name.size(), 100)), name.c_str());
  }
  ImGui::Text(
      "queued %s before it started",
      duration_text(tb, sizeof tb, static_cast<double>(rank.activities[activity].start_ns - call.start_ns)));
}

namespace {

void api_call_tooltip(const TimelineContext& ctx, std::size_t r, std::uint32_t index) {
  const Profile& profile = *ctx.profile;
  const Rank& rank = profile.ranks()[r];
  const ApiCall& c = rank.api_calls[index];
  const auto& launches = ctx.loaded->ranks[r]->launches;
  char tb[32], tb2[32];
  ImGui::BeginTooltip();
  ImGui::TextUnformatted(profile.str(c.name).c_str());
  ImGui::TextDisabled("CUDA %s API call, correlation %lld", to_string(c.kind),
                      static_cast<long long>(c.correlation));
  ImGui::Text("duration %s   start %s",
              duration_text(tb, sizeof tb, static_cast<double>(c.end_ns - c.start_ns)),
              duration_text(tb2, sizeof tb2, static_cast<double>(c.start_ns - profile.first_ns())));
  ImGui::Text("rank %d, thread %lld", rank.rank, static_cast<long long>(rank.thread_of(c).tid));
  const auto launched = launches.activities_of(index);
  if (!launched.empty()) {
    const std::string& first = profile.str(rank.activities[launched[0]].name);
    ImGui::Text("launched %zu GPU activit%s: %.*s%s", launched.size(), launched.size() == 1 ? "y" : "ies",
                static_cast<int>(std::min<std::size_t>(first.size(), 80)), first.c_str(),
                launched.size() > 1 ? ", ..." : "");
  }
  const std::uint32_t op = launches.op_of_api[index];
  if (op != measure::kNoIndex) ImGui::Text("from %s", profile.str(rank.ranges[op].name).c_str());
  ImGui::TextDisabled("click: select it and show its launch flows");
  ImGui::EndTooltip();
}

}  // namespace

void CpuTrackItem::tooltip(const TimelineContext& ctx, const Hover& hover) const {
  const Profile& profile = *ctx.profile;
  const auto r = static_cast<std::size_t>(rank_index_);
  const Rank& rank = profile.ranks()[r];
  if (hover.kind == HoverKind::kLabel) {
    ImGui::SetTooltip("%s: %u range lanes, %u CUDA API lanes\nright-click: pin, move, show or hide threads",
                      label(ctx).c_str(), range_lanes(ctx), api_lanes(ctx));
    return;
  }
  if (hover.event.kind == EventKind::kApiCall) {
    if (hover.kind == HoverKind::kFolded)
      return folded_tooltip(hover.draw, profile.str(rank.api_calls[hover.event.index].name));
    return api_call_tooltip(ctx, r, hover.event.index);
  }
  const CpuRange& c = rank.ranges[hover.event.index];
  if (hover.kind == HoverKind::kFolded) return folded_tooltip(hover.draw, profile.str(c.name));
  char tb[32], tb2[32];
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(profile.str(c.name).c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextDisabled("%s, depth %d, %s", to_string(c.kind), c.depth, profile.str(c.category).c_str());
  ImGui::Text("duration %s   start %s",
              duration_text(tb, sizeof tb, static_cast<double>(c.end_ns - c.start_ns)),
              duration_text(tb2, sizeof tb2, static_cast<double>(c.start_ns - profile.first_ns())));
  ImGui::Text("rank %d, %s", rank.rank, rank.tracks[track_].name.c_str());
  ImGui::TextDisabled("click: select it and show the CUDA calls it made");
  ImGui::EndTooltip();
}

void ThreadStateItem::tooltip(const TimelineContext& ctx, const Hover& hover) const {
  const Profile& profile = *ctx.profile;
  const Rank& rank = profile.ranks()[static_cast<std::size_t>(rank_index_)];
  const OsThread& thread = rank.os_threads[thread_];
  char tb[32], tb2[32];
  if (hover.kind == HoverKind::kLabel) {
    TimeNs on_cpu = 0;
    for (const OnCpu& run : rank.thread_on_cpu(thread_)) on_cpu += run.end_ns - run.start_ns;
    ImGui::SetTooltip(
        "%s (pid %lld, tid %lld)\n%u intervals on a CPU core, %s in all; %u CPU samples\nfrom the OS's "
        "scheduling and sampling (Nsight Systems); right-click: pin, move, show or hide threads",
        label(ctx).c_str(), static_cast<long long>(thread.pid), static_cast<long long>(thread.tid),
        thread.on_cpu_count, duration_text(tb, sizeof tb, static_cast<double>(on_cpu)), thread.sample_count);
    return;
  }
  if (hover.lane == kSampleLane) {
    const CpuSample& sample = rank.thread_samples(thread_)[hover.draw.index];
    ImGui::BeginTooltip();
    if (hover.draw.count > 1)
      ImGui::Text("%u CPU samples in this pixel (zoom in to separate them); the first:", hover.draw.count);
    ImGui::Text("CPU sample at %s%s",
                duration_text(tb, sizeof tb, static_cast<double>(sample.time_ns - profile.first_ns())),
                sample.cpu >= 0 ? fmt::format(" on CPU {}", sample.cpu).c_str() : "");
    const std::string& stack = profile.str(sample.stack);
    if (stack.empty()) {
      ImGui::TextDisabled("no call stack recorded");
    } else {
      // The innermost frames: where the thread was.
      std::size_t shown = 0, at = 0;
      while (at < stack.size() && shown < 24) {
        const std::size_t eol = std::min(stack.find('\n', at), stack.size());
        ImGui::TextUnformatted(stack.data() + at, stack.data() + eol);
        at = eol + 1;
        ++shown;
      }
      if (at < stack.size()) ImGui::TextDisabled("... (outer frames not shown)");
    }
    ImGui::EndTooltip();
    return;
  }
  if (hover.kind == HoverKind::kFolded) {
    const LaneLayout& layout = ctx.loaded->ranks[static_cast<std::size_t>(rank_index_)]->os_threads[thread_];
    return folded_tooltip(hover.draw, "on CPU",
                          busy_of_run(layout, hover.lane, hover.draw.index, hover.draw.count));
  }
  const OnCpu& run = rank.thread_on_cpu(thread_)[hover.draw.index];
  ImGui::BeginTooltip();
  ImGui::Text("on %s for %s", run.cpu >= 0 ? fmt::format("CPU {}", run.cpu).c_str() : "a CPU core",
              duration_text(tb, sizeof tb, static_cast<double>(run.end_ns - run.start_ns)));
  ImGui::Text("start %s",
              duration_text(tb2, sizeof tb2, static_cast<double>(run.start_ns - profile.first_ns())));
  ImGui::TextDisabled("%s: scheduled onto a core (Nsight Systems' thread state \"Running\")",
                      label(ctx).c_str());
  ImGui::EndTooltip();
}

void CpuSectionItem::tooltip(const TimelineContext& ctx, const Hover&) const {
  const bool open = ctx.tl->cpu_open[static_cast<std::size_t>(rank_index_)] != 0;
  ImGui::SetTooltip(
      "click to %s this rank's CPU threads: their ranges (operators, NVTX, annotations) and the "
      "CUDA API calls each thread made",
      open ? "hide" : "show");
}

// [SECTION] Baseline rows
// -------------------------------------------------------------------------------------------

void BaselineItem::tooltip(const TimelineContext&, const Hover& hover) const {
  const Profile& profile = *base_->profile;
  const Rank& rank = profile.ranks()[base_rank_];
  char tb[32], tb2[32];
  if (hover.kind == HoverKind::kLabel && !base_->whatif_edits.empty()) {
    ImGui::SetTooltip(
        "What-if (%s): this run replayed by its dependency graph, rank %d\n(docs/WHATIF.md; File > Close "
        "baseline, or the timeline's Baseline toggle, removes these rows)",
        base_->whatif_edits.c_str(), rank.rank);
    return;
  }
  if (hover.kind == HoverKind::kLabel) {
    ImGui::SetTooltip(
        "Baseline %s, rank %d\ntimes shifted by %s so that its first step starts with this run's\n"
        "(File > Close baseline, or the timeline's Baseline toggle, removes these rows)",
        base_->source.filename().c_str(), rank.rank,
        duration_text(tb, sizeof tb, static_cast<double>(offset_ns_)));
    return;
  }
  if (hover.kind != HoverKind::kBaseline) return;
  const TimeNs origin = rank.steps.empty() ? profile.first_ns() : rank.steps.front().start_ns;
  if (stream_ == kNoRow) {
    const Step& s = rank.steps[hover.draw.index];
    if (hover.draw.count > 1) return folded_tooltip(hover.draw, "Step " + std::to_string(s.number));
    if (const measure::ReplayedStep* w = base_->whatif_step(rank.rank, s.number)) {
      const TimeNs measured = w->measured_ns, replayed = w->replayed_ns;
      ImGui::SetTooltip(
          "What-if step %lld (rank %d), %s\n%s replayed, %s measured (%+.1f %%)\ncritical path: %s",
          static_cast<long long>(s.number), rank.rank, base_->whatif_edits.c_str(),
          duration_text(tb, sizeof tb, static_cast<double>(replayed)),
          duration_text(tb2, sizeof tb2, static_cast<double>(measured)),
          measured > 0 ? 100.0 * static_cast<double>(replayed - measured) / static_cast<double>(measured)
                       : 0.0,
          measure::critical_path_text(*w).c_str());
      return;
    }
    ImGui::SetTooltip("Baseline step %lld (rank %d)\nduration %s, starts %s after the baseline's first step",
                      static_cast<long long>(s.number), rank.rank,
                      duration_text(tb, sizeof tb, static_cast<double>(s.end_ns - s.start_ns)),
                      duration_text(tb2, sizeof tb2, static_cast<double>(s.start_ns - origin)));
    return;
  }
  const GpuStream& stream = rank.streams[stream_];
  const std::uint32_t index = stream.first + hover.draw.index;
  const Activity& a = rank.activities[index];
  if (hover.draw.count > 1) return folded_tooltip(hover.draw, short_name(profile.str(a.name)));
  const auto cls = base_->analysis().ranks[base_rank_].classes[index];
  ImGui::BeginTooltip();
  ImGui::TextColored(
      to_vec4(kColBaseline), "%s %s", base_->baseline_name.c_str(),
      base_->whatif_edits.empty() ? base_->source.filename().c_str() : base_->whatif_edits.c_str());
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(std::string(short_name(profile.str(a.name))).c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextColored(to_vec4(class_color(cls)), "%s, %s", to_string(a.kind), measure::to_string(cls));
  ImGui::Text("duration %s   %s after the baseline's first step",
              duration_text(tb, sizeof tb, static_cast<double>(a.duration())),
              duration_text(tb2, sizeof tb2, static_cast<double>(a.start_ns - origin)));
  ImGui::Text("rank %d, GPU %d, %s", rank.rank, stream.device, stream.name.c_str());
  ImGui::EndTooltip();
}

}  // namespace meshscope::gui
