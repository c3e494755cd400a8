// Interval algebra on half-open time intervals [start, end) in nanoseconds.
//
// Two shapes of input appear below:
//   * "sorted": intervals sorted by start (ties in any order); they may overlap, nest or have zero length.
//   * "disjoint": the output of union_sorted(): sorted by start, pairwise disjoint, non-touching, non-empty.
// Every operation is a single linear pass (after the caller's sort, where one is needed). Output vectors are
// cleared first and reused, so a caller that keeps them across calls allocates only while they grow.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "profiler/records.hpp"

namespace meshscope::measure {

struct Interval {
  TimeNs start;
  TimeNs end;
  TimeNs length() const { return end > start ? end - start : 0; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Sorts by start (then end); use before union_sorted() when the input is in no particular order.
void sort_by_start(std::vector<Interval>& intervals);

// Union of SORTED intervals into DISJOINT ones. Zero-length and inverted intervals contribute nothing;
// intervals that touch ([0,5) and [5,9)) merge into one.
void union_sorted(std::span<const Interval> sorted, std::vector<Interval>& out);

// Appends one interval of a SORTED sequence to a DISJOINT union being built (the streaming form of
// union_sorted).
inline void union_append(std::vector<Interval>& out, Interval next) {
  if (next.end <= next.start) return;
  if (!out.empty() && next.start <= out.back().end) {
    if (next.end > out.back().end) out.back().end = next.end;
  } else {
    out.push_back(next);
  }
}

// Union of two DISJOINT lists (a DISJOINT list).
void union_of(std::span<const Interval> a, std::span<const Interval> b, std::vector<Interval>& out);

// Intersection of two DISJOINT lists (a DISJOINT list, without the zero-length contacts).
void intersect(std::span<const Interval> a, std::span<const Interval> b, std::vector<Interval>& out);

// a − b for DISJOINT a and b (a DISJOINT list).
void subtract(std::span<const Interval> a, std::span<const Interval> b, std::vector<Interval>& out);

// Total length of DISJOINT intervals.
TimeNs total_length(std::span<const Interval> disjoint);

// |a ∩ b| for DISJOINT a and b, without building the intersection.
TimeNs intersection_length(std::span<const Interval> a, std::span<const Interval> b);

// Merges DISJOINT runs that lie back to back in RUNS (run k is [bounds[k], bounds[k+1]) ) into one DISJOINT
// list in place: pairwise merges (O(n log k)) followed by one union pass. BOUNDS must start with 0 and end
// with runs.size(). SCRATCH is reused between calls.
void merge_disjoint_runs(std::vector<Interval>& runs, std::vector<std::size_t>& bounds,
                         std::vector<Interval>& scratch);

// The P-th percentile (0 < P <= 1) of VALUES by the nearest-rank method (reorders VALUES); 0 when empty.
TimeNs nearest_rank(std::vector<TimeNs>& values, double p);

}  // namespace meshscope::measure
