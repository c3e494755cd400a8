#include "analysis/measure/launch_queue.hpp"

#include "profiler/vocabulary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/measure/intervals.hpp"
#include "profiler/parallel.hpp"

namespace meshscope::measure {
namespace {

constexpr TimeNs kMinTime = std::numeric_limits<TimeNs>::min();

int bucket_of(TimeNs ns) {
  if (ns < 0) return 0;
  if (ns < 1000) return 1;
  int k = 2;
  TimeNs upper = 2000;  // bucket 2 is [1, 2) µs
  while (ns >= upper && k < LatencyStats::kBuckets - 1) {
    upper *= 2;
    ++k;
  }
  return k;
}

LatencyStats stats_of(std::vector<TimeNs>& values) {
  LatencyStats s;
  s.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) return s;
  s.min_ns = *std::min_element(values.begin(), values.end());
  s.max_ns = *std::max_element(values.begin(), values.end());
  long double sum = 0;
  for (TimeNs v : values) {
    sum += static_cast<long double>(v);
    ++s.histogram[static_cast<std::size_t>(bucket_of(v))];
  }
  s.mean_ns =
      static_cast<TimeNs>(std::llround(static_cast<double>(sum / static_cast<long double>(values.size()))));
  s.p50_ns = nearest_rank(values, 0.50);
  s.p90_ns = nearest_rank(values, 0.90);
  s.p99_ns = nearest_rank(values, 0.99);
  return s;
}

void sort_ops(std::vector<OpHostBound>& ops) {
  std::sort(ops.begin(), ops.end(), [](const OpHostBound& a, const OpHostBound& b) {
    return a.gap_ns != b.gap_ns ? a.gap_ns > b.gap_ns : a.name < b.name;
  });
}

struct QueueEvent {
  TimeNs time;
  std::int32_t delta;
};

bool event_less(const QueueEvent& a, const QueueEvent& b) {
  return a.time != b.time ? a.time < b.time : a.delta < b.delta;
}

// The queue events of one stream: +1 when its launch call starts (never after the activity starts), -1 at
// its end; sorted with ends before launches at equal times. Both runs come nearly sorted from the stream's
// start order, so each is sorted only when it is not, and the two are merged in linear time.
void queue_events(const Rank& rank, const LaunchIndex& index, std::uint32_t stream,
                  std::vector<QueueEvent>& out) {
  thread_local std::vector<QueueEvent> launches, ends;
  launches.clear();
  ends.clear();
  const GpuStream& st = rank.streams[stream];
  for (std::uint32_t i = st.first; i < st.first + st.count; ++i) {
    const Activity& a = rank.activities[i];
    const std::uint32_t api = index.api_of_activity[i];
    if (a.kind == ActivityKind::kSync || api == kNoIndex) continue;
    launches.push_back({std::min(rank.api_calls[api].start_ns, a.start_ns), +1});
    ends.push_back({a.end_ns, -1});
  }
  for (auto* run : {&launches, &ends}) {
    if (!std::is_sorted(run->begin(), run->end(), event_less))
      std::sort(run->begin(), run->end(), event_less);
  }
  out.resize(launches.size() + ends.size());
  std::merge(ends.begin(), ends.end(), launches.begin(), launches.end(), out.begin(), event_less);
}

}  // namespace

TimeNs LatencyStats::bucket_start_ns(int k) {
  if (k <= 0) return std::numeric_limits<TimeNs>::min();
  if (k == 1) return 0;
  return TimeNs{1000} << (k - 2);
}

std::vector<QueuePoint> queue_length(const Rank& rank, const LaunchIndex& index, std::uint32_t stream) {
  std::vector<QueueEvent> events;
  queue_events(rank, index, stream, events);
  std::vector<QueuePoint> out;
  std::int32_t length = 0;
  for (std::size_t i = 0; i < events.size();) {
    const TimeNs t = events[i].time;
    while (i < events.size() && events[i].time == t) length += events[i++].delta;
    if (out.empty() || out.back().length != length) out.push_back({t, length});
  }
  return out;
}

