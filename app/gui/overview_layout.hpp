// The rank × time overview's layout, without ImGui: every rank's overview buckets
// (RankSummary::overview) brought onto one grid, the order of the rows, the outliers, the slowest
// step, and the heat map drawn from them at the pixels available. overview_panel.cpp draws it; the GUI tests
// check it.
//
// Grid: the coarsest bucket width of any rank; finer ranks are coarsened to it (widths are powers of two and
// buckets are aligned to multiples of their width on the profile clock, so they nest exactly).
// Map: grid columns merged 2^k at a time until they fit the width in pixels (the same exact nesting), and
// rows grouped when there are more ranks than pixel rows; a drawn cell holds the LARGEST share of any rank of
// its group (so a single rank that stands out is never averaged away) and which rank that is.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "analysis/measure/summary.hpp"

namespace meshscope::gui {

enum class OverviewMetric { kExposedComm, kIdle, kCompute };
inline constexpr int kOverviewMetricCount = 3;
const char* to_string(OverviewMetric metric);

enum class OverviewSort { kRank, kLateness, kExposedComm };
inline constexpr int kOverviewSortCount = 3;
const char* to_string(OverviewSort sort);

// Every rank's buckets on one grid. The grid is sparse: each row holds only the columns its rank's buckets
// cover (at most kOverviewBuckets + 1 of them once coarsened), so that its memory is in proportion to the
// ranks, never to the time span (ranks recorded years apart share a grid of billions of columns).
struct OverviewGrid {
  int bucket_log2 = 0;            // the coarsest width of any rank with GPU work
  std::int64_t first_bucket = 0;  // grid column 0 is bucket first_bucket at that width
  std::int64_t columns = 0;
  std::vector<std::int32_t> ranks;     // per row (the summary's order: by rank)
  std::vector<std::uint8_t> has_work;  // per row: the rank has an overview (GPU work)
  struct Row {
    std::int64_t first_column = 0;      // the grid column of cells[0]
    std::vector<OverviewBucket> cells;  // the columns the rank covers, in order
  };
  std::vector<Row> rows_cells;  // per row
  TimeNs bucket_ns() const { return TimeNs{1} << bucket_log2; }
  TimeNs start_ns() const { return first_bucket << bucket_log2; }
  TimeNs end_ns() const { return (first_bucket + columns) << bucket_log2; }
  std::size_t rows() const { return ranks.size(); }
  // The cell of ROW in COLUMN: empty where the rank has no bucket.
  const OverviewBucket& cell(std::size_t row, std::int64_t column) const {
    static const OverviewBucket kNone{};
    const Row& r = rows_cells[row];
    const std::int64_t at = column - r.first_column;
    if (at < 0 || at >= static_cast<std::int64_t>(r.cells.size())) return kNone;
    return r.cells[static_cast<std::size_t>(at)];
  }
};
OverviewGrid overview_grid(const ProfileSummary& summary);

// The time of METRIC in B (idle: span − busy).
TimeNs metric_ns(const OverviewBucket& b, OverviewMetric metric);
// METRIC's share of the time the rank was active in B (between its first and last GPU work: span_ns);
// negative when the rank was not active in it.
double metric_share(const OverviewBucket& b, OverviewMetric metric);
// METRIC's share of the rank's whole GPU span (its measured breakdown); 0 without GPU work.
double rank_share(const RankSummary& rank, OverviewMetric metric);

// The rows (indices into summary.ranks) in the order SORT gives:
//   kRank: by rank;
//   kLateness: by the rank's total collective wait, ascending (the rank the others wait for waits least and
//     comes first), ties by rank;
//   kExposedComm: by the rank's exposed communication, descending, ties by rank.
std::vector<std::uint32_t> overview_order(const ProfileSummary& summary, OverviewSort sort);

// Outliers by the median absolute deviation (Leys, Ley, Klein, Bernard and Licata, "Detecting outliers: Do
// not use standard deviation around the mean, use absolute deviation around the median", J. Exp. Soc.
// Psychol. 49, 2013): value i is an outlier when |x_i − M| > K · 1.4826 · MAD, M the median and MAD the
// median of |x − M| (1.4826 makes MAD estimate the standard deviation of normal data). With MAD = 0 (more
// than half the values equal) every value that differs from the median is one.
struct MadCut {
  double median = 0, mad = 0, k = 0;
  bool outlier(double x) const;
};
inline constexpr double kOutlierMads = 3.0;
MadCut mad_cut(std::span<const double> values, double k = kOutlierMads);
std::vector<std::uint8_t> mad_outliers(std::span<const double> values, double k = kOutlierMads);

// The step with the largest mean GPU span over the ranks that ran it (steps matched by number), and the
// window from its earliest GPU start to its latest GPU end over those ranks. nullopt without steps with GPU
// work.
struct SlowestStep {
  std::int64_t number = 0;
  double mean_span_ns = 0;
  TimeNs start_ns = 0, end_ns = 0;
  std::int64_t ranks = 0;
};
std::optional<SlowestStep> slowest_step(const ProfileSummary& summary);

// The heat map as drawn: ORDER's rows grouped ranks_per_row at a time (the last group may be smaller), grid
// columns merged 2^column_log2 at a time (aligned on multiples of that on the bucket clock).
struct OverviewMap {
  std::int64_t rows = 0, columns = 0;
  std::int64_t ranks_per_row = 1;
  int column_log2 = 0;
  std::int64_t first_column =
      0;  // drawn column 0 is bucket first_column at width grid.bucket_log2 + column_log2
  TimeNs start_ns = 0, column_ns = 0;  // drawn column c covers [start_ns + c·column_ns, + column_ns)
  std::vector<float> value;            // rows × columns: the largest share in the group, −1 none active
  std::vector<std::int32_t> arg;       // rows × columns: the grid row holding it, −1 none
  float at(std::int64_t row, std::int64_t column) const {
    return value[static_cast<std::size_t>(row * columns + column)];
  }
  std::int32_t arg_at(std::int64_t row, std::int64_t column) const {
    return arg[static_cast<std::size_t>(row * columns + column)];
  }
};
// At most MAX_ROWS rows and MAX_COLUMNS columns (both ≥ 1).
OverviewMap overview_map(const OverviewGrid& grid, std::span<const std::uint32_t> order,
                         OverviewMetric metric, std::int64_t max_rows, std::int64_t max_columns);
// The bucket of grid row ROW in drawn column COLUMN of MAP (the grid columns it merges, summed).
OverviewBucket merged_bucket(const OverviewGrid& grid, const OverviewMap& map, std::size_t row,
                             std::int64_t column);

}  // namespace meshscope::gui
