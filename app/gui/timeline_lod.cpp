#include "app/gui/timeline_lod.hpp"

#include <cmath>
#include <cstdio>

namespace meshscope::gui {

void preprocess_intervals(std::span<const measure::Interval> intervals, const LodParams& p,
                          std::vector<DrawItem>& out) {
  const TimeNs gap = std::max<TimeNs>(1, static_cast<TimeNs>(p.ns_per_px));
  auto it = std::partition_point(intervals.begin(), intervals.end(),
                                 [&](const measure::Interval& v) { return v.end < p.t0; });
  while (it != intervals.end() && it->start < p.t1) {
    DrawItem item{it->start, it->end, static_cast<std::uint32_t>(it - intervals.begin()), 1};
    ++it;
    // Jump over every interval that starts within one pixel of the item (disjoint and sorted: binary search).
    for (;;) {
      const TimeNs limit = std::min(item.end_ns + gap, p.t1);
      const auto next = std::partition_point(it, intervals.end(),
                                             [&](const measure::Interval& v) { return v.start < limit; });
      if (next == it) break;
      item.count += static_cast<std::uint32_t>(next - it);
      item.end_ns = std::max(item.end_ns, (next - 1)->end);
      it = next;
    }
    out.push_back(item);
  }
}

TimeNs ruler_step(double ns_per_px, double min_px) {
  const double want = std::max(1.0, ns_per_px * min_px);
  TimeNs step = 1;
  for (;;) {
    for (TimeNs m : {TimeNs{1}, TimeNs{2}, TimeNs{5}}) {
      if (static_cast<double>(step * m) >= want) return step * m;
    }
    if (step > std::numeric_limits<TimeNs>::max() / 100) return step * 10;
    step *= 10;
  }
}

int format_time(char* buf, int size, TimeNs ns, TimeNs step) {
  // With a STEP, the unit is the largest one that the step is at least a tenth of (ticks 500 µs apart read
  // "0.5 ms, 1 ms, 1.5 ms").
  const TimeNs scale = step > 0 ? step * 10 : (ns < 0 ? -ns : ns);
  const double v = static_cast<double>(ns);
  // Enough decimals that consecutive ticks STEP apart differ, none more.
  auto decimals = [&](double unit) {
    if (step <= 0) return 3 - std::min(2, static_cast<int>(std::log10(std::max(1.0, std::abs(v) / unit))));
    int d = 0;
    double s = static_cast<double>(step) / unit;
    while (d < 6 && std::abs(s - std::round(s)) > 1e-9) {
      s *= 10;
      ++d;
    }
    return d;
  };
  if (scale >= 1'000'000'000) return std::snprintf(buf, size, "%.*f s", decimals(1e9), v / 1e9);
  if (scale >= 1'000'000) return std::snprintf(buf, size, "%.*f ms", decimals(1e6), v / 1e6);
  if (scale >= 1'000) return std::snprintf(buf, size, "%.*f \xC2\xB5s", decimals(1e3), v / 1e3);
  return std::snprintf(buf, size, "%lld ns", static_cast<long long>(ns));
}

}  // namespace meshscope::gui