namespace {

// One rank; LATENCY and DRY receive the raw latencies (for the profile-wide distribution).
// The busy time of each device of RANK: the union of its streams' activities (sync records excluded), by
// device.
std::map<std::int32_t, std::vector<Interval>> device_busy(const Rank& rank) {
  std::map<std::int32_t, std::vector<Interval>> out;
  std::vector<Interval> stream, merged;
  for (const GpuStream& st : rank.streams) {
    stream.clear();
    for (std::uint32_t i = st.first; i < st.first + st.count; ++i) {
      const Activity& a = rank.activities[i];
      if (a.kind != ActivityKind::kSync && a.end_ns > a.start_ns) stream.push_back({a.start_ns, a.end_ns});
    }
    std::vector<Interval> own;
    union_sorted(stream, own);
    std::vector<Interval>& busy = out[st.device];
    union_of(busy, own, merged);
    busy.swap(merged);
  }
  return out;
}

// When ACTIVITY_START begins one of BUSY's intervals (disjoint, sorted) after an earlier one, and the launch
// call started after that earlier interval ended, the device had run dry: returns the idle time between them
// and marks the interval CLAIMED so that one idle period counts for one launch only; else 0. STREAM_END, the
// end of the stream's earlier work, bounds the period too (zero-length activities are in no busy interval).
TimeNs device_dry(const std::vector<Interval>& busy, std::vector<std::uint8_t>& claimed,
                  TimeNs activity_start, TimeNs call_start, TimeNs stream_end) {
  const auto it = std::lower_bound(busy.begin(), busy.end(), activity_start,
                                   [](const Interval& iv, TimeNs t) { return iv.start < t; });
  if (it == busy.begin() || it == busy.end() || it->start != activity_start) return 0;
  const auto k = static_cast<std::size_t>(it - busy.begin());
  const TimeNs dry_since = std::max((it - 1)->end, stream_end);
  if (claimed[k] != 0 || call_start <= dry_since) return 0;
  claimed[k] = 1;
  return activity_start - dry_since;
}

// The OS runtime calls of each CPU track of RANK (indices into Rank::ranges, by start) with the latest end so
// far at each, so that the calls overlapping a window are found by binary search; empty without any.
struct TrackOsCalls {
  std::vector<std::uint32_t> calls;
  std::vector<TimeNs> end_so_far;
};
std::vector<TrackOsCalls> os_calls_by_track(const Rank& rank) {
  std::vector<TrackOsCalls> out;
  for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
    const CpuTrack& t = rank.tracks[k];
    for (std::uint32_t i = t.first; i < t.first + t.count; ++i) {
      const CpuRange& c = rank.ranges[i];
      if (c.kind != RangeKind::kOsRuntime) continue;
      if (out.empty()) out.resize(rank.tracks.size());
      TrackOsCalls& calls = out[k];
      calls.end_so_far.push_back(calls.calls.empty() ? c.end_ns
                                                     : std::max(calls.end_so_far.back(), c.end_ns));
      calls.calls.push_back(i);
    }
  }
  return out;
}

TimeNs overlap(TimeNs a0, TimeNs a1, TimeNs b0, TimeNs b1) {
  return std::max<TimeNs>(0, std::min(a1, b1) - std::max(a0, b0));
}

// What the thread of launch call API did in [FROM, TO), before the call, while its stream sat dry.
void thread_while_dry(const Rank& rank, const LaunchIndex& index, const std::vector<TrackOsCalls>& os_calls,
                      std::uint32_t api, TimeNs from, TimeNs to, HostBoundLaunch& h) {
  const LaunchIndex::Thread& thread = index.threads[index.thread_of_api[api]];
  if (thread.track != kNoIndex && thread.track < os_calls.size()) {
    const TrackOsCalls& calls = os_calls[thread.track];
    auto k = static_cast<std::size_t>(
        std::upper_bound(calls.end_so_far.begin(), calls.end_so_far.end(), from) - calls.end_so_far.begin());
    std::vector<Interval> inside;
    for (; k < calls.calls.size(); ++k) {
      const CpuRange& c = rank.ranges[calls.calls[k]];
      if (c.start_ns >= to) break;
      const TimeNs o = overlap(c.start_ns, c.end_ns, from, to);
      if (o <= 0) continue;
      inside.push_back({std::max(c.start_ns, from), std::min(c.end_ns, to)});
      if (o > h.os_call_ns) {
        h.os_call_ns = o;
        h.os_call = calls.calls[k];
      }
    }
    std::vector<Interval> merged;
    union_sorted(inside, merged);
    for (const Interval& iv : merged) h.os_calls_total_ns += iv.end - iv.start;
  }
  const std::int64_t os_thread = rank.os_thread_of(thread.pid, thread.tid);
  if (os_thread < 0 || rank.os_threads[static_cast<std::size_t>(os_thread)].on_cpu_count == 0) return;
  const auto runs = rank.thread_on_cpu(static_cast<std::size_t>(os_thread));
  auto it =
      std::upper_bound(runs.begin(), runs.end(), from, [](TimeNs t, const OnCpu& r) { return t < r.end_ns; });
  TimeNs on = 0;
  for (; it != runs.end() && it->start_ns < to; ++it) on += overlap(it->start_ns, it->end_ns, from, to);
  h.off_cpu_ns = std::max<TimeNs>(0, (to - from) - on);
}

