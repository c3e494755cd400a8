// compare::pipelined_profile: a replayed profile redrawn as the pipeline stages `whatif --pp` cut it into.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analysis/compare/pipeline_stages.hpp"

namespace meshscope::compare {
namespace {

using measure::Interval;

// A stretch of one replayed step: where it goes on one stage (its new start, its time × SCALE), or MINE
// false: another stage's, not drawn on this one.
struct Piece {
  TimeNs from = 0, to = 0;
  std::vector<TimeNs> targets;  // one, or one per micro-batch a measured one was split into
  double scale = 1;
  bool mine = true;
};

// Every piece of every step of one measured rank, as stage STAGE draws it, sorted by FROM; and where each
// step's window starts and its shift (what the earlier steps' pipelines changed).
struct StageMap {
  std::vector<Piece> pieces;
  std::vector<std::pair<TimeNs, TimeNs>> shift_from;  // (replayed time, shift from there on), sorted

  // Where an activity starting at T (lasting LENGTH) is drawn, [start, end) each time: none when another
  // stage holds it.
  std::vector<Interval> place(TimeNs t, TimeNs length) const {
    const auto it = std::upper_bound(pieces.begin(), pieces.end(), t,
                                     [](TimeNs x, const Piece& p) { return x < p.from; });
    if (it != pieces.begin() && t < std::prev(it)->to) {
      const Piece& p = *std::prev(it);
      std::vector<Interval> out;
      if (!p.mine) return out;
      for (const TimeNs target : p.targets) {
        const TimeNs start =
            target + static_cast<TimeNs>(std::llround(static_cast<double>(t - p.from) * p.scale));
        out.push_back(
            {start, start + static_cast<TimeNs>(std::llround(static_cast<double>(length) * p.scale))});
      }
      return out;
    }
    // Outside every step: moved with the steps before it.
    TimeNs shift = 0;
    const auto s = std::upper_bound(shift_from.begin(), shift_from.end(), std::pair{t, TimeNs{0}},
                                    [](const auto& a, const auto& b) { return a.first < b.first; });
    if (s != shift_from.begin()) shift = std::prev(s)->second;
    return {{t + shift, t + shift + length}};
  }
};

TimeNs ns(double seconds) {
  return static_cast<TimeNs>(std::llround(seconds * 1e9));
}

StageMap stage_map(const std::vector<const PipelinedSchedule*>& steps, int stage, int split,
                   const StageShares& shares) {
  StageMap map;
  TimeNs shift = 0;
  const auto s = static_cast<std::size_t>(stage);
  for (const PipelinedSchedule* step : steps) {
    const TimeNs start = step->replayed_start_ns + shift;
    const TimeNs pipeline_at = start + step->before.length();
    map.pieces.push_back({step->before.start,
                          step->before.end,
                          {start + (step->before.start - step->replayed_start_ns)},
                          1,
                          true});
    // Each stage's pieces; this stage's at the times its schedule runs them.
    std::map<std::tuple<bool, int>, double> runs_at;
    for (const model::TimelineEvent& e : step->timeline.events)
      if (e.stage == stage &&
          (e.kind == model::TimelineKind::kForward || e.kind == model::TimelineKind::kBackward))
        runs_at[{e.kind == model::TimelineKind::kForward, e.micro_batch}] = e.start_s;
    for (std::size_t k = 0; k < step->forward.size(); ++k)
      for (const bool forward : {true, false}) {
        const auto& of = forward ? step->forward[k] : step->backward[k];
        for (std::size_t mb = 0; mb < of.size(); ++mb) {
          const measure::Interval& iv = of[mb];
          if (iv.length() <= 0) continue;
          // The micro-batches this measured one became, each where the schedule runs it.
          Piece piece{iv.start, iv.end, {}, 1, k == s};
          for (int part = 0; part < split && piece.mine; ++part) {
            const auto at = runs_at.find({forward, static_cast<int>(mb) * split + part});
            if (at != runs_at.end()) piece.targets.push_back(pipeline_at + ns(at->second));
          }
          piece.mine = piece.mine && !piece.targets.empty();
          map.pieces.push_back(std::move(piece));
        }
      }
    const TimeNs drained = pipeline_at + ns(step->timeline.step_time_s);
    map.pieces.push_back({step->after.start,
                          step->after.end,
                          {drained},
                          s < step->after_scale.size() ? step->after_scale[s] : shares.parameters[s],
                          true});
    TimeNs longest = 0;
    for (const TimeNs t : step->predicted_ns) longest = std::max(longest, t);
    shift += longest - step->replayed_ns;
    map.shift_from.emplace_back(step->replayed_start_ns + step->replayed_ns, shift);
  }
  std::erase_if(map.pieces, [](const Piece& p) { return p.to <= p.from; });
  std::stable_sort(map.pieces.begin(), map.pieces.end(),
                   [](const Piece& a, const Piece& b) { return a.from < b.from; });
  return map;
}

// A string's id in STRINGS (its index), added at the end when new.
StringId intern(std::vector<std::string>& strings, std::unordered_map<std::string, StringId>& ids,
                const std::string& text) {
  if (ids.empty())
    for (std::size_t k = 0; k < strings.size(); ++k) ids.try_emplace(strings[k], static_cast<StringId>(k));
  auto [it, added] = ids.try_emplace(text, static_cast<StringId>(strings.size()));
  if (added) strings.push_back(text);
  return it->second;
}

// Stage STAGE of measured rank MEASURED (the replayed rank), as the pipeline runs it.
std::shared_ptr<Rank> stage_rank(const Rank& measured, const std::vector<const PipelinedSchedule*>& steps,
                                 int stage, int split, std::int32_t number, const StageShares& shares,
                                 std::vector<std::string>& strings,
                                 std::unordered_map<std::string, StringId>& ids) {
  const StageMap map = stage_map(steps, stage, split, shares);
  auto r = std::make_shared<Rank>();
  r->rank = number;
  r->world_size = kNull;
  r->hostname = measured.hostname;
  r->source_file = measured.source_file;
  r->rank_source = fmt::format("stage {} of rank {} (whatif --pp)", stage, measured.rank);
  r->devices = measured.devices;
  r->kernels = measured.kernels;
  r->copies = measured.copies;
  std::int64_t next_id = 1;
  for (const Activity& a : measured.activities) next_id = std::max(next_id, a.id + 1);
  // Each stream's kept activities, then the sends on a stream of their own.
  for (std::size_t si = 0; si < measured.streams.size(); ++si) {
    GpuStream stream = measured.streams[si];
    const auto first = static_cast<std::uint32_t>(r->activities.size());
    // The gradients' work a --dp edit added (its all-reduces on their own stream, DDP's copies) runs once per
    // step, not once per micro-batch a measured one became: drawn at its first place only.
    const bool once_per_step = stream.name == "added by the what-if";
    for (const Activity& a : measured.stream_activities(si)) {
      if (a.kind == ActivityKind::kSync) continue;
      const bool once = once_per_step || std::string_view(strings[a.name]).starts_with("DDP: ");
      for (const Interval& at : map.place(a.start_ns, a.duration())) {
        Activity b = a;
        b.start_ns = at.start, b.end_ns = at.end, b.collective = -1;
        r->activities.push_back(b);
        if (once) break;
      }
    }
    std::stable_sort(r->activities.begin() + first, r->activities.end(),
                     [](const Activity& x, const Activity& y) { return x.start_ns < y.start_ns; });
    stream.first = first;
    stream.count = static_cast<std::uint32_t>(r->activities.size()) - first;
    if (stream.count > 0) r->streams.push_back(std::move(stream));
  }
  GpuStream sends{measured.streams.empty() ? 0 : measured.streams.back().device, 0,
                  "pipeline sends (added by the what-if)", static_cast<std::uint32_t>(r->activities.size()),
                  0};
  for (const GpuStream& s : measured.streams)
    if (s.device == sends.device) sends.stream = std::max(sends.stream, s.stream + 1);
  TimeNs shift = 0;
  for (const PipelinedSchedule* step : steps) {
    const TimeNs pipeline_at = step->replayed_start_ns + shift + step->before.length();
    for (const model::TimelineEvent& e : step->timeline.events) {
      if (e.stage != stage || e.kind != model::TimelineKind::kSend) continue;
      Activity a{};
      a.start_ns = pipeline_at + ns(e.start_s);
      a.end_ns = a.start_ns + ns(e.duration_s);
      a.id = next_id++;
      a.correlation = kNull;
      a.name = intern(strings, ids,
                      fmt::format("ncclDevKernel_SendRecv (added: pp send, micro-batch {})", e.micro_batch));
      a.collective = -1;
      a.detail = kNoDetail;
      a.kind = ActivityKind::kKernel;
      r->activities.push_back(a);
    }
    TimeNs longest = 0;
    for (const TimeNs t : step->predicted_ns) longest = std::max(longest, t);
    // The step as this stage ends it: the replayed step of its number that starts nearest its window (numbers
    // may repeat).
    const Step* of = nullptr;
    for (const Step& s : measured.steps)
      if (s.number == step->step && (!of || std::llabs(s.start_ns - step->replayed_start_ns) <
                                                std::llabs(of->start_ns - step->replayed_start_ns)))
        of = &s;
    if (of) {
      Step moved = *of;
      moved.start_ns = step->replayed_start_ns + shift;
      moved.end_ns = moved.start_ns + step->predicted_ns[static_cast<std::size_t>(stage)];
      r->steps.push_back(moved);
    }
    shift += longest - step->replayed_ns;
  }
  sends.count = static_cast<std::uint32_t>(r->activities.size()) - sends.first;
  if (sends.count > 0) r->streams.push_back(std::move(sends));
  std::stable_sort(r->streams.begin(), r->streams.end(), [](const GpuStream& a, const GpuStream& b) {
    return std::tie(a.device, a.stream) < std::tie(b.device, b.stream);
  });
  // Activities grouped in the streams' order.
  std::vector<Activity> grouped;
  grouped.reserve(r->activities.size());
  for (GpuStream& s : r->streams) {
    const auto first = static_cast<std::uint32_t>(grouped.size());
    grouped.insert(grouped.end(), r->activities.begin() + s.first, r->activities.begin() + s.first + s.count);
    s.first = first;
  }
  r->activities = std::move(grouped);
  std::stable_sort(r->steps.begin(), r->steps.end(),
                   [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  TimeNs first = std::numeric_limits<TimeNs>::max(), last = std::numeric_limits<TimeNs>::min();
  for (const Activity& a : r->activities)
    first = std::min(first, a.start_ns), last = std::max(last, a.end_ns);
  if (!r->activities.empty()) r->gpu_first_ns = first, r->gpu_last_ns = last;
  for (const Step& s : r->steps) first = std::min(first, s.start_ns), last = std::max(last, s.end_ns);
  if (first <= last) r->first_ns = first, r->last_ns = last;
  return r;
}

}  // namespace

Profile pipelined_profile(const Profile& replayed, const Pipelined& pipelined, const StageShares& shares) {
  const auto& ranks = replayed.ranks();
  auto strings = std::make_shared<std::vector<std::string>>(replayed.strings() ? *replayed.strings()
                                                                               : std::vector<std::string>{});
  std::unordered_map<std::string, StringId> ids;
  std::vector<std::vector<const PipelinedSchedule*>> steps(ranks.size());
  for (const PipelinedSchedule& s : pipelined.schedules)
    if (s.rank_index < steps.size()) steps[s.rank_index].push_back(&s);
  const std::int32_t world = pipelined.world;
  std::vector<std::shared_ptr<const Rank>> out;
  for (std::size_t ri = 0; ri < ranks.size(); ++ri) {
    std::stable_sort(steps[ri].begin(), steps[ri].end(),
                     [](const PipelinedSchedule* a, const PipelinedSchedule* b) {
                       return a->replayed_start_ns < b->replayed_start_ns;
                     });
    for (int s = 0; s < pipelined.stages; ++s)
      out.push_back(stage_rank(ranks[ri], steps[ri], s, pipelined.micro_batch_split,
                               s * world + ranks[ri].rank, shares, *strings, ids));
  }
  return replayed.with_rank_list(std::move(out), strings);
}

std::vector<measure::ReplayedStep> pipelined_steps(const Pipelined& pipelined) {
  std::vector<measure::ReplayedStep> out;
  for (const PipelinedStep& s : pipelined.steps) {
    measure::ReplayedStep r;
    r.rank = s.rank;
    r.step = s.step;
    r.measured_ns = s.measured_ns;
    r.replayed_ns = s.predicted_ns;
    out.push_back(r);
  }
  return out;
}

}  // namespace meshscope::compare
