#include "app/gui/overview_layout.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace meshscope::gui {

const char* to_string(OverviewMetric metric) {
  switch (metric) {
    case OverviewMetric::kExposedComm:
      return "exposed communication";
    case OverviewMetric::kIdle:
      return "idle";
    case OverviewMetric::kCompute:
      return "compute";
  }
  return "?";
}

const char* to_string(OverviewSort sort) {
  switch (sort) {
    case OverviewSort::kRank:
      return "rank";
    case OverviewSort::kLateness:
      return "lateness";
    case OverviewSort::kExposedComm:
      return "exposed communication";
  }
  return "?";
}

namespace {

void add(OverviewBucket& to, const OverviewBucket& b) {
  to.compute_ns += b.compute_ns;
  to.comm_ns += b.comm_ns;
  to.exposed_comm_ns += b.exposed_comm_ns;
  to.memory_only_ns += b.memory_only_ns;
  to.busy_ns += b.busy_ns;
  to.span_ns += b.span_ns;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

}  // namespace

OverviewGrid overview_grid(const ProfileSummary& summary) {
  OverviewGrid g;
  bool any = false;
  for (const RankSummary& r : summary.ranks) {
    if (r.overview.buckets.empty()) continue;
    g.bucket_log2 = any ? std::max(g.bucket_log2, r.overview.bucket_log2) : r.overview.bucket_log2;
    any = true;
  }
  std::int64_t first = 0, last = -1;
  bool seen = false;
  for (const RankSummary& r : summary.ranks) {
    const Overview& ov = r.overview;
    g.ranks.push_back(r.rank);
    g.has_work.push_back(ov.buckets.empty() ? 0 : 1);
    if (ov.buckets.empty()) continue;
    const int shift = g.bucket_log2 - ov.bucket_log2;
    const std::int64_t a = ov.first_bucket >> shift;
    const std::int64_t b = (ov.first_bucket + static_cast<std::int64_t>(ov.buckets.size()) - 1) >> shift;
    first = seen ? std::min(first, a) : a;
    last = seen ? std::max(last, b) : b;
    seen = true;
  }
  g.first_bucket = seen ? first : 0;
  g.columns = seen ? last - first + 1 : 0;
  g.rows_cells.resize(summary.ranks.size());
  for (std::size_t row = 0; row < summary.ranks.size(); ++row) {
    const Overview& ov = summary.ranks[row].overview;
    if (ov.buckets.empty()) continue;
    const int shift = g.bucket_log2 - ov.bucket_log2;
    OverviewGrid::Row& out = g.rows_cells[row];
    out.first_column = (ov.first_bucket >> shift) - g.first_bucket;
    const std::int64_t last_column =
        ((ov.first_bucket + static_cast<std::int64_t>(ov.buckets.size()) - 1) >> shift) - g.first_bucket;
    out.cells.assign(static_cast<std::size_t>(last_column - out.first_column + 1), {});
    for (std::size_t i = 0; i < ov.buckets.size(); ++i) {
      const std::int64_t column =
          ((ov.first_bucket + static_cast<std::int64_t>(i)) >> shift) - g.first_bucket;
      add(out.cells[static_cast<std::size_t>(column - out.first_column)], ov.buckets[i]);
    }
  }
  return g;
}

TimeNs metric_ns(const OverviewBucket& b, OverviewMetric metric) {
  switch (metric) {
    case OverviewMetric::kExposedComm:
      return b.exposed_comm_ns;
    case OverviewMetric::kIdle:
      return b.idle_ns();
    case OverviewMetric::kCompute:
      return b.compute_ns;
  }
  return 0;
}

double metric_share(const OverviewBucket& b, OverviewMetric metric) {
  if (b.span_ns <= 0) return -1;
  return std::clamp(static_cast<double>(metric_ns(b, metric)) / static_cast<double>(b.span_ns), 0.0, 1.0);
}

double rank_share(const RankSummary& rank, OverviewMetric metric) {
  const Breakdown& t = rank.total;
  if (t.span_ns <= 0) return 0;
  const TimeNs ns = metric == OverviewMetric::kExposedComm ? t.exposed_comm_ns
                    : metric == OverviewMetric::kIdle      ? t.idle_ns
                                                           : t.compute_ns;
  return static_cast<double>(ns) / static_cast<double>(t.span_ns);
}

std::vector<std::uint32_t> overview_order(const ProfileSummary& summary, OverviewSort sort) {
  const auto& ranks = summary.ranks;
  std::vector<std::uint32_t> order(ranks.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto by = [&](auto key) {
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto ka = key(ranks[a]), kb = key(ranks[b]);
      return ka != kb ? ka < kb : ranks[a].rank < ranks[b].rank;
    });
  };
  switch (sort) {
    case OverviewSort::kRank:
      by([](const RankSummary& r) { return static_cast<TimeNs>(r.rank); });
      break;
    case OverviewSort::kLateness:
      by([](const RankSummary& r) { return r.collective_wait_ns; });
      break;
    case OverviewSort::kExposedComm:
      by([](const RankSummary& r) { return -r.total.exposed_comm_ns; });
      break;
  }
  return order;
}

bool MadCut::outlier(double x) const {
  const double d = std::abs(x - median);
  return mad > 0 ? d > k * 1.4826 * mad : d > 0;
}

