// Totals of a time range [start, end) of a profile: per activity class, per kernel name and per rank, with
// the same definitions as the whole-profile analysis (measure.hpp) restricted to the range: every activity
// is clipped to the range, compute/comm/memory are unions over the rank's streams, overlap = |comm ∩
// compute|, exposed comm = comm − overlap, idle = the rank's GPU span inside the range − busy.
//
// Cost: per stream, a binary search to the first activity that can reach into the range (the stream's
// longest activity bounds how far back that is), then one pass over the activities inside it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "analysis/measure/launches.hpp"
#include "analysis/measure/measure.hpp"

namespace meshscope::measure {

// Built once per profile: per rank and stream, the longest activity on it.
struct RangeIndex {
  std::vector<std::vector<TimeNs>> stream_max_ns;
};
RangeIndex index_ranges(const Profile& profile);

struct RangeClassTotal {
  std::int64_t events = 0;  // activities of the class that overlap the range
  TimeNs sum_ns = 0;        // Σ of their durations inside the range
  TimeNs busy_ns = 0;       // Σ over ranks of |∪ of them| inside the range
};

struct RangeKernelTotal {
  StringId name = kNoString;
  ActivityClass cls = ActivityClass::kCompute;
  std::int64_t count = 0;
  TimeNs total_ns = 0;  // Σ of durations inside the range
  TimeNs max_ns = 0;    // the longest (inside the range)
};

// The GPU work inside the range grouped by the CPU operator that launched it (the launch index's operator of
// its runtime call); activities with no operator are one row named kNoString.
struct RangeOperatorTotal {
  StringId name = kNoString;
  std::int64_t count = 0;  // activities
  TimeNs total_ns = 0;     // Σ of their durations inside the range
  TimeNs max_ns = 0;
};

struct RangeRankTotal {
  std::size_t rank_index = 0;  // into Profile::ranks()
  std::int32_t rank = 0;
  TimeNs window_ns = 0;  // the rank's GPU span (first start .. last end) inside the range
  TimeNs busy_ns = 0, compute_ns = 0, comm_ns = 0, memory_ns = 0, overlap_ns = 0, exposed_comm_ns = 0;
  TimeNs idle_ns = 0;  // window − busy
  std::int64_t events = 0;
};

struct RangeTotals {
  TimeNs start_ns = 0, end_ns = 0;
  std::array<RangeClassTotal, kClassCount> classes{};
  std::vector<RangeKernelTotal> kernels;      // by total, descending
  std::vector<RangeOperatorTotal> operators;  // by total, descending; empty without launch indexes
  std::vector<RangeRankTotal> ranks;          // in Profile::ranks() order
  TimeNs exposed_comm_ns = 0;                 // Σ over ranks
  std::int64_t events = 0;
  bool cancelled = false;  // CANCEL was set before the totals were complete
};

// Totals of [START, END) (END > START). CLASSES are the analysis' per-activity classes. CANCEL (may be null)
// is polled between ranks: a caller on another thread sets it to abandon the work. LAUNCHES, when given,
// holds per rank its launch index (null for a rank without one): the work is then also grouped by operator.
RangeTotals range_totals(const Profile& profile, const Analysis& analysis, const RangeIndex& index,
                         TimeNs start, TimeNs end, const std::atomic<bool>* cancel = nullptr,
                         const std::vector<const LaunchIndex*>* launches = nullptr);

}  // namespace meshscope::measure
