// The rank × time overview: its layout (app/gui/overview_layout.hpp: every rank's buckets
// on one grid, rows grouped and columns merged to the pixels available, the row orders, the outlier rule, the
// slowest step) on the summaries of real shared traces and of a generated 64-rank job whose straggler is
// known, and the Overview panel drawn with no window: a click on a cell opens the timeline at that rank and
// time.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>

#include "app/gui/overview_layout.hpp"
#include "tests/gui/gui_test_util.hpp"
#include "tools/gen_job/gen_job_model.hpp"

namespace meshscope::gui {
namespace {

using test::NullImGui;
using test::options_for;

std::unique_ptr<LoadedProfile> load_trace(const std::filesystem::path& trace) {
  if (!std::filesystem::exists(trace)) return nullptr;
  const auto msdb = test::imported(trace);
  return msdb.empty() ? nullptr : load_profile(msdb);
}

// Real traces: several ranks (the sample job, HTA's two sampled ranks), one rank, a CPU-only rank, and an
// Nsight Systems export of one rank without steps.
std::vector<std::filesystem::path> real_traces() {
  return {test::sample_job(),
          test::shared_trace("hta/trace_filter"),
          test::shared_trace("hta/trace_diff/test/test.json.gz"),
          test::shared_trace("tracelens/mi300_resnet_act_checkpoint.json.gz"),
          test::shared_trace("hta/cpu_only"),
          test::shared_trace("nsys/saxpy_mpi_cuda_a100.sqlite")};
}

// The generated job: 64 ranks (8 × 8), lock step; its straggler rank is drawn from the seed as the generator
// does (tools/gen_job/gen_job.cpp, Simulation: mix_seed(seed, 0x5ad) % ranks, default seed 1).
constexpr int kJobRanks = 64;
std::int32_t job_straggler() {
  return static_cast<std::int32_t>(gen::mix_seed(1, 0x5ad) % kJobRanks);
}
std::unique_ptr<LoadedProfile> job() {
  const auto path = test::generated_job("overview64", "--ranks 64 --events-per-rank 2000");
  return path.empty() ? nullptr : load_profile(path);
}

TEST(OverviewLayout, GridHoldsEveryRanksBucketsExactly) {
  int checked = 0;
  for (const auto& trace : real_traces()) {
    auto loaded = load_trace(trace);
    if (!loaded) continue;
    const ProfileSummary& s = *loaded->summary;
    const OverviewGrid grid = overview_grid(s);
    ASSERT_EQ(grid.rows(), s.ranks.size()) << trace;
    for (std::size_t row = 0; row < s.ranks.size(); ++row) {
      const RankSummary& r = s.ranks[row];
      const Overview& ov = r.overview;
      EXPECT_EQ(grid.has_work[row] != 0, !ov.buckets.empty()) << trace;
      if (ov.buckets.empty()) continue;
      EXPECT_LE(ov.bucket_log2, grid.bucket_log2);
      // Each bucket lies inside one grid column (found from its start time), and each column holds exactly
      // the sum of the buckets that start in it.
      std::map<std::int64_t, OverviewBucket> expected;
      for (std::size_t i = 0; i < ov.buckets.size(); ++i) {
        const TimeNs start = (ov.first_bucket + static_cast<std::int64_t>(i)) << ov.bucket_log2;
        const TimeNs end = start + ov.bucket_ns();
        const std::int64_t column = (start - grid.start_ns()) / grid.bucket_ns();
        ASSERT_GE(start, grid.start_ns());
        ASSERT_LE(end, grid.start_ns() + (column + 1) * grid.bucket_ns()) << "buckets nest in the grid's";
        auto& e = expected[column];
        e.compute_ns += ov.buckets[i].compute_ns;
        e.exposed_comm_ns += ov.buckets[i].exposed_comm_ns;
        e.busy_ns += ov.buckets[i].busy_ns;
        e.span_ns += ov.buckets[i].span_ns;
      }
      TimeNs span = 0, busy = 0, compute = 0, exposed = 0;
      for (std::int64_t c = 0; c < grid.columns; ++c) {
        const OverviewBucket& cell = grid.cell(row, c);
        const auto it = expected.find(c);
        const OverviewBucket e = it == expected.end() ? OverviewBucket{} : it->second;
        EXPECT_EQ(cell.span_ns, e.span_ns);
        EXPECT_EQ(cell.busy_ns, e.busy_ns);
        EXPECT_EQ(cell.compute_ns, e.compute_ns);
        EXPECT_EQ(cell.exposed_comm_ns, e.exposed_comm_ns);
        EXPECT_LE(cell.span_ns, grid.bucket_ns());
        span += cell.span_ns, busy += cell.busy_ns, compute += cell.compute_ns,
            exposed += cell.exposed_comm_ns;
      }
      // The buckets add up to the rank's measured breakdown.
      EXPECT_EQ(span, r.total.span_ns) << trace << " rank " << r.rank;
      EXPECT_EQ(busy, r.total.busy_ns) << trace << " rank " << r.rank;
      EXPECT_EQ(compute, r.total.compute_ns) << trace << " rank " << r.rank;
      EXPECT_EQ(exposed, r.total.exposed_comm_ns) << trace << " rank " << r.rank;
      ++checked;
    }
  }
  EXPECT_GE(checked, 7) << "ranks with GPU work checked over the real traces";
}

TEST(OverviewLayout, RanksOfFinerWidthsAreCoarsenedToTheCoarsest) {
  // Two ranks of the sample job, one re-bucketed at half its width (each bucket split in two halves that
  // together hold what it held): the grid is the same as with the original.
  auto loaded = load_trace(test::sample_job());
  ASSERT_TRUE(loaded);
  const ProfileSummary original = *loaded->summary;
  ProfileSummary finer = original;
  Overview& ov = finer.ranks[1].overview;
  ASSERT_GT(ov.bucket_log2, 0);
  Overview split;
  split.bucket_log2 = ov.bucket_log2 - 1;
  split.first_bucket = ov.first_bucket * 2;
  for (const OverviewBucket& b : ov.buckets) {
    OverviewBucket half = b;
    half.span_ns = b.span_ns / 2, half.busy_ns = b.busy_ns / 2, half.compute_ns = b.compute_ns / 2;
    half.exposed_comm_ns = b.exposed_comm_ns / 2, half.comm_ns = b.comm_ns / 2;
    half.memory_only_ns = b.memory_only_ns / 2;
    OverviewBucket rest = b;
    rest.span_ns -= half.span_ns, rest.busy_ns -= half.busy_ns, rest.compute_ns -= half.compute_ns;
    rest.exposed_comm_ns -= half.exposed_comm_ns, rest.comm_ns -= half.comm_ns;
    rest.memory_only_ns -= half.memory_only_ns;
    split.buckets.push_back(half);
    split.buckets.push_back(rest);
  }
  ov = split;
  const OverviewGrid a = overview_grid(original), b = overview_grid(finer);
  ASSERT_EQ(a.bucket_log2, b.bucket_log2);
  ASSERT_EQ(a.first_bucket, b.first_bucket);
  ASSERT_EQ(a.columns, b.columns);
  for (std::size_t row = 0; row < a.rows(); ++row) {
    for (std::int64_t c = 0; c < a.columns; ++c) {
      EXPECT_EQ(a.cell(row, c).span_ns, b.cell(row, c).span_ns);
      EXPECT_EQ(a.cell(row, c).compute_ns, b.cell(row, c).compute_ns);
      EXPECT_EQ(a.cell(row, c).exposed_comm_ns, b.cell(row, c).exposed_comm_ns);
    }
  }
}

TEST(OverviewLayout, RowsGroupedToThePixelsShowTheirLargestShare) {
  auto loaded = job();
  ASSERT_TRUE(loaded);
  const ProfileSummary& s = *loaded->summary;
  ASSERT_EQ(s.ranks.size(), static_cast<std::size_t>(kJobRanks));
  const OverviewGrid grid = overview_grid(s);
  ASSERT_GT(grid.columns, 8);
  const auto order = overview_order(s, OverviewSort::kRank);
  // 64 ranks in 10 pixel rows: 7 ranks a row, the last row holds one; columns merged to at most a third.
  const std::int64_t max_columns = grid.columns / 3;
  for (const OverviewMetric metric :
       {OverviewMetric::kExposedComm, OverviewMetric::kIdle, OverviewMetric::kCompute}) {
    const OverviewMap map = overview_map(grid, order, metric, 10, max_columns);
    EXPECT_EQ(map.ranks_per_row, 7);
    EXPECT_EQ(map.rows, 10);
    EXPECT_LE(map.columns, max_columns);
    EXPECT_GE(map.column_log2, 2);
    EXPECT_EQ(map.column_ns, grid.bucket_ns() << map.column_log2);
    EXPECT_LE(map.start_ns, grid.start_ns());
    EXPECT_GE(map.start_ns + map.column_ns * map.columns, grid.end_ns());
    for (std::int64_t r = 0; r < map.rows; ++r) {
      for (std::int64_t c = 0; c < map.columns; ++c) {
        double best = -1;
        std::set<std::uint32_t> at_best;
        for (std::int64_t i = r * 7; i < std::min<std::int64_t>(kJobRanks, r * 7 + 7); ++i) {
          const std::uint32_t row = order[static_cast<std::size_t>(i)];
          const double share = metric_share(merged_bucket(grid, map, row, c), metric);
          if (static_cast<float>(share) > static_cast<float>(best)) at_best.clear();
          if (static_cast<float>(share) >= static_cast<float>(best)) {
            best = share;
            at_best.insert(row);
          }
        }
        EXPECT_FLOAT_EQ(map.at(r, c), best < 0 ? -1.0f : static_cast<float>(best));
        if (best >= 0) {
          EXPECT_TRUE(at_best.count(static_cast<std::uint32_t>(map.arg_at(r, c))));
        }
      }
    }
  }
  // Merged columns still hold every rank's whole span.
  const OverviewMap map = overview_map(grid, order, OverviewMetric::kIdle, 64, max_columns);
  EXPECT_EQ(map.ranks_per_row, 1);
  for (std::size_t row = 0; row < s.ranks.size(); ++row) {
    TimeNs span = 0, idle = 0;
    for (std::int64_t c = 0; c < map.columns; ++c) {
      const auto b = merged_bucket(grid, map, row, c);
      span += b.span_ns;
      idle += b.idle_ns();
    }
    EXPECT_EQ(span, s.ranks[row].total.span_ns);
    EXPECT_EQ(idle, s.ranks[row].total.idle_ns);
  }
}

TEST(OverviewLayout, SortsAndMarksTheGeneratedStraggler) {
  auto loaded = job();
  ASSERT_TRUE(loaded);
  const ProfileSummary& s = *loaded->summary;
  const auto by_rank = overview_order(s, OverviewSort::kRank);
  for (std::size_t i = 0; i < by_rank.size(); ++i) EXPECT_EQ(s.ranks[by_rank[i]].rank, static_cast<int>(i));
  const auto late = overview_order(s, OverviewSort::kLateness);
  for (std::size_t i = 1; i < late.size(); ++i)
    EXPECT_LE(s.ranks[late[i - 1]].collective_wait_ns, s.ranks[late[i]].collective_wait_ns);
  // The rank the generator slowed down is the one the others wait for: it comes first by lateness.
  EXPECT_EQ(s.ranks[late[0]].rank, job_straggler());
  const auto exposed = overview_order(s, OverviewSort::kExposedComm);
  for (std::size_t i = 1; i < exposed.size(); ++i)
    EXPECT_GE(s.ranks[exposed[i - 1]].total.exposed_comm_ns, s.ranks[exposed[i]].total.exposed_comm_ns);
  EXPECT_EQ(s.ranks[exposed.back()].rank, job_straggler()) << "the straggler waits least in collectives";
  // Outliers by its exposed communication share: the straggler, and no rank that ran at the common pace.
  std::vector<double> shares;
  for (const auto& r : s.ranks) shares.push_back(rank_share(r, OverviewMetric::kExposedComm));
  const auto outliers = mad_outliers(shares);
  EXPECT_TRUE(outliers[static_cast<std::size_t>(job_straggler())]);
  EXPECT_LE(std::count(outliers.begin(), outliers.end(), std::uint8_t{1}), 3);
}

TEST(OverviewLayout, OutlierRuleIsMadsFromTheMedian) {
  // Leys et al. 2013: |x − M| > k · 1.4826 · MAD. {1, 2, 3, 4, 100}: M = 3, MAD = median{2, 1, 0, 1, 97} = 1,
  // the cut at k = 3 is 4.4478: only 100 is out. {2, 4, 6, 8}: M = 5, MAD = 2; 8 − 5 = 3 < 8.9 (k = 3).
  const std::vector<double> a = {1, 2, 3, 4, 100};
  const MadCut cut = mad_cut(a);
  EXPECT_DOUBLE_EQ(cut.median, 3);
  EXPECT_DOUBLE_EQ(cut.mad, 1);
  EXPECT_EQ(mad_outliers(a), (std::vector<std::uint8_t>{0, 0, 0, 0, 1}));
  const std::vector<double> b = {2, 4, 6, 8};
  EXPECT_DOUBLE_EQ(mad_cut(b).median, 5);
  EXPECT_DOUBLE_EQ(mad_cut(b).mad, 2);
  EXPECT_EQ(mad_outliers(b), (std::vector<std::uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(mad_outliers(b, 0.5), (std::vector<std::uint8_t>{1, 0, 0, 1})) << "3 > 0.5 · 1.4826 · 2";
  // MAD = 0: more than half equal; the one that differs is out.
  EXPECT_EQ(mad_outliers(std::vector<double>{5, 5, 5, 7}), (std::vector<std::uint8_t>{0, 0, 0, 1}));
  EXPECT_TRUE(mad_outliers(std::vector<double>{}).empty());
  EXPECT_EQ(mad_outliers(std::vector<double>{0.4}), (std::vector<std::uint8_t>{0}));
}

TEST(OverviewLayout, SlowestStepHasTheLargestMeanGpuSpan) {
  int checked = 0;
  for (const auto& trace : real_traces()) {
    auto loaded = load_trace(trace);
    if (!loaded) continue;
    // From the analysis (not the summary): per step number, the mean GPU span over the ranks that ran it.
    std::map<std::int64_t, std::pair<double, int>> spans;
    for (const auto& rr : loaded->analysis().ranks) {
      for (const auto& st : rr.steps) {
        if (st.gpu.span_ns <= 0) continue;
        spans[st.number].first += static_cast<double>(st.gpu.span_ns);
        spans[st.number].second += 1;
      }
    }
    const auto slowest = slowest_step(*loaded->summary);
    ASSERT_EQ(slowest.has_value(), !spans.empty()) << trace;
    if (!slowest) continue;
    for (const auto& [number, acc] : spans)
      EXPECT_LE(acc.first / acc.second, slowest->mean_span_ns + 1e-6) << trace << " step " << number;
    EXPECT_DOUBLE_EQ(slowest->mean_span_ns, spans[slowest->number].first / spans[slowest->number].second);
    EXPECT_LT(slowest->start_ns, slowest->end_ns);
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

TEST(OverviewLayout, RankWithoutGpuWorkKeepsAnEmptyRow) {
  // A summary of two ranks, one without GPU work (no overview): its row exists, is empty in every column and
  // never an outlier candidate; with no rank at all the grid has no columns.
  auto loaded = load_trace(test::shared_trace("hta/trace_diff/test/test.json.gz"));
  if (!loaded) GTEST_SKIP() << "hta/trace_diff is not available";
  ProfileSummary s = *loaded->summary;
  ASSERT_EQ(s.ranks.size(), 1u);
  RankSummary idle;
  idle.rank = s.ranks[0].rank + 1;
  s.ranks.push_back(idle);
  const OverviewGrid grid = overview_grid(s);
  EXPECT_EQ(grid.has_work, (std::vector<std::uint8_t>{1, 0}));
  const auto order = overview_order(s, OverviewSort::kLateness);
  const OverviewMap map = overview_map(grid, order, OverviewMetric::kIdle, 100, 100);
  EXPECT_EQ(map.rows, 2);
  const std::int64_t idle_row = s.ranks[order[0]].rank == idle.rank ? 0 : 1;
  for (std::int64_t c = 0; c < map.columns; ++c) {
    EXPECT_EQ(map.at(idle_row, c), -1.0f);
    EXPECT_EQ(map.arg_at(idle_row, c), -1);
  }
  EXPECT_FALSE(slowest_step(ProfileSummary{}).has_value());
  EXPECT_EQ(overview_grid(ProfileSummary{}).columns, 0);
}

// Ranks far apart in time (an ordinary import of traces recorded apart, or years apart in a hostile file):
// the grid holds each rank's own buckets only, and the map is bounded by the pixels asked for. Was: a dense
// grid of ranks × (span ÷ finest bucket): 30 minutes apart, std::bad_alloc; 3 minutes apart, 4.2 GB.
TEST(OverviewLayout, MemoryIsBoundedByTheBucketsNotTheTimeSpan) {
  for (const TimeNs apart : {TimeNs{180'000'000'000}, TimeNs{1'800'000'000'000}, TimeNs{1} << 61}) {
    ProfileSummary s;
    for (int k = 0; k < 3; ++k) {
      RankSummary r;
      r.rank = k;
      r.overview.bucket_log2 = 12;  // 4 us buckets: 1 ms of work in 245 of them
      r.overview.first_bucket = (k == 2 ? apart : TimeNs{k} * 1'000'000) >> 12;
      r.overview.buckets.assign(245, OverviewBucket{.compute_ns = 2048, .busy_ns = 2048, .span_ns = 4096});
      s.ranks.push_back(r);
    }
    const OverviewGrid grid = overview_grid(s);
    std::size_t cells = 0;
    for (const auto& row : grid.rows_cells) cells += row.cells.size();
    EXPECT_EQ(cells, 3u * 245u) << apart;
    EXPECT_GT(grid.columns, 1'000'000) << apart;
    const auto order = overview_order(s, OverviewSort::kRank);
    const OverviewMap map = overview_map(grid, order, OverviewMetric::kCompute, 100, 800);
    EXPECT_LE(map.columns, 800);
    EXPECT_EQ(map.rows, 3);
    // The drawn cells still show each rank's work where it ran, and nothing between.
    int shown = 0;
    for (std::int64_t r = 0; r < map.rows; ++r) {
      for (std::int64_t c = 0; c < map.columns; ++c) shown += map.at(r, c) >= 0 ? 1 : 0;
    }
    EXPECT_GE(shown, 3) << apart;
    EXPECT_LE(shown, 12) << apart;
    const auto b = merged_bucket(grid, map, 2, map.columns - 1);
    EXPECT_EQ(b.compute_ns, 245 * 2048) << apart;
  }
}

// The Overview panel with no window, and what it reports in the state dump.
simdjson::dom::element overview_of(View& view, simdjson::dom::parser& parser) {
  return parser.parse(view.state_json())["overview"];
}

TEST(OverviewPanel, DrawsEveryRealTraceAndTheGeneratedJob) {
  std::vector<std::unique_ptr<LoadedProfile>> profiles;
  for (const auto& trace : real_traces()) profiles.push_back(load_trace(trace));
  const std::size_t imported = profiles.size();
  profiles.push_back(job());
  int drawn = 0, without_steps = 0, jobs_without_communication = 0;
  for (std::size_t k = 0; k < profiles.size(); ++k) {
    auto& loaded = profiles[k];
    if (!loaded) continue;
    const std::size_t ranks = loaded->summary->ranks.size();
    const bool work = overview_grid(*loaded->summary).columns > 0;
    const auto slowest = slowest_step(*loaded->summary);
    without_steps += slowest || !work ? 0 : 1;
    const bool communicates = std::any_of(loaded->summary->ranks.begin(), loaded->summary->ranks.end(),
                                          [](const RankSummary& r) { return r.total.comm_ns > 0; });
    jobs_without_communication += communicates ? 0 : 1;
    NullImGui imgui(1400, 800);
    View view(options_for(Panel::kOverview));
    view.set_profile(std::move(loaded));
    for (int i = 0; i < 3; ++i) imgui.frame(view);
    EXPECT_EQ(view.panel(), Panel::kOverview);
    simdjson::dom::parser parser;
    const auto ov = overview_of(view, parser);
    EXPECT_EQ(ov["order"].get_array().size(), ranks);
    EXPECT_EQ(std::int64_t(ov["slowest_step"]), slowest ? slowest->number : -1);
    // Coloured by exposed communication where the job communicates, else by idle time (all zeros otherwise).
    EXPECT_EQ(std::string_view(ov["metric"]), communicates ? "exposed communication" : "idle") << k;
    // `meshscope import` writes the summaries: the panel reads them rather than the events.
    if (k < imported) {
      EXPECT_TRUE(bool(ov["from_tables"])) << real_traces()[k];
    }
    if (work) {
      EXPECT_EQ(std::int64_t(ov["rows"]), static_cast<std::int64_t>(ranks));
      EXPECT_GT(std::int64_t(ov["columns"]), 0);
      EXPECT_GT(double(ov["canvas"].at(2)), double(ov["canvas"].at(0)));
    }
    ++drawn;
  }
  EXPECT_GE(drawn, 7);
  EXPECT_GE(without_steps, 1) << "a profile with GPU work and no steps (saxpy) is drawn too";
  EXPECT_GE(jobs_without_communication, 1) << "a single-GPU trace (resnet50) opens on idle time";
}

TEST(OverviewPanel, ClickOnACellOpensTheTimelineAtThatRankAndTime) {
  auto loaded = job();
  ASSERT_TRUE(loaded);
  const auto straggler_index = [&] {
    for (std::size_t i = 0; i < loaded->profile->ranks().size(); ++i)
      if (loaded->profile->ranks()[i].rank == job_straggler()) return static_cast<std::int64_t>(i);
    return std::int64_t{-1};
  }();
  NullImGui imgui(1400, 900);
  View view(options_for(Panel::kOverview));
  view.set_profile(std::move(loaded));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  simdjson::dom::parser parser;
  auto ov = overview_of(view, parser);
  EXPECT_EQ(std::int64_t(ov["ranks_per_row"]), 1);
  // Rows by rank: row r is rank r. Click the straggler's row in the middle column.
  const std::int64_t row = job_straggler();
  const std::int64_t column = std::int64_t(ov["columns"]) / 2;
  const double x0 = double(ov["canvas"].at(0)), y0 = double(ov["canvas"].at(1)),
               x1 = double(ov["canvas"].at(2));
  const double row_h = double(ov["row_h"]);
  const double col_w = (x1 - x0) / static_cast<double>(std::int64_t(ov["columns"]));
  const TimeNs start = std::int64_t(ov["start_ns"]) + std::int64_t(ov["column_ns"]) * column;
  const TimeNs width = std::int64_t(ov["column_ns"]);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(static_cast<float>(x0 + col_w * (static_cast<double>(column) + 0.5)),
                       static_cast<float>(y0 + row_h * (static_cast<double>(row) + 0.5)));
  imgui.frame(view);
  io.MouseDown[0] = true;
  imgui.frame(view);
  io.MouseDown[0] = false;
  imgui.frame(view);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_EQ(view.panel(), Panel::kTimeline);
  EXPECT_EQ(view.time_start(), start);
  EXPECT_EQ(view.time_end(), start + width);
  simdjson::dom::parser p2;
  const auto tl = p2.parse(view.state_json())["timeline"];
  EXPECT_TRUE(bool(tl["rank_open"].at(static_cast<std::size_t>(straggler_index))));
  // The rank's header row was scrolled into the rows' visible part.
  bool shown = false;
  for (auto r : tl["rows"].get_array()) {
    if (std::string_view(r["kind"]) != "header" || std::int64_t(r["rank"]) != job_straggler()) continue;
    const double y = double(r["y"]);
    shown = y >= double(tl["canvas"]["rows_top"]) - 1 && y < double(tl["canvas"]["rows_bottom"]);
  }
  EXPECT_TRUE(shown) << "rank " << job_straggler() << "'s header is in view";
}

}  // namespace
}  // namespace meshscope::gui
