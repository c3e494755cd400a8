#include "analysis/measure/range_totals.hpp"

#include <algorithm>
#include <unordered_map>

namespace meshscope::measure {

RangeIndex index_ranges(const Profile& profile) {
  RangeIndex index;
  index.stream_max_ns.resize(profile.ranks().size());
  for (std::size_t r = 0; r < profile.ranks().size(); ++r) {
    const Rank& rank = profile.ranks()[r];
    auto& max_ns = index.stream_max_ns[r];
    max_ns.assign(rank.streams.size(), 0);
    for (std::size_t s = 0; s < rank.streams.size(); ++s) {
      for (const Activity& a : rank.stream_activities(s)) max_ns[s] = std::max(max_ns[s], a.duration());
    }
  }
  return index;
}

namespace {

struct Workspace {
  std::array<std::vector<Interval>, kClassCount> runs;
  std::array<std::vector<std::size_t>, kClassCount> bounds;
  std::vector<Interval> scratch, busy, tmp;
  std::unordered_map<std::uint64_t, std::size_t> kernel_at;  // (name, class) -> index into kernels
  std::unordered_map<StringId, std::size_t> operator_at;     // operator name -> index into operators
};

// One rank's totals inside [start, end); adds its activities to TOTALS' classes and kernels.
RangeRankTotal rank_totals(const Profile& profile, const Analysis& analysis, const RangeIndex& index,
                           std::size_t r, TimeNs start, TimeNs end, RangeTotals& totals, Workspace& ws,
                           const LaunchIndex* launches) {
  const Rank& rank = profile.ranks()[r];
  const auto& classes = analysis.ranks[r].classes;
  RangeRankTotal out;
  out.rank_index = r;
  out.rank = rank.rank;
  for (int c = 0; c < kClassCount; ++c) {
    ws.runs[static_cast<std::size_t>(c)].clear();
    ws.bounds[static_cast<std::size_t>(c)].assign(1, 0);
  }
  for (std::size_t s = 0; s < rank.streams.size(); ++s) {
    const auto events = rank.stream_activities(s);
    const TimeNs reach = start - index.stream_max_ns[r][s];
    auto it = std::partition_point(events.begin(), events.end(),
                                   [&](const Activity& a) { return a.start_ns < reach; });
    for (; it != events.end() && it->start_ns < end; ++it) {
      const Interval clipped{std::max(it->start_ns, start), std::min(it->end_ns, end)};
      if (clipped.end <= clipped.start) continue;
      const auto i = static_cast<std::size_t>(rank.streams[s].first + (it - events.begin()));
      const ActivityClass cls = classes[i];
      const auto c = static_cast<std::size_t>(cls);
      // Union within this stream's run only (the runs of earlier streams end at bounds[c].back()).
      auto& run = ws.runs[c];
      if (run.size() > ws.bounds[c].back() && clipped.start <= run.back().end)
        run.back().end = std::max(run.back().end, clipped.end);
      else
        run.push_back(clipped);
      auto& ct = totals.classes[c];
      ++ct.events;
      ct.sum_ns += clipped.length();
      ++out.events;
      const std::uint64_t key = (static_cast<std::uint64_t>(it->name) << 8) | c;
      auto [at, inserted] = ws.kernel_at.try_emplace(key, totals.kernels.size());
      if (inserted) totals.kernels.push_back({it->name, cls, 0, 0, 0});
      auto& k = totals.kernels[at->second];
      ++k.count;
      k.total_ns += clipped.length();
      k.max_ns = std::max(k.max_ns, clipped.length());
      if (launches && i < launches->api_of_activity.size()) {
        const std::uint32_t api = launches->api_of_activity[i];
        const std::uint32_t op =
            api == kNoIndex || api >= launches->op_of_api.size() ? kNoIndex : launches->op_of_api[api];
        const StringId name = op == kNoIndex || op >= rank.ranges.size() ? kNoString : rank.ranges[op].name;
        auto [o, added] = ws.operator_at.try_emplace(name, totals.operators.size());
        if (added) totals.operators.push_back({name, 0, 0, 0});
        auto& ot = totals.operators[o->second];
        ++ot.count;
        ot.total_ns += clipped.length();
        ot.max_ns = std::max(ot.max_ns, clipped.length());
      }
    }
    for (int c = 0; c < kClassCount; ++c) {
      ws.bounds[static_cast<std::size_t>(c)].push_back(ws.runs[static_cast<std::size_t>(c)].size());
    }
  }
  for (int c = 0; c < kClassCount; ++c) {
    const auto k = static_cast<std::size_t>(c);
    merge_disjoint_runs(ws.runs[k], ws.bounds[k], ws.scratch);
    totals.classes[k].busy_ns += total_length(ws.runs[k]);
  }
  const auto& compute = ws.runs[static_cast<std::size_t>(ActivityClass::kCompute)];
  const auto& comm = ws.runs[static_cast<std::size_t>(ActivityClass::kComm)];
  const auto& memory = ws.runs[static_cast<std::size_t>(ActivityClass::kMemory)];
  out.compute_ns = total_length(compute);
  out.comm_ns = total_length(comm);
  out.memory_ns = total_length(memory);
  out.overlap_ns = intersection_length(comm, compute);
  out.exposed_comm_ns = out.comm_ns - out.overlap_ns;
  union_of(compute, comm, ws.tmp);
  union_of(ws.tmp, memory, ws.busy);
  out.busy_ns = total_length(ws.busy);
  if (rank.gpu_last_ns > rank.gpu_first_ns) {
    out.window_ns = std::max<TimeNs>(0, std::min(end, rank.gpu_last_ns) - std::max(start, rank.gpu_first_ns));
  }
  out.idle_ns = std::max<TimeNs>(0, out.window_ns - out.busy_ns);
  return out;
}

}  // namespace

RangeTotals range_totals(const Profile& profile, const Analysis& analysis, const RangeIndex& index,
                         TimeNs start, TimeNs end, const std::atomic<bool>* cancel,
                         const std::vector<const LaunchIndex*>* launches) {
  RangeTotals totals;
  totals.start_ns = start;
  totals.end_ns = end;
  if (end <= start) return totals;
  Workspace ws;
  totals.ranks.reserve(profile.ranks().size());
  for (std::size_t r = 0; r < profile.ranks().size(); ++r) {
    if (cancel && cancel->load(std::memory_order_relaxed)) {
      totals.cancelled = true;
      return totals;
    }
    const LaunchIndex* rank_launches = launches && r < launches->size() ? (*launches)[r] : nullptr;
    totals.ranks.push_back(rank_totals(profile, analysis, index, r, start, end, totals, ws, rank_launches));
    totals.exposed_comm_ns += totals.ranks.back().exposed_comm_ns;
    totals.events += totals.ranks.back().events;
  }
  std::sort(totals.kernels.begin(), totals.kernels.end(),
            [](const RangeKernelTotal& a, const RangeKernelTotal& b) { return a.total_ns > b.total_ns; });
  std::sort(totals.operators.begin(), totals.operators.end(),
            [](const RangeOperatorTotal& a, const RangeOperatorTotal& b) { return a.total_ns > b.total_ns; });
  return totals;
}

}  // namespace meshscope::measure
