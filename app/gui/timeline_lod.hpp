// Level of detail for the timeline (Tracy's preprocess-then-draw): plain C++, no ImGui, unit-tested.
//
// [SECTION] Lanes: once after load, the time-sorted events of one stream (or CPU track) are assigned to
//           sub-lanes by first fit, so overlapping events never cover each other. Within one lane both starts
//           and ends are monotonic, which is what lets the per-frame pass use binary search on either.
// [SECTION] Preprocess: per frame and per visible lane, the events inside [t0, t1) are found with binary
//           search and turned into draw items; runs of events narrower than min_px pixels are folded into one
//           item that carries their count (never dropped), and the pass jumps over a fold with binary search,
//           so its cost follows the pixels on screen, not the number of events.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "analysis/measure/intervals.hpp"
#include "profiler/records.hpp"

namespace meshscope::gui {

// Where the folds of one lane break, at any zoom: the fold key of the lane's k-th event is the larger of its
// duration and its gap to the event before (infinite for the first); a fold of width F runs on while the
// keys stay under F. The maxima of the keys over blocks of kFoldBlock events, and over groups of kFoldBlock
// blocks, let a fold jump over everything that cannot break it, so a frame's cost follows the folds drawn,
// not the pixels they cover. About 1/8 byte per event.
inline constexpr std::size_t kFoldBlock = 64;
struct FoldIndex {
  std::vector<TimeNs> block_max;  // per block of kFoldBlock events
  std::vector<TimeNs> group_max;  // per group of kFoldBlock blocks
};

// The sub-lanes of one time-sorted sequence of events.
struct LaneLayout {
  // Per lane, the indices (into the sequence) of its events in start order. Empty when the whole sequence
  // fits one lane (the identity: no index array is stored for the common case of a non-overlapping stream).
  std::vector<std::vector<std::uint32_t>> members;
  // Per lane, the summed durations of its first k events at [k] (one more entry than the lane has events),
  // when add_busy_prefix() made them (GPU streams): how busy a fold or a stretch of the lane is, at any zoom,
  // in O(log n). Empty otherwise.
  std::vector<std::vector<TimeNs>> busy_before;
  // Per lane, its FoldIndex when add_fold_index() made them (GPU streams, OS threads); empty otherwise.
  std::vector<FoldIndex> fold_index;
  std::uint32_t lanes() const { return members.empty() ? 1u : static_cast<std::uint32_t>(members.size()); }
};

// First-fit lane assignment of EVENTS (sorted by start_ns). Event i goes to the first lane at or after
// PREFERRED(i) whose last event ended at or before its start, so properly nested CPU ranges land on the lane
// of their depth and a stream without overlaps stays one lane.
template <class Event, class Preferred>
LaneLayout assign_lanes(std::span<const Event> events, Preferred preferred) {
  LaneLayout layout;
  std::vector<TimeNs> last_end;
  std::vector<std::vector<std::uint32_t>> lanes;
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    std::size_t lane = static_cast<std::size_t>(preferred(e));
    while (lane < last_end.size() && last_end[lane] > e.start_ns) ++lane;
    if (lane >= last_end.size()) {
      last_end.resize(lane + 1, std::numeric_limits<TimeNs>::min());
      lanes.resize(lane + 1);
    }
    last_end[lane] = std::max(e.start_ns, e.end_ns);
    lanes[lane].push_back(i);
  }
  if (lanes.size() > 1) layout.members = std::move(lanes);
  return layout;
}

template <class Event>
LaneLayout assign_lanes(std::span<const Event> events) {
  return assign_lanes(events, [](const Event&) { return 0; });
}

// Fills LAYOUT.busy_before for EVENTS (the sequence LAYOUT was made from). Events of one lane never overlap,
// so the sums are the lane's busy time.
template <class Event>
void add_busy_prefix(LaneLayout& layout, std::span<const Event> events) {
  layout.busy_before.assign(layout.lanes(), {});
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    const std::size_t n = layout.members.empty() ? events.size() : layout.members[lane].size();
    std::vector<TimeNs>& sums = layout.busy_before[lane];
    sums.resize(n + 1);
    sums[0] = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const auto& e = events[layout.members.empty() ? k : layout.members[lane][k]];
      sums[k + 1] = sums[k] + std::max<TimeNs>(0, e.end_ns - e.start_ns);
    }
  }
}