RankLaunches rank_launches(const Rank& rank, const LaunchIndex& index, std::vector<TimeNs>& latency,
                           std::vector<TimeNs>& dry) {
  RankLaunches out;
  out.rank = rank.rank;
  const auto busy = device_busy(rank);
  std::map<std::int32_t, std::vector<std::uint8_t>> claimed;
  for (const auto& [device, intervals] : busy) claimed[device].assign(intervals.size(), 0);
  std::unordered_map<StringId, std::size_t> op_at;
  std::vector<QueueEvent> events;
  const std::vector<TrackOsCalls> os_calls = os_calls_by_track(rank);
  out.streams.resize(rank.streams.size());
  for (std::uint32_t s = 0; s < rank.streams.size(); ++s) {
    const GpuStream& st = rank.streams[s];
    TimeNs cursor = kMinTime;  // the latest end of the stream's earlier activities
    for (std::uint32_t i = st.first; i < st.first + st.count; ++i) {
      const Activity& a = rank.activities[i];
      if (a.kind == ActivityKind::kSync) continue;
      ++out.activities;
      const std::uint32_t api = index.api_of_activity[i];
      if (api != kNoIndex) {
        ++out.linked;
        const ApiCall& call = rank.api_calls[api];
        latency.push_back(a.start_ns - call.end_ns);
        const bool empty = cursor == kMinTime || call.start_ns >= cursor;
        if (empty) dry.push_back(a.start_ns - call.end_ns);
        if (cursor != kMinTime && call.start_ns > cursor && a.start_ns > cursor) {
          HostBoundLaunch h;
          h.activity = i;
          h.api = api;
          h.op = index.op_of_api[api];
          h.gap_ns = a.start_ns - cursor;
          h.launched_after_dry_ns = call.start_ns - cursor;
          h.device_idle_ns =
              device_dry(busy.at(st.device), claimed.at(st.device), a.start_ns, call.start_ns, cursor);
          thread_while_dry(rank, index, os_calls, api, cursor, call.start_ns, h);
          out.host_bound_in_os_calls_ns += h.os_calls_total_ns;
          if (h.off_cpu_ns >= 0) {
            out.host_bound_off_cpu_ns += h.off_cpu_ns;
            ++out.host_bound_scheduled;
          }
          out.host_bound.push_back(h);
          out.host_bound_ns += h.gap_ns;
          out.device_idle_ns += h.device_idle_ns;
          if (h.device_idle_ns > 0) ++out.device_dry_launches;
          const StringId name = h.op != kNoIndex ? rank.ranges[h.op].name : kNoString;
          auto [it, inserted] = op_at.try_emplace(name, out.host_bound_ops.size());
          if (inserted) out.host_bound_ops.push_back({name, 0, 0, 0});
          ++out.host_bound_ops[it->second].launches;
          out.host_bound_ops[it->second].gap_ns += h.gap_ns;
          out.host_bound_ops[it->second].device_idle_ns += h.device_idle_ns;
        }
      }
      cursor = std::max(cursor, a.end_ns);
    }

    // Queue length over time: maximum, time-weighted mean, empty time.
    StreamQueue& q = out.streams[s];
    q.stream_index = s;
    queue_events(rank, index, s, events);
    q.launches = static_cast<std::int64_t>(events.size() / 2);
    if (events.empty()) continue;
    std::int32_t length = 0;
    long double weighted = 0;
    TimeNs last = events.front().time;
    for (const QueueEvent& e : events) {
      const TimeNs dt = e.time - last;
      weighted += static_cast<long double>(dt) * length;
      if (length == 0) q.empty_ns += dt;
      length += e.delta;
      q.max_length = std::max(q.max_length, length);
      last = e.time;
    }
    q.span_ns = events.back().time - events.front().time;
    q.mean_length = q.span_ns > 0 ? static_cast<double>(weighted / static_cast<long double>(q.span_ns)) : 0.0;
  }
  std::sort(out.host_bound.begin(), out.host_bound.end(),
            [&](const HostBoundLaunch& a, const HostBoundLaunch& b) {
              return rank.activities[a.activity].start_ns < rank.activities[b.activity].start_ns;
            });
  sort_ops(out.host_bound_ops);
  std::vector<TimeNs> copy = latency;
  out.latency = stats_of(copy);
  copy = dry;
  out.dry_latency = stats_of(copy);
  return out;
}

}  // namespace

std::vector<OpHostBound> by_operator(const Profile& profile, const std::vector<OpHostBound>& ops) {
  std::vector<OpHostBound> out;
  std::unordered_map<std::string_view, std::size_t> at;
  for (const OpHostBound& op : ops) {
    const std::string_view key =
        op.name == kNoString ? std::string_view() : vocabulary::operator_name(profile.str(op.name));
    auto [it, inserted] = at.try_emplace(key, out.size());
    if (inserted) {
      out.push_back(op);
      continue;
    }
    OpHostBound& merged = out[it->second];
    merged.launches += op.launches;
    merged.gap_ns += op.gap_ns;
    merged.device_idle_ns += op.device_idle_ns;
  }
  sort_ops(out);
  return out;
}

