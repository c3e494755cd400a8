// Loading some ranks of a profile (the view's lazy ranks): where each rank's rows lie
// (profiler/rank_rows.hpp), Profile::load_ranks and with_ranks, the analysis of some ranks (measure::combine)
// and the whole job's analysis from the summaries (analysis_of_summary). On a real two-rank Kineto job (HTA's
// trace_filter) and on generated jobs, imported (each rank's rows together) and written by the generator
// (ranks taking turns row by row).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "analysis/measure/measure.hpp"
#include "analysis/measure/summary.hpp"
#include "collectors/import/import.hpp"
#include "job/rank_stream.hpp"
#include "job/summaries.hpp"
#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/rank_rows.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/summary_store.hpp"
#include "tests/measure/generated_jobs.hpp"
#include "tests/profile_compare.hpp"

namespace meshscope {
namespace {

namespace fs = std::filesystem;

fs::path tmp(const std::string& name) {
  return fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
}

// HTA's trace_filter job (two ranks), imported once.
const fs::path& real_job() {
  static const fs::path out = [] {
    const fs::path p = tmp("lazy-real") += ".msdb";
    fs::remove(p);
    import_traces({fs::path(MESHSCOPE_SHARED_DIR) / "traces/hta/trace_filter"}, p);
    add_summaries(p);  // as `meshscope import` does
    return p;
  }();
  return out;
}

// A generated 6-rank job as Kineto traces, imported (as users' jobs are): each rank's rows together.
const fs::path& imported_job() {
  static const fs::path out = test::import_generated_job("lazy-gen", 6, 3000);
  return out;
}

// The same job written by the generator as a profile: its ranks take turns row by row.
const fs::path& interleaved_job() {
  static const fs::path out = [] {
    const fs::path p = tmp("lazy-interleaved") += ".msdb";
    fs::remove(p);
    const std::string command =
        fmt::format("'{}' --ranks 6 --events-per-rank 3000 --format msdb -q -o '{}' > /dev/null",
                    MESHSCOPE_GEN_JOB, p.string());
    return std::system(command.c_str()) == 0 ? p : fs::path();
  }();
  return out;
}

std::array<std::int64_t, kEventTableCount> rows_of(const Rank& r) {
  return {static_cast<std::int64_t>(r.activities.size()), static_cast<std::int64_t>(r.api_calls.size()),
          static_cast<std::int64_t>(r.ranges.size()), static_cast<std::int64_t>(r.collectives.size()),
          static_cast<std::int64_t>(r.flows.size())};
}

RankRowIndex exact_index(const fs::path& path) {
  RankRowIndex index;
  for (int t = 0; t < kEventTableCount; ++t) index_table_exactly(path, static_cast<EventTable>(t), index);
  return index;
}

void expect_same_runs(const RankRowIndex& probed, const RankRowIndex& exact) {
  ASSERT_EQ(probed.ranks.size(), exact.ranks.size());
  for (const auto& [rank, rows] : exact.ranks) {
    for (int t = 0; t < kEventTableCount; ++t) {
      EXPECT_EQ(probed.rows_of(rank).runs[static_cast<std::size_t>(t)],
                rows.runs[static_cast<std::size_t>(t)])
          << "rank " << rank << " table " << table_name(static_cast<EventTable>(t));
    }
  }
}

// [SECTION] Where each rank's rows lie

TEST(RankRows, ProbedRunsAreTheExactOnesOnImportedJobs) {
  for (const fs::path& path : {real_job(), imported_job()}) {
    SCOPED_TRACE(path.string());
    ASSERT_FALSE(path.empty());
    const Profile whole = Profile::load(path);
    ExpectedRows expected;
    std::int64_t rows = 0;
    for (const Rank& r : whole.ranks()) {
      expected[r.rank] = rows_of(r);
      for (std::int64_t n : expected[r.rank]) rows += n;
    }
    const RankRowIndex exact = exact_index(path);
    // One run per rank and table: import writes each rank's rows together.
    for (const auto& [rank, r] : exact.ranks) {
      for (const auto& runs : r.runs) EXPECT_LE(runs.size(), 1u) << "rank " << rank;
    }
    const RankRowIndex searched = index_rank_rows(path);
    expect_same_runs(searched, exact);
    const RankRowIndex confirmed = index_rank_rows(path, &expected);
    expect_same_runs(confirmed, exact);
    // Counts confirm a run with two probes: far fewer than the rows.
    EXPECT_LE(confirmed.probes, searched.probes);
    EXPECT_LT(confirmed.probes, rows / 10);
  }
}

// Counts that are wrong (a stale summary) only cost probes: the runs found are still the exact ones.
TEST(RankRows, WrongCountsAreNotBelieved) {
  const fs::path& path = imported_job();
  ASSERT_FALSE(path.empty());
  ExpectedRows wrong;
  const Profile whole = Profile::load(path);
  for (const Rank& r : whole.ranks()) {
    auto rows = rows_of(r);
    for (auto& n : rows) n = n / 2 + 1;
    wrong[r.rank] = rows;
  }
  expect_same_runs(index_rank_rows(path, &wrong), exact_index(path));
}

// Ranks taking turns row by row make as many runs as rows: the tables are marked to be read whole.
TEST(RankRows, RanksTakingTurnsMarkTheTableWhole) {
  const fs::path& path = interleaved_job();
  ASSERT_FALSE(path.empty());
  const RankRowIndex index = index_rank_rows(path);
  EXPECT_TRUE(index.whole[static_cast<std::size_t>(EventTable::kActivities)]);
  const RankRows rows = index.rows_of(3);
  ASSERT_EQ(rows[EventTable::kActivities].size(), 1u);
  EXPECT_EQ(rows[EventTable::kActivities][0].first, std::numeric_limits<std::int64_t>::min());
}

// [SECTION] Loading some ranks

void expect_ranks_load_alone(const fs::path& path, const RankRowIndex& index) {
  const Profile whole = Profile::load(path);
  const Profile description = Profile::load(path, LoadOptions{.events = false});
  for (const Rank& r : description.ranks()) EXPECT_FALSE(r.events_loaded);
  for (const Rank& expected : whole.ranks()) {
    SCOPED_TRACE(expected.rank);
    const RankRows rows = index.rows_of(expected.rank);
    const LoadedRanks got = Profile::load_ranks(description, std::span<const RankRows>(&rows, 1));
    ASSERT_EQ(got.ranks.size(), 1u);
    EXPECT_TRUE(got.ranks[0]->events_loaded);
    expect_same_rank(expected, *got.ranks[0]);
    EXPECT_EQ(got.ranks[0]->hostname, expected.hostname);
    EXPECT_EQ(got.ranks[0]->devices.size(), expected.devices.size());
    EXPECT_EQ(got.ranks[0]->process_groups.size(), expected.process_groups.size());
    // Collective sources are strings the table does not hold: the same ids as the whole load's.
    for (const Collective& c : got.ranks[0]->collectives)
      EXPECT_EQ((*got.strings)[c.source], whole.str(c.source));
  }
}

// The shared Nsight export: one rank with the OS's record of its threads.
const fs::path& nsys_job() {
  static const fs::path out = [] {
    const fs::path p = tmp("lazy-nsys") += ".msdb";
    fs::remove(p);
    import_traces({fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys/saxpy_mpi_cuda_a100.sqlite"}, p);
    return p;
  }();
  return out;
}

TEST(LoadRanks, EachRankLoadsAsTheWholeProfileHoldsIt) {
  ASSERT_EQ(Profile::load(nsys_job()).counts().cpu_sample, 5451);
  for (const fs::path& path : {real_job(), imported_job(), nsys_job()}) {
    SCOPED_TRACE(path.string());
    ASSERT_FALSE(path.empty());
    expect_ranks_load_alone(path, index_rank_rows(path));
  }
}

TEST(LoadRanks, ARankOfTablesReadWholeLoadsTheSame) {
  const fs::path& path = interleaved_job();
  ASSERT_FALSE(path.empty());
  expect_ranks_load_alone(path, index_rank_rows(path));
}

TEST(LoadRanks, SeveralRanksAtOnceComeInTheOrderAsked) {
  const fs::path& path = imported_job();
  ASSERT_FALSE(path.empty());
  const Profile whole = Profile::load(path);
  const Profile description = Profile::load(path, LoadOptions{.events = false});
  const RankRowIndex index = index_rank_rows(path);
  const std::vector<RankRows> rows = {index.rows_of(4), index.rows_of(1), index.rows_of(3)};
  const LoadedRanks got = Profile::load_ranks(description, rows);
  ASSERT_EQ(got.ranks.size(), 3u);
  expect_same_rank(*whole.find_rank(4), *got.ranks[0]);
  expect_same_rank(*whole.find_rank(1), *got.ranks[1]);
  expect_same_rank(*whole.find_rank(3), *got.ranks[2]);

  // Composed: the loaded ranks' events, shared; the others their description; counts of what is held.
  const Profile composed = description.with_ranks(got.ranks, got.strings);
  ASSERT_EQ(composed.ranks().size(), whole.ranks().size());
  EXPECT_EQ(composed.ranks().ptr(static_cast<std::size_t>(composed.rank_index(1))), got.ranks[1]);
  EXPECT_TRUE(composed.find_rank(4)->events_loaded);
  EXPECT_FALSE(composed.find_rank(0)->events_loaded);
  EXPECT_TRUE(composed.find_rank(0)->activities.empty());
  EventCounts held;
  for (const auto& r : got.ranks) held += count_events(*r);
  EXPECT_EQ(composed.counts().kernel, held.kernel);
  EXPECT_EQ(composed.counts().cpu_op, held.cpu_op);
  EXPECT_EQ(composed.path(), whole.path());
}

TEST(LoadRanks, RefusesARankTheProfileDoesNotHold) {
  const fs::path& path = imported_job();
  ASSERT_FALSE(path.empty());
  const Profile description = Profile::load(path, LoadOptions{.events = false});
  RankRows rows;
  rows.rank = 99;
  try {
    Profile::load_ranks(description, std::span<const RankRows>(&rows, 1));
    FAIL() << "a rank not in the profile was loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 99"), std::string::npos) << e.what();
  }
}

// Without CPU operators, load_checked takes the operators it leaves out from the summaries instead of
// counting them over the table again: the same counts as a load that counts them. A summary claiming more
// ranges than the rank's rows span is not believed (the load counts them).
TEST(LoadChecked, OperatorsLeftOutAreTheSummariesCountsWhenPlausible) {
  const fs::path& imported = imported_job();
  ASSERT_FALSE(imported.empty());
  const fs::path path = tmp("lazy-left-out") += ".msdb";
  fs::copy_file(imported, path, fs::copy_options::overwrite_existing);
  const LoadOptions without{.cpu_operators = false};
  const std::vector<std::int32_t> asked = {1, 2, 4};
  auto counted = [&] {
    const Profile description = Profile::load(path, LoadOptions{.events = false});
    const RankRowIndex index = index_rank_rows(path);
    std::vector<RankRows> rows;
    for (std::int32_t r : asked) rows.push_back(index.rows_of(r));
    return Profile::load_ranks(description, rows, without).counts;
  };
  auto checked = [&] {
    const Profile description = Profile::load(path, LoadOptions{.events = false});
    const auto summary = read_summary(path, true);
    RankRowIndex index = index_summarised_ranks(path, *summary);
    auto strings = description.strings();
    EventCounts counts;
    const auto got = load_checked(description, *summary, index, asked, strings, without, &counts);
    EXPECT_EQ(got.size(), asked.size());
    return counts;
  };
  const EventCounts expected = counted();
  ASSERT_GT(expected.cpu_op, 0);
  EventCounts got = checked();
  EXPECT_EQ(got.cpu_op, expected.cpu_op);
  EXPECT_EQ(got.python_function, expected.python_function);
  EXPECT_EQ(got.annotation, expected.annotation);
  EXPECT_EQ(got.kernel, expected.kernel);

  {
    sql::Database db(path, false);
    db.exec("UPDATE summary_ranks SET n_cpu_op = n_cpu_op + 1000000000 WHERE rank = 2");
  }
  got = checked();
  EXPECT_EQ(got.cpu_op, expected.cpu_op);
  fs::remove(path);
}

// [SECTION] The analysis of some ranks

TEST(Combine, OfEveryRankIsAnalyze) {
  const Profile p = Profile::load(real_job());
  const measure::Analysis whole = measure::analyze(p);
  measure::RankAnalyzer analyzer;
  std::vector<measure::RankPart> parts;
  for (std::size_t r = 0; r < p.ranks().size(); ++r) parts.push_back(analyzer.analyze(p, r));
  const measure::Analysis combined = measure::combine(p, std::move(parts));
  ASSERT_EQ(combined.ranks.size(), whole.ranks.size());
  for (std::size_t r = 0; r < whole.ranks.size(); ++r) {
    EXPECT_EQ(combined.ranks[r].total.busy_ns, whole.ranks[r].total.busy_ns);
    EXPECT_EQ(combined.ranks[r].total.exposed_comm_ns, whole.ranks[r].total.exposed_comm_ns);
    EXPECT_EQ(combined.ranks[r].classes, whole.ranks[r].classes);
    EXPECT_EQ(combined.ranks[r].collective_wait_ns, whole.ranks[r].collective_wait_ns);
  }
  EXPECT_EQ(combined.collectives.instances.size(), whole.collectives.instances.size());
  EXPECT_EQ(combined.collectives.matched, whole.collectives.matched);
  EXPECT_EQ(combined.notes, whole.notes);
}

// A rank's own figures do not depend on which other ranks are loaded; the ranks left out are not mentioned.
TEST(Combine, OfSomeRanksGivesTheirOwnFigures) {
  const fs::path& path = imported_job();
  ASSERT_FALSE(path.empty());
  const Profile whole = Profile::load(path);
  const measure::Analysis full = measure::analyze(whole);
  const Profile description = Profile::load(path, LoadOptions{.events = false});
  const RankRowIndex index = index_rank_rows(path);
  const std::vector<RankRows> rows = {index.rows_of(2), index.rows_of(5)};
  const LoadedRanks got = Profile::load_ranks(description, rows);
  const Profile some = description.with_ranks(got.ranks, got.strings);
  measure::RankAnalyzer analyzer;
  std::vector<measure::RankPart> parts(some.ranks().size());
  std::vector<std::uint8_t> analysed(some.ranks().size(), 0);
  for (std::int32_t rank : {2, 5}) {
    const auto ri = static_cast<std::size_t>(some.rank_index(rank));
    parts[ri] = analyzer.analyze(some, ri);
    analysed[ri] = 1;
  }
  const measure::Analysis a = measure::combine(some, std::move(parts), analysed);
  for (std::int32_t rank : {2, 5}) {
    const auto ri = static_cast<std::size_t>(some.rank_index(rank));
    EXPECT_EQ(a.ranks[ri].total.busy_ns, full.ranks[ri].total.busy_ns);
    EXPECT_EQ(a.ranks[ri].total.compute_ns, full.ranks[ri].total.compute_ns);
    EXPECT_EQ(a.ranks[ri].steps.size(), full.ranks[ri].steps.size());
    EXPECT_EQ(a.ranks[ri].classes, full.ranks[ri].classes);
  }
  const auto r0 = static_cast<std::size_t>(some.rank_index(0));
  EXPECT_EQ(a.ranks[r0].rank, 0);
  EXPECT_EQ(a.ranks[r0].total.span_ns, 0);
  for (const auto& note : a.notes) EXPECT_EQ(note.find("rank 0 "), std::string::npos) << note;
  // A rank marked as left out must not hold events.
  std::vector<measure::RankPart> none(some.ranks().size());
  EXPECT_THROW(measure::combine(some, std::move(none), std::vector<std::uint8_t>(some.ranks().size(), 0)),
               std::invalid_argument);
}

// The whole job's figures from the summaries import wrote equal the analysis of every event.
TEST(AnalysisOfSummary, MatchesTheAnalysisOfTheEvents) {
  const fs::path& path = imported_job();
  ASSERT_FALSE(path.empty());
  const Profile whole = Profile::load(path);
  const measure::Analysis full = measure::analyze(whole);
  const auto summary = read_summary(path);
  ASSERT_TRUE(summary);
  const Profile description = Profile::load(path, LoadOptions{.events = false});
  const measure::Analysis a = measure::analysis_of_summary(description, *summary);
  ASSERT_EQ(a.ranks.size(), full.ranks.size());
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    EXPECT_EQ(a.ranks[r].rank, full.ranks[r].rank);
    EXPECT_EQ(a.ranks[r].total.busy_ns, full.ranks[r].total.busy_ns);
    EXPECT_EQ(a.ranks[r].total.exposed_comm_ns, full.ranks[r].total.exposed_comm_ns);
    ASSERT_EQ(a.ranks[r].steps.size(), full.ranks[r].steps.size());
    for (std::size_t s = 0; s < a.ranks[r].steps.size(); ++s) {
      EXPECT_EQ(a.ranks[r].steps[s].number, full.ranks[r].steps[s].number);
      EXPECT_EQ(a.ranks[r].steps[s].gpu.span_ns, full.ranks[r].steps[s].gpu.span_ns);
    }
    ASSERT_EQ(a.ranks[r].kernels.size(), full.ranks[r].kernels.size());
    TimeNs kernels = 0, expected = 0;
    for (const auto& k : a.ranks[r].kernels) kernels += k.total_ns;
    for (const auto& k : full.ranks[r].kernels) expected += k.total_ns;
    EXPECT_EQ(kernels, expected);
  }
  std::int64_t count = 0, expected_count = 0;
  TimeNs total = 0, expected_total = 0;
  for (const auto& s : a.collectives.stats) count += s.count, total += s.total_ns;
  for (const auto& s : full.collectives.stats) expected_count += s.count, expected_total += s.total_ns;
  EXPECT_EQ(count, expected_count);
  EXPECT_EQ(total, expected_total);
  ASSERT_FALSE(a.collectives.stats.empty());
  EXPECT_GT(a.collectives.stats.front().busbw_gbps, 0.0);
}

}  // namespace
}  // namespace meshscope