// The fold key of position K of a lane (AT(k) its event): see FoldIndex.
template <class At>
TimeNs fold_key(At at, std::size_t k) {
  const auto& e = at(k);
  if (k == 0) return std::numeric_limits<TimeNs>::max();
  return std::max(e.end_ns - e.start_ns, e.start_ns - at(k - 1).end_ns);
}

// Fills LAYOUT.fold_index for EVENTS (the sequence LAYOUT was made from).
template <class Event>
void add_fold_index(LaneLayout& layout, std::span<const Event> events) {
  layout.fold_index.assign(layout.lanes(), {});
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    const std::size_t n = layout.members.empty() ? events.size() : layout.members[lane].size();
    auto at = [&](std::size_t k) -> const Event& {
      return events[layout.members.empty() ? k : layout.members[lane][k]];
    };
    FoldIndex& index = layout.fold_index[lane];
    // A lane whose ends go backwards (an event ending before it starts) keeps the stepwise folding, which
    // takes the largest end so far.
    bool monotonic = true;
    for (std::size_t k = 0; k < n && monotonic; ++k)
      monotonic = at(k).end_ns >= at(k).start_ns && (k == 0 || at(k).end_ns >= at(k - 1).end_ns);
    if (!monotonic) continue;
    index.block_max.assign((n + kFoldBlock - 1) / kFoldBlock, std::numeric_limits<TimeNs>::min());
    index.group_max.assign((index.block_max.size() + kFoldBlock - 1) / kFoldBlock,
                           std::numeric_limits<TimeNs>::min());
    for (std::size_t k = 0; k < n; ++k) {
      TimeNs& block = index.block_max[k / kFoldBlock];
      block = std::max(block, fold_key(at, k));
    }
    for (std::size_t b = 0; b < index.block_max.size(); ++b) {
      TimeNs& group = index.group_max[b / kFoldBlock];
      group = std::max(group, index.block_max[b]);
    }
  }
}

// LANE's FoldIndex in LAYOUT, nullptr when none was made.
inline const FoldIndex* lane_fold_index(const LaneLayout& layout, std::uint32_t lane) {
  return lane < layout.fold_index.size() && !layout.fold_index[lane].block_max.empty()
             ? &layout.fold_index[lane]
             : nullptr;
}

// The first position in [FROM, HI) of a lane (AT(k) its events, INDEX its FoldIndex) whose fold key is FOLD
// or more, HI when none is: whole groups and blocks whose maxima are under FOLD are jumped over.
template <class At>
std::size_t first_fold_break(At at, const FoldIndex& index, std::size_t from, std::size_t hi, TimeNs fold) {
  constexpr std::size_t kGroup = kFoldBlock * kFoldBlock;
  std::size_t k = from;
  while (k < hi) {
    if (k % kGroup == 0 && index.group_max[k / kGroup] < fold) {
      k += kGroup;
    } else if (k % kFoldBlock == 0 && index.block_max[k / kFoldBlock] < fold) {
      k += kFoldBlock;
    } else {
      if (fold_key(at, k) >= fold) return k;
      ++k;
    }
  }
  return hi;
}

// The position in LANE of LAYOUT of the event at INDEX of the sequence (members are in increasing order).
inline std::size_t lane_position(const LaneLayout& layout, std::uint32_t lane, std::uint32_t index) {
  if (layout.members.empty()) return index;
  const auto& m = layout.members[lane];
  return static_cast<std::size_t>(std::lower_bound(m.begin(), m.end(), index) - m.begin());
}

// The busy time of COUNT consecutive events of LANE starting at sequence index FIRST (a fold's events), or -1
// when LAYOUT has no busy sums.
inline TimeNs busy_of_run(const LaneLayout& layout, std::uint32_t lane, std::uint32_t first,
                          std::uint32_t count) {
  if (lane >= layout.busy_before.size()) return -1;
  const auto& sums = layout.busy_before[lane];
  const std::size_t k = lane_position(layout, lane, first);
  if (k + count >= sums.size()) return -1;
  return sums[k + count] - sums[k];
}

