#include "analysis/measure/intervals.hpp"

#include <algorithm>
#include <cmath>

namespace meshscope::measure {

void sort_by_start(std::vector<Interval>& intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
}

void union_sorted(std::span<const Interval> sorted, std::vector<Interval>& out) {
  out.clear();
  for (const Interval& next : sorted) union_append(out, next);
}

void union_of(std::span<const Interval> a, std::span<const Interval> b, std::vector<Interval>& out) {
  out.clear();
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const bool take_a = j == b.size() || (i < a.size() && a[i].start <= b[j].start);
    union_append(out, take_a ? a[i++] : b[j++]);
  }
}

void intersect(std::span<const Interval> a, std::span<const Interval> b, std::vector<Interval>& out) {
  out.clear();
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const TimeNs start = std::max(a[i].start, b[j].start);
    const TimeNs end = std::min(a[i].end, b[j].end);
    if (start < end) out.push_back({start, end});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
}

void subtract(std::span<const Interval> a, std::span<const Interval> b, std::vector<Interval>& out) {
  out.clear();
  std::size_t j = 0;
  for (const Interval& piece : a) {
    TimeNs start = piece.start;
    // Skip cuts that end before this piece starts; they cannot affect later pieces either.
    while (j < b.size() && b[j].end <= start) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].start < piece.end) {
      if (b[k].start > start) out.push_back({start, b[k].start});
      start = std::max(start, b[k].end);
      if (start >= piece.end) break;
      ++k;
    }
    if (start < piece.end) out.push_back({start, piece.end});
    // A cut that extends past this piece may cut the next one too, so j stays at the last cut examined.
    j = k < b.size() ? k : b.size();
  }
}

TimeNs total_length(std::span<const Interval> disjoint) {
  TimeNs total = 0;
  for (const Interval& i : disjoint) total += i.end - i.start;
  return total;
}

TimeNs intersection_length(std::span<const Interval> a, std::span<const Interval> b) {
  TimeNs total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const TimeNs start = std::max(a[i].start, b[j].start);
    const TimeNs end = std::min(a[i].end, b[j].end);
    if (start < end) total += end - start;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

void merge_disjoint_runs(std::vector<Interval>& runs, std::vector<std::size_t>& bounds,
                         std::vector<Interval>& scratch) {
  const auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  while (bounds.size() > 2) {
    std::size_t out = 1;
    for (std::size_t k = 0; k + 2 < bounds.size(); k += 2) {
      const auto first = runs.begin() + static_cast<std::ptrdiff_t>(bounds[k]);
      const auto middle = runs.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1]);
      const auto last = runs.begin() + static_cast<std::ptrdiff_t>(bounds[k + 2]);
      scratch.assign(first, last);
      std::merge(scratch.begin(), scratch.begin() + (middle - first), scratch.begin() + (middle - first),
                 scratch.end(), first, by_start);
      bounds[out++] = bounds[k + 2];
    }
    if (bounds.size() % 2 == 0) bounds[out++] = bounds.back();  // an odd run out stays as it is
    bounds.resize(out);
  }
  // One sorted run remains; fold overlaps in place.
  std::size_t n = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Interval next = runs[i];
    if (next.end <= next.start) continue;
    if (n > 0 && next.start <= runs[n - 1].end) {
      if (next.end > runs[n - 1].end) runs[n - 1].end = next.end;
    } else {
      runs[n++] = next;
    }
  }
  runs.resize(n);
  bounds.assign({0, n});
}

TimeNs nearest_rank(std::vector<TimeNs>& values, double p) {
  if (values.empty()) return 0;
  auto index = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
  index = index == 0 ? 0 : index - 1;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(index), values.end());
  return values[index];
}

}  // namespace meshscope::measure
