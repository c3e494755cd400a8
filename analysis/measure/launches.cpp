#include "analysis/measure/launches.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace meshscope::measure {

namespace {

// The API calls grouped by thread, threads in (pid, tid) order (the rank's call_threads), and each thread's
// CPU track.
void index_threads(const Rank& rank, LaunchIndex& x) {
  const auto& calls = rank.api_calls;
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> thread_at;
  x.threads.reserve(rank.call_threads.size());
  for (const CallThread& t : rank.call_threads) {
    thread_at.emplace(std::make_pair(t.pid, t.tid), static_cast<std::uint32_t>(x.threads.size()));
    x.threads.push_back({t.pid, t.tid, kNoIndex, {}});
  }
  x.thread_of_api.resize(calls.size());
  for (std::uint32_t i = 0; i < calls.size(); ++i) {
    x.threads[calls[i].thread].calls.push_back(i);
    x.thread_of_api[i] = calls[i].thread;
  }
  for (std::uint32_t k = 0; k < rank.tracks.size(); ++k) {
    const CpuTrack& track = rank.tracks[k];
    if (track.gpu) continue;
    const auto it = thread_at.find({track.pid, track.tid});
    if (it != thread_at.end()) x.threads[it->second].track = k;
  }
}

// Correlation id -> activities, as a CSR list per API call (the earliest call of an id owns it).
void index_correlations(const Rank& rank, LaunchIndex& x) {
  const auto& calls = rank.api_calls;
  std::vector<std::pair<std::int64_t, std::uint32_t>> by_id;
  by_id.reserve(calls.size());
  for (std::uint32_t i = 0; i < calls.size(); ++i) {
    if (calls[i].correlation != kNull) by_id.emplace_back(calls[i].correlation, i);
  }
  std::sort(by_id.begin(), by_id.end());
  x.api_of_activity.assign(rank.activities.size(), kNoIndex);
  x.launched_first.assign(calls.size() + 1, 0);
  for (std::uint32_t a = 0; a < rank.activities.size(); ++a) {
    const std::int64_t id = rank.activities[a].correlation;
    if (id == kNull) continue;
    const auto it = std::lower_bound(by_id.begin(), by_id.end(), std::pair{id, std::uint32_t{0}});
    if (it == by_id.end() || it->first != id) continue;
    x.api_of_activity[a] = it->second;
    ++x.launched_first[it->second + 1];
  }
  for (std::size_t i = 1; i < x.launched_first.size(); ++i) x.launched_first[i] += x.launched_first[i - 1];
  x.launched.resize(x.launched_first.back());
  std::vector<std::uint32_t> fill(x.launched_first.begin(), x.launched_first.end() - 1);
  for (std::uint32_t a = 0; a < rank.activities.size(); ++a) {
    const std::uint32_t api = x.api_of_activity[a];
    if (api != kNoIndex) x.launched[fill[api]++] = a;
  }
}

// CPU operator of each API call: by External id first, else the innermost operator (else range) open on
// the calling thread when the call started (one sweep per thread over its ranges, nested in start order).
void index_operators(const Rank& rank, LaunchIndex& x) {
  const auto& calls = rank.api_calls;
  x.op_of_api.assign(calls.size(), kNoIndex);
  std::vector<std::pair<std::int64_t, std::int64_t>> by_ext;  // (external id, -depth) -> range index
  std::vector<std::uint32_t> ext_range;
  {
    std::vector<std::pair<std::pair<std::int64_t, std::int32_t>, std::uint32_t>> keyed;
    for (std::uint32_t i = 0; i < rank.ranges.size(); ++i) {
      const CpuRange& r = rank.ranges[i];
      if (r.kind == RangeKind::kCpuOp && r.external_id != kNull)
        keyed.push_back({{r.external_id, -r.depth}, i});
    }
    std::sort(keyed.begin(), keyed.end());
    for (const auto& [key, i] : keyed) {
      by_ext.emplace_back(key.first, key.second);
      ext_range.push_back(i);
    }
  }
  for (std::uint32_t i = 0; i < calls.size(); ++i) {
    const std::int64_t ext = calls[i].external_id;
    if (ext == kNull) continue;
    const auto it = std::lower_bound(by_ext.begin(), by_ext.end(),
                                     std::pair{ext, std::numeric_limits<std::int64_t>::min()});
    if (it != by_ext.end() && it->first == ext)
      x.op_of_api[i] = ext_range[static_cast<std::size_t>(it - by_ext.begin())];
  }
  std::vector<std::uint32_t> open;  // ranges open at the sweep's time, outermost first
  for (const auto& thread : x.threads) {
    if (thread.track == kNoIndex) continue;
    const CpuTrack& track = rank.tracks[thread.track];
    open.clear();
    std::uint32_t next = track.first;
    const std::uint32_t end = track.first + track.count;
    for (const std::uint32_t call : thread.calls) {
      const TimeNs t = calls[call].start_ns;
      while (next < end && rank.ranges[next].start_ns <= t) {
        while (!open.empty() && rank.ranges[open.back()].end_ns <= rank.ranges[next].start_ns)
          open.pop_back();
        open.push_back(next++);
      }
      while (!open.empty() && rank.ranges[open.back()].end_ns <= t) open.pop_back();
      if (x.op_of_api[call] != kNoIndex || open.empty()) continue;
      std::uint32_t chosen = open.back();
      for (auto it = open.rbegin(); it != open.rend(); ++it) {
        if (rank.ranges[*it].kind == RangeKind::kCpuOp && rank.ranges[*it].end_ns > t) {
          chosen = *it;
          break;
        }
      }
      x.op_of_api[call] = chosen;
    }
  }
}

}  // namespace

bool synchronising_call(std::string_view name) {
  if (name.find("Synchronize") != std::string_view::npos) return true;
  return name == "cudaMemcpy" || name == "hipMemcpy" || name == "cuMemcpy" || name == "cudaMemcpy2D" ||
         name == "cudaMemcpyFromSymbol" || name == "cudaMemcpyToSymbol" || name == "cuMemcpyDtoH_v2" ||
         name == "cuMemcpyHtoD_v2";
}

LaunchIndex index_launches(const Rank& rank, bool operators) {
  LaunchIndex x;
  index_threads(rank, x);
  index_correlations(rank, x);
  if (operators) index_operators(rank, x);
  return x;
}

void api_calls_inside(const Rank& rank, const LaunchIndex& index, std::uint32_t range,
                      std::vector<std::uint32_t>& out) {
  if (range >= rank.ranges.size()) return;
  const CpuRange& r = rank.ranges[range];
  const CpuTrack* track = nullptr;
  for (const CpuTrack& t : rank.tracks) {
    if (range >= t.first && range < t.first + t.count) track = &t;
  }
  if (!track || track->gpu) return;
  for (const auto& thread : index.threads) {
    if (thread.pid != track->pid || thread.tid != track->tid) continue;
    auto it = std::partition_point(thread.calls.begin(), thread.calls.end(),
                                   [&](std::uint32_t c) { return rank.api_calls[c].start_ns < r.start_ns; });
    for (; it != thread.calls.end() && rank.api_calls[*it].start_ns < r.end_ns; ++it) {
      if (rank.api_calls[*it].end_ns <= r.end_ns) out.push_back(*it);
    }
  }
}

}  // namespace meshscope::measure