// The first of the N events AT(0..N) of a lane (ends monotonic) that ends after T, galloping forward from
// FROM (at or before it): O(log of the distance).
template <class At>
std::size_t first_ending_after(At at, std::size_t n, std::size_t from, TimeNs t) {
  if (from >= n || at(from).end_ns > t) return from;
  std::size_t done = from, step = 1;  // at(done) ends by T
  while (done + step < n && at(done + step).end_ns <= t) done += step, step *= 2;
  std::size_t lo = done + 1, hi = std::min(n, done + step);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (at(mid).end_ns <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// The busy time of LANE before time T: the events that ended by T whole, and the part before T of the one
// that spans it. The busy time in [a, b) is busy_until(b) - busy_until(a). -1 without busy sums.
template <class Event>
TimeNs busy_until(const LaneLayout& layout, std::uint32_t lane, std::span<const Event> events, TimeNs t) {
  if (lane >= layout.busy_before.size()) return -1;
  const auto& sums = layout.busy_before[lane];
  const std::size_t n = sums.size() - 1;
  auto at = [&](std::size_t k) -> const Event& {
    return events[layout.members.empty() ? k : layout.members[lane][k]];
  };
  const std::size_t first = first_ending_after(at, n, 0, t);
  TimeNs busy = sums[first];
  if (first < n && at(first).start_ns < t) busy += t - at(first).start_ns;
  return busy;
}

// The busy time of LAYOUT's lanes of EVENTS, summed over the lanes, before each of the OUT.size() times
// TIME_AT(0), TIME_AT(1), ... (which must not decrease), from the busy sums: each found by galloping from the
// one before, O(log of the events between two times) per time and lane. False, OUT untouched, without busy
// sums (no add_busy_prefix).
template <class Event, class TimeAt>
bool busy_before_times(const LaneLayout& layout, std::span<const Event> events, TimeAt time_at,
                       std::span<TimeNs> out) {
  if (layout.busy_before.empty()) return false;
  std::fill(out.begin(), out.end(), TimeNs{0});
  for (std::uint32_t lane = 0; lane < layout.lanes(); ++lane) {
    const auto& sums = layout.busy_before[lane];
    const std::size_t n = sums.size() - 1;
    auto at = [&](std::size_t k) -> const Event& {
      return events[layout.members.empty() ? k : layout.members[lane][k]];
    };
    std::size_t first = 0;  // the first event ending after the last time (lane ends are monotonic)
    for (std::size_t i = 0; i < out.size(); ++i) {
      const TimeNs t = time_at(i);
      first = first_ending_after(at, n, first, t);
      TimeNs busy = sums[first];
      if (first < n && at(first).start_ns < t) busy += t - at(first).start_ns;
      out[i] += busy;
    }
  }
  return true;
}

// The edge K of a grid of buckets WIDTH ns wide fixed at T0 (the same rounding wherever it is computed).
inline TimeNs grid_edge(TimeNs t0, double width, std::int64_t k) {
  return t0 + static_cast<TimeNs>(static_cast<double>(k) * width);
}

// The share of the bucket between edges A and B during which a stream was busy, from the busy time before
// each (summed over its sub-lanes, so at most 1).
inline float bucket_share(TimeNs a, TimeNs b, TimeNs busy_before_a, TimeNs busy_before_b) {
  if (b <= a) return 0.0f;
  return std::min(1.0f, static_cast<float>(static_cast<double>(busy_before_b - busy_before_a) /
                                           static_cast<double>(b - a)));
}

// A stream's utilisation lane: for each of OUT.size() consecutive buckets of WIDTH ns, the k-th from
// T0 + (FIRST_BUCKET + k) · WIDTH, the share of the bucket during which LAYOUT's lanes of EVENTS were busy
// (busy_before_times at its edges). (FIRST_BUCKET numbers the buckets of a grid fixed at T0, so that a part
// of the lane computed alone has the very edges of the whole.) Zeros without busy sums.
template <class Event>
void lane_utilisation(const LaneLayout& layout, std::span<const Event> events, TimeNs t0, double width,
                      std::span<float> out, std::int64_t first_bucket = 0) {
  std::fill(out.begin(), out.end(), 0.0f);
  if (width <= 0 || out.empty()) return;
  auto edge = [&](std::size_t k) {
    return grid_edge(t0, width, first_bucket + static_cast<std::int64_t>(k));
  };
  std::vector<TimeNs> busy(out.size() + 1);
  if (!busy_before_times(layout, events, edge, std::span<TimeNs>(busy))) return;
  for (std::size_t k = 0; k < out.size(); ++k)
    out[k] = bucket_share(edge(k), edge(k + 1), busy[k], busy[k + 1]);
}

// A utilisation lane as a view holds it between frames: the shares of the buckets FIRST .. FIRST + COUNT of a
// grid fixed in time, WIDTH ns wide (a power of two), and the busy time before each of their edges.
struct UtilisationGrid {
  std::int64_t first = 0;
  double width = 0;  // 0 before the first update
  std::vector<float> shares;
  std::vector<TimeNs> edge_busy;  // one more than shares
  std::size_t searched = 0;       // edges the last update had to search for (the others were held)
  std::vector<TimeNs> scratch_, found_;
  std::vector<std::int64_t> missing_;
};

// Brings GRID to the buckets FIRST .. FIRST + COUNT of WIDTH ns from T0 for LAYOUT's lanes of EVENTS,
// searching only for the edges it does not hold: the widths a grid takes are powers of two, so an edge of the
// new grid falls on a held one exactly where one index is the other times the widths' ratio. A pan searches
// only the edges it brings into view; a zoom out by two none inside the held range; a zoom in by two every
// other one. The shares are the very ones lane_utilisation computes.
template <class Event>
void update_utilisation_grid(UtilisationGrid& grid, const LaneLayout& layout, std::span<const Event> events,
                             TimeNs t0, std::int64_t first, std::size_t count, double width) {
  if (width == grid.width && first == grid.first && count == grid.shares.size()) {
    grid.searched = 0;
    return;
  }
  const auto held_end = grid.first + static_cast<std::int64_t>(grid.edge_busy.size());
  auto held_at = [&](std::int64_t e) -> std::int64_t {
    if (grid.width <= 0 || grid.edge_busy.empty()) return -1;
    // Only where one width is a whole multiple of the other do the instants agree exactly.
    const double ratio = width >= grid.width ? width / grid.width : grid.width / width;
    if (ratio != std::floor(ratio) || ratio > 1e15) return -1;
    const auto r = static_cast<std::int64_t>(ratio);
    std::int64_t j = -1;
    if (width >= grid.width)
      j = e * r;
    else if (e % r == 0)
      j = e / r;
    return j >= grid.first && j < held_end ? j - grid.first : -1;
  };
  grid.scratch_.assign(count + 1, 0);
  grid.missing_.clear();
  for (std::size_t i = 0; i <= count; ++i) {
    const std::int64_t e = first + static_cast<std::int64_t>(i);
    const std::int64_t j = held_at(e);
    if (j >= 0)
      grid.scratch_[i] = grid.edge_busy[static_cast<std::size_t>(j)];
    else
      grid.missing_.push_back(e);
  }
  grid.found_.assign(grid.missing_.size(), 0);
  auto time_at = [&](std::size_t i) { return grid_edge(t0, width, grid.missing_[i]); };
  if (!busy_before_times(layout, events, time_at, std::span<TimeNs>(grid.found_)))
    std::fill(grid.scratch_.begin(), grid.scratch_.end(), TimeNs{0});
  for (std::size_t i = 0; i < grid.missing_.size(); ++i)
    grid.scratch_[static_cast<std::size_t>(grid.missing_[i] - first)] = grid.found_[i];
  grid.edge_busy.swap(grid.scratch_);
  grid.searched = grid.missing_.size();
  grid.first = first;
  grid.width = width;
  grid.shares.resize(count);
  for (std::size_t k = 0; k < count; ++k) {
    const auto e = first + static_cast<std::int64_t>(k);
    grid.shares[k] = bucket_share(grid_edge(t0, width, e), grid_edge(t0, width, e + 1), grid.edge_busy[k],
                                  grid.edge_busy[k + 1]);
  }
}

// What the visible window looks like this frame.
struct LodParams {
  TimeNs t0 = 0, t1 = 0;   // visible time range [t0, t1)
  double ns_per_px = 1.0;  // > 0
  float min_px = 3.0f;     // events narrower than this are folded with their narrow neighbours
};

// One thing to draw: a single event (count == 1) or a fold of COUNT consecutive events of one lane that
// are each narrower than min_px and closer than min_px to each other.
struct DrawItem {
  TimeNs start_ns, end_ns;
  std::uint32_t index;  // index into the sequence of the (first) event
  std::uint32_t count;
};
static_assert(sizeof(DrawItem) == 24);

// Appends the draw items of one lane to OUT (reuse OUT across frames: clear() keeps its capacity).
// EVENTS is the whole time-sorted sequence; MEMBERS the lane's indices into it (empty = every event). With
// the lane's FOLDS (its FoldIndex) a fold finds where it breaks in one search; without, it advances a fold
// width at a time. The items are the same.
template <class Event>
void preprocess_lane(std::span<const Event> events, std::span<const std::uint32_t> members,
                     const LodParams& p, std::vector<DrawItem>& out, const FoldIndex* folds = nullptr) {
  const bool direct = members.empty();
  const std::size_t n = direct ? events.size() : members.size();
  auto at = [&](std::size_t k) -> const Event& { return direct ? events[k] : events[members[k]]; };
  auto index_of = [&](std::size_t k) { return static_cast<std::uint32_t>(direct ? k : members[k]); };
  // Binary search over positions [lo, hi) for the first position where PRED is false.
  auto partition = [&](std::size_t lo, std::size_t hi, auto pred) {
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (pred(at(mid)))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  // Galloping search from LO: cheap when the answer is near (folds usually advance a few events at a time).
  auto gallop = [&](std::size_t lo, std::size_t hi, auto pred) {
    std::size_t step = 1;
    std::size_t prev = lo;
    while (lo + step < hi && pred(at(lo + step - 1))) {
      prev = lo + step;
      step *= 2;
    }
    return partition(prev, std::min(hi, lo + step), pred);
  };
  const TimeNs fold = std::max<TimeNs>(1, static_cast<TimeNs>(p.min_px * p.ns_per_px));
  std::size_t k = partition(0, n, [&](const Event& e) { return e.end_ns < p.t0; });
  const std::size_t hi = partition(k, n, [&](const Event& e) { return e.start_ns < p.t1; });
  while (k < hi) {
    const Event& e = at(k);
    if (e.end_ns - e.start_ns >= fold) {
      out.push_back({e.start_ns, e.end_ns, index_of(k), 1});
      ++k;
      continue;
    }
    const std::size_t first = k;
    const TimeNs run_start = e.start_ns;
    if (folds != nullptr) {
      k = first_fold_break(at, *folds, k + 1, hi, fold);
      out.push_back({run_start, at(k - 1).end_ns, index_of(first), static_cast<std::uint32_t>(k - first)});
      continue;
    }
    TimeNs run_end = e.end_ns;
    std::uint32_t count = 1;
    ++k;
    for (;;) {
      // Everything that ends within one fold width of the run belongs to it: jump over it at once.
      const TimeNs limit = run_end + fold;
      const std::size_t next = gallop(k, hi, [&](const Event& x) { return x.end_ns < limit; });
      if (next > k) {
        count += static_cast<std::uint32_t>(next - k);
        run_end = std::max(run_end, at(next - 1).end_ns);
        k = next;
      }
      if (k >= hi) break;
      const Event& x = at(k);
      if (x.end_ns - x.start_ns < fold && x.start_ns - run_end < fold) {
        run_end = std::max(run_end, x.end_ns);
        ++count;
        ++k;
        continue;
      }
      break;
    }
    out.push_back({run_start, run_end, index_of(first), count});
  }
}

// Disjoint sorted intervals (exposed communication) merged where the gap is under one pixel and clipped to
// the visible range; appended to OUT as items whose count is the number of source intervals merged.
void preprocess_intervals(std::span<const measure::Interval> intervals, const LodParams& p,
                          std::vector<DrawItem>& out);

// A "nice" ruler step (1, 2 or 5 × 10^k ns) so that ticks are at least MIN_PX pixels apart.
TimeNs ruler_step(double ns_per_px, double min_px);
// Time as text with a unit that suits STEP ("1.25 ms", "340 µs", "12 ns", "2.5 s").
int format_time(char* buf, int size, TimeNs ns, TimeNs step = 0);

}  // namespace meshscope::gui