RankLaunches analyze_rank_launches(const Rank& rank, const LaunchIndex& index) {
  std::vector<TimeNs> latency, dry;
  return rank_launches(rank, index, latency, dry);
}

RankLaunchPart launch_part(const Rank& rank, std::size_t rank_index) {
  RankLaunchPart part;
  const LaunchIndex index = index_launches(rank);
  part.launches = rank_launches(rank, index, part.latency, part.dry_latency);
  part.launches.rank_index = rank_index;
  return part;
}

std::vector<HostBoundRow> longest_host_bound(const Rank& rank, const RankLaunches& launches,
                                             std::size_t top) {
  std::vector<const HostBoundLaunch*> longest;
  longest.reserve(launches.host_bound.size());
  for (const auto& h : launches.host_bound) longest.push_back(&h);
  std::stable_sort(longest.begin(), longest.end(),
                   [](const auto* x, const auto* y) { return x->gap_ns > y->gap_ns; });
  if (longest.size() > top) longest.resize(top);
  std::vector<HostBoundRow> rows;
  for (const HostBoundLaunch* h : longest) {
    const Activity& act = rank.activities[h->activity];
    // Rank::streams hold their activities contiguously, in order.
    const auto st = std::upper_bound(rank.streams.begin(), rank.streams.end(), h->activity,
                                     [](std::uint32_t i, const GpuStream& g) { return i < g.first; }) -
                    1;
    HostBoundRow row;
    row.kernel = act.name;
    row.launch = rank.api_calls[h->api].name;
    row.has_op = h->op != kNoIndex;
    if (row.has_op) row.op = rank.ranges[h->op].name;
    row.device = st->device;
    row.stream = st->stream;
    row.start_ns = act.start_ns;
    row.gap_ns = h->gap_ns;
    row.launched_after_dry_ns = h->launched_after_dry_ns;
    row.device_idle_ns = h->device_idle_ns;
    if (h->os_call != kNoIndex) row.os_call = rank.ranges[h->os_call].name;
    row.os_call_ns = h->os_call_ns;
    row.off_cpu_ns = h->off_cpu_ns;
    rows.push_back(row);
  }
  return rows;
}

LaunchAnalysis analyze_launches(const Profile& profile, unsigned threads) {
  const auto& ranks = profile.ranks();
  std::vector<RankLaunchPart> parts(ranks.size());
  parallel_for(ranks.size(), threads, [&](std::size_t ri) { parts[ri] = launch_part(ranks[ri], ri); });
  return combine_launches(std::move(parts));
}

LaunchAnalysis combine_launches(std::vector<RankLaunchPart> parts) {
  LaunchAnalysis result;
  result.ranks.reserve(parts.size());
  std::size_t latencies = 0, dry_latencies = 0;
  for (const RankLaunchPart& p : parts) {
    latencies += p.latency.size();
    dry_latencies += p.dry_latency.size();
  }
  std::vector<TimeNs> latency, dry;
  latency.reserve(latencies);
  dry.reserve(dry_latencies);
  std::unordered_map<StringId, std::size_t> op_at;
  for (RankLaunchPart& part : parts) {
    latency.insert(latency.end(), part.latency.begin(), part.latency.end());
    dry.insert(dry.end(), part.dry_latency.begin(), part.dry_latency.end());
    std::vector<TimeNs>().swap(part.latency);
    std::vector<TimeNs>().swap(part.dry_latency);
    const RankLaunches& rl = result.ranks.emplace_back(std::move(part.launches));
    for (const OpHostBound& op : rl.host_bound_ops) {
      // String ids are per profile, so names from different ranks share ids.
      auto [it, inserted] = op_at.try_emplace(op.name, result.host_bound_ops.size());
      if (inserted) result.host_bound_ops.push_back({op.name, 0, 0, 0});
      result.host_bound_ops[it->second].launches += op.launches;
      result.host_bound_ops[it->second].gap_ns += op.gap_ns;
      result.host_bound_ops[it->second].device_idle_ns += op.device_idle_ns;
    }
    if (rl.activities > 0 && rl.linked == 0) {
      result.notes.push_back(
          fmt::format("rank {}: no GPU activity has its launch call in the profile (no correlation ids): no "
                      "launch latency, "
                      "queue length or host-bound launches",
                      rl.rank));
    } else if (rl.linked < rl.activities) {
      result.notes.push_back(
          fmt::format("rank {}: {} of {} GPU activities have no launch call in the profile and "
                      "are left out of the launch and queue figures",
                      rl.rank, rl.activities - rl.linked, rl.activities));
    }
  }
  sort_ops(result.host_bound_ops);
  result.latency = stats_of(latency);
  result.dry_latency = stats_of(dry);
  return result;
}

}  // namespace meshscope::measure