MadCut mad_cut(std::span<const double> values, double k) {
  MadCut cut;
  cut.k = k;
  cut.median = median_of(std::vector<double>(values.begin(), values.end()));
  std::vector<double> deviation;
  deviation.reserve(values.size());
  for (const double x : values) deviation.push_back(std::abs(x - cut.median));
  cut.mad = median_of(std::move(deviation));
  return cut;
}

std::vector<std::uint8_t> mad_outliers(std::span<const double> values, double k) {
  const MadCut cut = mad_cut(values, k);
  std::vector<std::uint8_t> out;
  out.reserve(values.size());
  for (const double x : values) out.push_back(cut.outlier(x) ? 1 : 0);
  return out;
}

std::optional<SlowestStep> slowest_step(const ProfileSummary& summary) {
  struct Acc {
    double span = 0;
    std::int64_t ranks = 0;
    TimeNs start = 0, end = 0;
  };
  std::map<std::int64_t, Acc> steps;
  for (const RankSummary& r : summary.ranks) {
    for (const StepSummary& s : r.steps) {
      if (s.gpu.span_ns <= 0) continue;
      Acc& a = steps[s.number];
      a.start = a.ranks == 0 ? s.gpu.start_ns : std::min(a.start, s.gpu.start_ns);
      a.end = a.ranks == 0 ? s.gpu.end_ns : std::max(a.end, s.gpu.end_ns);
      a.span += static_cast<double>(s.gpu.span_ns);
      ++a.ranks;
    }
  }
  std::optional<SlowestStep> best;
  for (const auto& [number, a] : steps) {
    const double mean = a.span / static_cast<double>(a.ranks);
    if (!best || mean > best->mean_span_ns) best = SlowestStep{number, mean, a.start, a.end, a.ranks};
  }
  return best;
}

OverviewMap overview_map(const OverviewGrid& grid, std::span<const std::uint32_t> order,
                         OverviewMetric metric, std::int64_t max_rows, std::int64_t max_columns) {
  OverviewMap m;
  max_rows = std::max<std::int64_t>(1, max_rows);
  max_columns = std::max<std::int64_t>(1, max_columns);
  const auto n = static_cast<std::int64_t>(order.size());
  m.ranks_per_row = std::max<std::int64_t>(1, (n + max_rows - 1) / max_rows);
  m.rows = (n + m.ranks_per_row - 1) / m.ranks_per_row;
  if (grid.columns > 0) {
    const std::int64_t last = grid.first_bucket + grid.columns - 1;
    // Columns merge until they fit; a drawn column is at most 2^62 ns wide (times lie within ±2^62 ns).
    while (((last >> m.column_log2) - (grid.first_bucket >> m.column_log2) + 1) > max_columns &&
           grid.bucket_log2 + m.column_log2 < 62)
      ++m.column_log2;
    m.first_column = grid.first_bucket >> m.column_log2;
    m.columns = std::min((last >> m.column_log2) - m.first_column + 1, max_columns);
  }
  const int width_log2 = grid.bucket_log2 + m.column_log2;
  m.column_ns = TimeNs{1} << width_log2;
  m.start_ns = m.first_column << width_log2;
  m.value.assign(static_cast<std::size_t>(m.rows * m.columns), -1.0f);
  m.arg.assign(static_cast<std::size_t>(m.rows * m.columns), -1);
  // Each rank's drawn columns from its own cells only: the work is in proportion to its buckets, not to the
  // grid's width.
  std::vector<std::pair<std::int64_t, OverviewBucket>> merged;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t row = order[static_cast<std::size_t>(i)];
    if (!grid.has_work[row]) continue;
    merged.clear();
    const OverviewGrid::Row& cells = grid.rows_cells[row];
    for (std::size_t k = 0; k < cells.cells.size(); ++k) {
      const std::int64_t c = cells.first_column + static_cast<std::int64_t>(k);
      const std::int64_t drawn = ((grid.first_bucket + c) >> m.column_log2) - m.first_column;
      if (drawn < 0 || drawn >= m.columns) continue;
      if (merged.empty() || merged.back().first != drawn) merged.emplace_back(drawn, OverviewBucket{});
      add(merged.back().second, cells.cells[k]);
    }
    const std::int64_t drawn_row = i / m.ranks_per_row;
    for (const auto& [c, bucket] : merged) {
      const double share = metric_share(bucket, metric);
      const auto at = static_cast<std::size_t>(drawn_row * m.columns + c);
      if (share >= 0 && static_cast<float>(share) > m.value[at]) {
        m.value[at] = static_cast<float>(share);
        m.arg[at] = static_cast<std::int32_t>(row);
      }
    }
  }
  return m;
}

OverviewBucket merged_bucket(const OverviewGrid& grid, const OverviewMap& map, std::size_t row,
                             std::int64_t column) {
  OverviewBucket out;
  const OverviewGrid::Row& cells = grid.rows_cells[row];
  const std::int64_t bucket = map.first_column + column;
  const std::int64_t lo =
      std::max<std::int64_t>(cells.first_column, (bucket << map.column_log2) - grid.first_bucket);
  const std::int64_t hi = std::min(cells.first_column + static_cast<std::int64_t>(cells.cells.size()),
                                   ((bucket + 1) << map.column_log2) - grid.first_bucket);
  for (std::int64_t c = lo; c < hi; ++c)
    add(out, cells.cells[static_cast<std::size_t>(c - cells.first_column)]);
  return out;
}

}  // namespace meshscope::gui
