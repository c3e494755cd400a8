// Rows → events: what a load scanned (from a profile's tables or from records) attached to its ranks, each
// list sorted as the analyses expect (profile_load.hpp).
#include <malloc.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/profile_load.hpp"
#include "profiler/vocabulary.hpp"

namespace meshscope::load {

std::int32_t to_i32(std::int64_t value) {
  if (value == kNull) return -1;
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(value, INT32_MIN, INT32_MAX));
}

Rank& rank_slot(std::vector<Rank>& ranks, std::map<std::int32_t, std::size_t>& index, std::int32_t rank) {
  auto it = index.find(rank);
  if (it != index.end()) return ranks[it->second];
  index.emplace(rank, ranks.size());
  ranks.emplace_back();
  ranks.back().rank = rank;
  return ranks.back();
}

// The per-stream and per-track lists were filled on the reading threads, whose heaps (malloc arenas) the
// loading thread does not reuse: as their rows are copied into each rank's vectors, the freed lists are given
// back to the system every so often, so the load does not hold the events twice.
class ReleaseFreed {
 public:
  void freed(std::size_t bytes) {
    since_ += bytes;
    if (since_ < kEvery) return;
    ::malloc_trim(0);
    since_ = 0;
  }

 private:
  static constexpr std::size_t kEvery = 128u << 20;
  std::size_t since_ = 0;
};

// GPU activities, flattened stream by stream, with each rank's GPU span.
void attach_activities(ActivityScan& activities, const StreamNames& stream_names, RankSlots& ranks) {
  // Each rank's streams are appended into one vector: sized once, and each stream's bucket freed as it is
  // copied, so the load never holds the activities twice.
  std::map<std::int32_t, std::size_t> per_rank;
  for (const auto& [key, bucket] : activities.buckets) per_rank[std::get<0>(key)] += bucket.size();
  ReleaseFreed release;
  for (auto& [key, bucket] : activities.buckets) {
    Rank& r = ranks.slot(std::get<0>(key));
    GpuStream stream{std::get<1>(key),
                     std::get<2>(key),
                     {},
                     static_cast<std::uint32_t>(r.activities.size()),
                     static_cast<std::uint32_t>(bucket.size())};
    auto name = stream_names.find(key);
    stream.name = name != stream_names.end() && !name->second.empty()
                      ? name->second
                      : fmt::format("stream {}", std::get<2>(key));
    r.streams.push_back(std::move(stream));
    const std::size_t total = per_rank[std::get<0>(key)];
    if (r.activities.empty() && bucket.size() == total) {
      r.activities = std::move(bucket);
    } else {
      if (r.activities.capacity() < total) r.activities.reserve(total);
      r.activities.insert(r.activities.end(), bucket.begin(), bucket.end());
      release.freed(bucket.capacity() * sizeof(Activity));
    }
    std::vector<Activity>().swap(bucket);
  }
  for (auto& [rank, list] : activities.kernels) ranks.slot(rank).kernels = std::move(list);
  for (auto& [rank, list] : activities.copies) ranks.slot(rank).copies = std::move(list);
  for (auto& r : ranks.ranks) {
    bool any = false;
    for (const auto& a : r.activities) {
      if (!any || a.start_ns < r.gpu_first_ns) r.gpu_first_ns = a.start_ns;
      if (!any || a.end_ns > r.gpu_last_ns) r.gpu_last_ns = a.end_ns;
      any = true;
    }
  }
}

