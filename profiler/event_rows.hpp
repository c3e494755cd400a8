// The one path from a row of an event table to an event, shared by the loader (profile_scan.cpp: the rows of
// a profile's tables, read by TableReader) and Profile::of_records (profile_records.cpp: the records a writer
// would write). A ROW gives each field checked, the way its source checks it (TableReader names table, row
// and column; the records name the file and the record), and is asked for each field once, in the order
// the loader has always read them, so that an input with two faults is refused for the same one either way.
// The scanners build what profile_load.hpp's attach functions take. Inside the profiler only.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "profiler/profile_load.hpp"

namespace meshscope::load {

// The lists of RANK in LISTS (keyed by tuples that start with the rank) give back the spare room their growth
// left. Called when a scan reaches a rank it has not seen (a rank's rows usually come together): the next
// rank's lists reuse that room in the reading thread's heap, so a load holds one rank's spare room, not every
// list's. Never on a rank seen before: where ranks take turns row by row, every turn would copy the lists.
template <typename Map>
void give_back_room(Map& lists, std::int32_t rank) {
  // The smallest key of RANK: the rank, then the lowest value of every other element.
  auto first = []<typename... Rest>(std::int32_t r, std::tuple<std::int32_t, Rest...>*) {
    return typename Map::key_type{r, std::numeric_limits<Rest>::lowest()...};
  }(rank, static_cast<typename Map::key_type*>(nullptr));
  for (auto it = lists.lower_bound(first); it != lists.end() && std::get<0>(it->first) == rank; ++it)
    it->second.shrink_to_fit();
}

// Activities into per-stream lists. ROW: rank(), device(), stream(), kind(), interval(), id(),
// correlation(), name(), and kernel_detail() (a kernel, with kernel details) or copy_detail() (a copy or
// memset).
class ActivityScanner {
 public:
  explicit ActivityScanner(bool kernel_details) : kernel_details_(kernel_details) {}

  template <typename Row>
  void add(const Row& row) {
    const StreamKey key{row.rank(), row.device(), row.stream()};
    if (!bucket_ || key != last_key_) switch_stream(key);
    Activity a{};
    a.kind = row.kind();
    std::tie(a.start_ns, a.end_ns) = row.interval();
    a.id = row.id();
    a.correlation = row.correlation();
    a.name = row.name();
    a.collective = -1;
    a.detail = kNoDetail;
    if (a.kind == ActivityKind::kKernel && kernel_details_) {
      // A kernel's launch configuration repeats with every launch of it: each distinct one is held once per
      // rank (and slice), and activities point at it.
      const auto [it, added] =
          distinct_->try_emplace(row.kernel_detail(), static_cast<std::uint32_t>(kernels_->size()));
      if (added) kernels_->push_back(it->first);
      a.detail = it->second;
    } else if (a.kind == ActivityKind::kMemcpy || a.kind == ActivityKind::kMemset) {
      a.detail = static_cast<std::uint32_t>(copies_->size());
      copies_->push_back(row.copy_detail());
    }
    bucket_->push_back(a);
  }

  // The lists, each sorted by start.
  ActivityScan finish() {
    for (auto& [key, list] : scan_.buckets) stable_sort_unless_sorted(list, activity_before);
    return std::move(scan_);
  }

 private:
  void switch_stream(const StreamKey& key) {
    const std::int32_t rank = std::get<0>(key);
    if (bucket_ && rank != std::get<0>(last_key_) && !scan_.kernels.contains(rank)) {
      give_back_room(scan_.buckets, std::get<0>(last_key_));
      kernels_->shrink_to_fit();
      copies_->shrink_to_fit();
    }
    bucket_ = &scan_.buckets[key];
    kernels_ = &scan_.kernels[rank];
    copies_ = &scan_.copies[rank];
    distinct_ = &distinct_kernels_[rank];
    last_key_ = key;
  }

  bool kernel_details_;
  ActivityScan scan_;
  std::vector<Activity>* bucket_ = nullptr;
  std::vector<KernelDetail>* kernels_ = nullptr;
  std::vector<CopyDetail>* copies_ = nullptr;
  std::map<std::int32_t, std::unordered_map<KernelDetail, std::uint32_t, KernelDetailHash>> distinct_kernels_;
  std::unordered_map<KernelDetail, std::uint32_t, KernelDetailHash>* distinct_ = nullptr;
  StreamKey last_key_{-1, -1, -1};
};

// CUDA calls into per-rank lists, each call naming its thread. ROW: rank(), kind(), pid(), tid(),
// interval(), name(), correlation(), external_id().
class ApiCallScanner {
 public:
  template <typename Row>
  void add(const Row& row) {
    const std::int32_t rank = row.rank();
    if (!list_ || rank != last_rank_) {
      // A rank's calls usually come together: when the next rank starts, the last one's list, grown row by
      // row, gives back its spare room, which the next can reuse (shrinking every list at the end would hold
      // both at once). Only on a rank not seen yet: ranks that take turns would otherwise copy their lists
      // at every turn.
      auto [at, first_seen] = calls_.try_emplace(rank);
      if (list_ && first_seen) list_->calls.shrink_to_fit();
      list_ = &at->second;
      last_rank_ = rank;
      last_thread_ = {kNull, kNull};
    }
    ApiCall a{};
    a.kind = row.kind();
    const CallThread thread{row.pid(), row.tid()};
    if (thread != last_thread_) {  // a rank's calls come thread after thread, mostly
      last_index_ = list_->thread(thread);
      last_thread_ = thread;
    }
    a.thread = last_index_;
    std::tie(a.start_ns, a.end_ns) = row.interval();
    a.name = row.name();
    a.correlation = row.correlation();
    a.external_id = row.external_id();
    list_->calls.push_back(a);
  }