// Collectives, linked to their kernels.
void attach_collectives(std::vector<CollectiveRow>& collective_rows, RankSlots& ranks) {
  for (const auto& row : collective_rows) ranks.slot(row.rank);
  std::vector<std::unordered_map<std::int64_t, std::pair<std::int32_t, std::uint32_t>>> kernel_at(
      ranks.ranks.size());
  for (const auto& row : collective_rows) {
    if (row.collective.activity_id != kNull)
      kernel_at[ranks.index[row.rank]][row.collective.activity_id] = {-1, 0};
  }
  for (std::size_t ri = 0; ri < ranks.ranks.size(); ++ri) {
    if (kernel_at[ri].empty()) continue;
    Rank& r = ranks.ranks[ri];
    for (std::size_t si = 0; si < r.streams.size(); ++si) {
      const auto& st = r.streams[si];
      for (std::uint32_t i = 0; i < st.count; ++i) {
        auto it = kernel_at[ri].find(r.activities[st.first + i].id);
        if (it != kernel_at[ri].end()) it->second = {static_cast<std::int32_t>(si), st.first + i};
      }
    }
  }
  {
    std::vector<std::size_t> per_rank(ranks.ranks.size(), 0);
    for (const auto& row : collective_rows) ++per_rank[ranks.index[row.rank]];
    for (std::size_t ri = 0; ri < ranks.ranks.size(); ++ri) ranks.ranks[ri].collectives.reserve(per_rank[ri]);
  }
  for (auto& row : collective_rows) {
    const std::size_t ri = ranks.index[row.rank];
    Rank& r = ranks.ranks[ri];
    Collective& c = row.collective;
    if (c.activity_id != kNull) {
      auto it = kernel_at[ri].find(c.activity_id);
      if (it != kernel_at[ri].end() && it->second.first >= 0) {
        c.stream_index = it->second.first;
        c.activity = it->second.second;
        r.activities[c.activity].collective = static_cast<std::int32_t>(r.collectives.size());
      }
    }
    r.collectives.push_back(std::move(c));
  }
}

// CPU side: API calls, then ranges per track and the steps among them.
void attach_cpu(ApiCallScan& api_calls, RangeScan& range_scan, const ThreadNames& thread_names,
                RankSlots& ranks) {
  auto& tracks = range_scan.tracks;
  for (auto& [rank, calls_of_rank] : api_calls) {
    // The rank's threads sorted by (pid, tid), the calls renumbered to match.
    RankCalls& list = calls_of_rank;  // a lambda below refers to it (clang 14 cannot capture a binding)
    Rank& r = ranks.slot(rank);
    std::vector<std::uint32_t> order(list.threads.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return list.threads[a] < list.threads[b]; });
    std::vector<std::uint32_t> renumber(order.size());
    r.call_threads.resize(order.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) {
      renumber[order[k]] = k;
      r.call_threads[k] = list.threads[order[k]];
    }
    for (ApiCall& c : list.calls) c.thread = renumber[c.thread];
    r.api_calls = std::move(list.calls);
  }
  // As for the activities: each rank's ranges sized once, each track's list freed as it is copied.
  ReleaseFreed release;
  std::map<std::int32_t, std::size_t> per_rank;
  for (const auto& [key, list] : tracks) per_rank[std::get<0>(key)] += list.size();
  for (auto& [key, list] : tracks) {
    const auto& [rank, gpu, pid, tid] = key;
    Rank& r = ranks.slot(rank);
    CpuTrack track{pid,
                   tid,
                   {},
                   gpu,
                   static_cast<std::uint32_t>(r.ranges.size()),
                   static_cast<std::uint32_t>(list.size()),
                   0};
    if (gpu) {
      track.name = fmt::format("GPU {} stream {} annotations", pid, tid);
    } else {
      auto name = thread_names.find({rank, pid, tid});
      track.name =
          name != thread_names.end() && !name->second.empty() ? name->second : fmt::format("thread {}", tid);
    }
    for (const auto& c : list) {
      track.max_depth = std::max(track.max_depth, c.depth);
      if (c.kind == RangeKind::kStep)
        r.steps.push_back(
            {range_scan.step_of_range[c.id], c.start_ns, c.end_ns, pid, tid, c.id, "ProfilerStep"});
    }
    if (r.ranges.capacity() < per_rank[rank]) r.ranges.reserve(per_rank[rank]);
    r.ranges.insert(r.ranges.end(), list.begin(), list.end());
    release.freed(list.capacity() * sizeof(CpuRange));
    std::vector<CpuRange>().swap(list);
    r.tracks.push_back(std::move(track));
  }
  for (auto& r : ranks.ranks) {
    std::stable_sort(r.steps.begin(), r.steps.end(),
                     [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  }
}

EventCounts count_events(const std::vector<Rank>& ranks, const RangeScan& range_scan) {
  EventCounts n;
  for (const auto& r : ranks) n += meshscope::count_events(r);
  n.cpu_op += range_scan.skipped_cpu_ops;  // counted, not loaded
  n.python_function += range_scan.skipped_python;
  return n;
}

}  // namespace meshscope::load