  // The lists, each sorted by start.
  ApiCallScan finish() {
    if (list_) list_->calls.shrink_to_fit();
    for (auto& [rank, list_of_rank] : calls_) stable_sort_unless_sorted(list_of_rank.calls, api_call_before);
    return std::move(calls_);
  }

 private:
  ApiCallScan calls_;
  RankCalls* list_ = nullptr;
  std::int32_t last_rank_ = -1;
  CallThread last_thread_{kNull, kNull};
  std::uint32_t last_index_ = 0;
};

// CPU ranges into per-track lists, the rows of each thread counted (check_range_depths). ROW: kind(),
// rank(), pid(), tid(), interval(), id(), external_id(), step() (a step's range), name(), category(),
// depth().
class RangeScanner {
 public:
  template <typename Row>
  void add(const Row& row) {
    CpuRange c{};
    c.kind = row.kind();
    const std::int32_t rank = row.rank();
    const std::int64_t pid = row.pid(), tid = row.tid();
    if (!rows_ || last_track_ != std::make_tuple(rank, pid, tid)) {
      last_track_ = {rank, pid, tid};
      rows_ = &scan_.rows_per_track[last_track_];
    }
    ++*rows_;
    const TrackKey key{rank, c.kind == RangeKind::kGpuAnnotation, pid, tid};
    if (!list_ || key != last_key_) {
      if (list_ && rank != std::get<0>(last_key_) && ranks_seen_.insert(rank).second)
        give_back_room(scan_.tracks, std::get<0>(last_key_));
      list_ = &scan_.tracks[key];
      last_key_ = key;
    }
    std::tie(c.start_ns, c.end_ns) = row.interval();
    c.id = row.id();
    c.external_id = row.external_id();
    if (c.kind == RangeKind::kStep) scan_.step_of_range[c.id] = row.step();
    c.name = row.name();
    c.category = row.category();
    c.depth = row.depth();
    list_->push_back(c);
  }

  // Where the CPU operators a load leaves out are counted.
  RangeScan& scan() { return scan_; }

  // The lists, each sorted by start (then depth).
  RangeScan finish() {
    for (auto& [key, list_of_track] : scan_.tracks) stable_sort_unless_sorted(list_of_track, range_before);
    return std::move(scan_);
  }

 private:
  RangeScan scan_;
  std::vector<CpuRange>* list_ = nullptr;
  TrackKey last_key_{-1, false, 0, 0};
  std::set<std::int32_t> ranks_seen_;  // for give_back_room: only when a scan reaches a rank not seen yet
  std::size_t* rows_ = nullptr;
  std::tuple<std::int32_t, std::int64_t, std::int64_t> last_track_{-1, 0, 0};
};

// A collective of ROW, its source aside (the caller numbers the source texts). ROW: id(), activity_id(),
// communicator(), pg_desc(), pg_ranks(), seq(), op(), in_nelems(), out_nelems(), dtype(), in_bytes(),
// out_bytes(), group_size(), algorithm(), protocol(), channels(), interval().
template <typename Row>
Collective collective_of(const Row& row) {
  Collective c{};
  c.id = row.id();
  c.activity_id = row.activity_id();
  c.stream_index = -1;
  c.activity = 0;
  c.communicator = row.communicator();
  c.pg_desc = row.pg_desc();
  c.pg_ranks = row.pg_ranks();
  c.seq = row.seq();
  c.op = row.op();
  c.in_nelems = row.in_nelems();
  c.out_nelems = row.out_nelems();
  c.dtype = row.dtype();
  c.in_bytes = row.in_bytes();
  c.out_bytes = row.out_bytes();
  c.group_size = row.group_size();
  c.algorithm = row.algorithm();
  c.protocol = row.protocol();
  c.channels = row.channels();
  std::tie(c.start_ns, c.end_ns) = row.interval();
  return c;
}

}  // namespace meshscope::load
