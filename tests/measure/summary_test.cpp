// Summaries (analysis/measure/summary.hpp) on real traces: `import` writes them; what is
// read back equals what the analysis of the events gives; the overview's buckets add up to the rank's
// breakdown; diff from the summaries equals diff from the events; `info` on a summarised profile reads no
// event at all; damaged summary tables are refused naming the file and the table.
#include "analysis/measure/summary.hpp"
#include "job/import_job.hpp"
#include "job/summaries.hpp"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/measure/diff.hpp"
#include "profiler/error.hpp"
#include "profiler/summary_store.hpp"
#include "tests/measure/cli_test_util.hpp"
#include "tests/measure/generated_jobs.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::measure {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kTraces = fs::path(MESHSCOPE_SHARED_DIR) / "traces";

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("summary-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string meshscope(const std::string& arguments, const fs::path& dir,
                      const std::string& environment = "") {
  return test::run_cli_ok(arguments, dir, environment);
}

fs::path import(const std::string& name, const std::string& traces) {
  const fs::path dir = scratch(name);
  const fs::path profile = dir / "p.msdb";
  meshscope("import " + traces + " -o '" + profile.string() + "' -q", dir);
  return profile;
}

void sql(const fs::path& path, const std::string& statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

void expect_same_breakdown(const Breakdown& a, const Breakdown& b, const std::string& where) {
  EXPECT_EQ(a.start_ns, b.start_ns) << where;
  EXPECT_EQ(a.end_ns, b.end_ns) << where;
  EXPECT_EQ(a.busy_ns, b.busy_ns) << where;
  EXPECT_EQ(a.idle_ns, b.idle_ns) << where;
  EXPECT_EQ(a.compute_ns, b.compute_ns) << where;
  EXPECT_EQ(a.comm_ns, b.comm_ns) << where;
  EXPECT_EQ(a.memory_only_ns, b.memory_only_ns) << where;
  EXPECT_EQ(a.exposed_comm_ns, b.exposed_comm_ns) << where;
  EXPECT_EQ(a.activities, b.activities) << where;
}

// What the tables hold is what the analysis of the events gives, row for row.
void expect_same(const ProfileSummary& stored, const ProfileSummary& computed) {
  ASSERT_EQ(stored.ranks.size(), computed.ranks.size());
  EXPECT_EQ(stored.world_size, computed.world_size);
  for (std::size_t i = 0; i < stored.ranks.size(); ++i) {
    const RankSummary& s = stored.ranks[i];
    const RankSummary& c = computed.ranks[i];
    const std::string where = "rank " + std::to_string(c.rank);
    EXPECT_EQ(s.rank, c.rank);
    expect_same_breakdown(s.total, c.total, where);
    EXPECT_EQ(s.step_source, c.step_source) << where;
    EXPECT_EQ(s.kernel_ns, c.kernel_ns) << where;
    EXPECT_EQ(s.training, c.training) << where;
    EXPECT_EQ(s.counts.kernel, c.counts.kernel) << where;
    EXPECT_EQ(s.counts.cpu_op, c.counts.cpu_op) << where;
    EXPECT_EQ(s.counts.runtime, c.counts.runtime) << where;
    EXPECT_EQ(s.counts.collective, c.counts.collective) << where;
    ASSERT_EQ(s.steps.size(), c.steps.size()) << where;
    for (std::size_t k = 0; k < s.steps.size(); ++k) {
      EXPECT_EQ(s.steps[k].number, c.steps[k].number) << where;
      EXPECT_EQ(s.steps[k].cpu_start_ns, c.steps[k].cpu_start_ns) << where;
      expect_same_breakdown(s.steps[k].gpu, c.steps[k].gpu, where + " step " + std::to_string(k));
    }
    ASSERT_EQ(s.streams.size(), c.streams.size()) << where;
    for (std::size_t k = 0; k < s.streams.size(); ++k) {
      EXPECT_EQ(s.streams[k].stream, c.streams[k].stream) << where;
      EXPECT_EQ(s.streams[k].idle.idle_ns, c.streams[k].idle.idle_ns) << where;
      EXPECT_EQ(s.streams[k].idle.host_bound_ns, c.streams[k].idle.host_bound_ns) << where;
    }
    ASSERT_EQ(s.kernels.size(), c.kernels.size()) << where;
    for (std::size_t k = 0; k < s.kernels.size(); ++k) {
      EXPECT_EQ(s.kernels[k].name, c.kernels[k].name) << where;
      EXPECT_EQ(s.kernels[k].cls, c.kernels[k].cls) << where;
      EXPECT_EQ(s.kernels[k].count, c.kernels[k].count) << where;
      EXPECT_EQ(s.kernels[k].total_ns, c.kernels[k].total_ns) << where;
      EXPECT_EQ(s.kernels[k].step_ns, c.kernels[k].step_ns) << where;
    }
    ASSERT_EQ(s.ops.size(), c.ops.size()) << where;
    for (std::size_t k = 0; k < s.ops.size(); ++k) {
      EXPECT_EQ(s.ops[k].name, c.ops[k].name) << where;
      EXPECT_EQ(s.ops[k].self_ns, c.ops[k].self_ns) << where;
    }
    ASSERT_EQ(s.collectives.size(), c.collectives.size()) << where;
    for (std::size_t k = 0; k < s.collectives.size(); ++k) {
      EXPECT_EQ(s.collectives[k].op, c.collectives[k].op) << where;
      EXPECT_EQ(s.collectives[k].bytes, c.collectives[k].bytes) << where;
      EXPECT_EQ(s.collectives[k].total_ns, c.collectives[k].total_ns) << where;
    }
    EXPECT_EQ(s.overview.bucket_log2, c.overview.bucket_log2) << where;
    EXPECT_EQ(s.overview.first_bucket, c.overview.first_bucket) << where;
    ASSERT_EQ(s.overview.buckets.size(), c.overview.buckets.size()) << where;
    for (std::size_t k = 0; k < s.overview.buckets.size(); ++k) {
      EXPECT_EQ(s.overview.buckets[k].busy_ns, c.overview.buckets[k].busy_ns) << where;
      EXPECT_EQ(s.overview.buckets[k].exposed_comm_ns, c.overview.buckets[k].exposed_comm_ns) << where;
    }
  }
}

ProfileSummary computed(const fs::path& path) {
  const Profile p = Profile::load(path);
  return summarize(p, analyze(p));
}

struct Trace {
  const char* name;
  std::string files;
};

// Traces with steps, NCCL collectives, two ranks, an Nsight export, and CPU operators without GPU work.
std::vector<Trace> traces() {
  return {
      {"negative_queue", (kTraces / "hta/negative_queue_length_values_check/rank0.json.gz").string()},
      {"trace_filter", (kTraces / "hta/trace_filter").string()},
      {"resnet50", (kTraces / "kineto/resnet50_num_workers_0").string()},
      {"nsys_mpi", (kTraces / "nsys/saxpy_mpi_cuda_a100.sqlite").string()},
      {"cpu_only", (kTraces / "hta/cpu_only").string()},
  };
}

TEST(Summary, ImportWritesWhatTheAnalysisOfTheEventsGives) {
  for (const Trace& t : traces()) {
    SCOPED_TRACE(t.name);
    const fs::path profile = import(t.name, t.files);
    const auto stored = read_summary(profile);
    ASSERT_TRUE(stored.has_value()) << "import writes summaries";
    EXPECT_TRUE(stored->from_tables);
    expect_same(*stored, computed(profile));
  }
}

// The summary pass of a large profile reads a batch of ranks at a time: the same summaries as from the whole
// profile, the collective wait and transfer (matched across ranks after the batches) included. On the real
// multi-rank traces and a generated job imported as users' jobs are (each rank's rows together).
// SUMMARY equals WHOLE (computed from the events loaded whole), the figures matched across ranks included.
void expect_same_with_waits(const ProfileSummary& summary, const ProfileSummary& whole) {
  expect_same(summary, whole);
  for (std::size_t i = 0; i < whole.ranks.size() && i < summary.ranks.size(); ++i) {
    const RankSummary& b = summary.ranks[i];
    const RankSummary& w = whole.ranks[i];
    EXPECT_EQ(b.collective_wait_ns, w.collective_wait_ns) << "rank " << w.rank;
    EXPECT_EQ(b.collective_transfer_ns, w.collective_transfer_ns) << "rank " << w.rank;
    EXPECT_EQ(b.unlinked_activities, w.unlinked_activities) << "rank " << w.rank;
    EXPECT_EQ(b.counts.annotation, w.counts.annotation) << "rank " << w.rank;
    EXPECT_EQ(b.counts.flow, w.counts.flow) << "rank " << w.rank;
    EXPECT_EQ(b.counts.memcpy, w.counts.memcpy) << "rank " << w.rank;
    ASSERT_EQ(b.ops.size(), w.ops.size());
    for (std::size_t k = 0; k < w.ops.size(); ++k) {
      EXPECT_EQ(b.ops[k].total_ns, w.ops[k].total_ns);
      EXPECT_EQ(b.ops[k].step_ns, w.ops[k].step_ns);
    }
    ASSERT_EQ(b.collectives.size(), w.collectives.size());
    for (std::size_t k = 0; k < w.collectives.size(); ++k) {
      EXPECT_EQ(b.collectives[k].group_size, w.collectives[k].group_size);
      EXPECT_EQ(b.collectives[k].count, w.collectives[k].count);
      EXPECT_EQ(b.collectives[k].step_ns, w.collectives[k].step_ns);
    }
  }
}

void expect_same_in_batches(const fs::path& profile) {
  const std::optional<ProfileSummary> batched = summarize_in_batches(profile, 0);
  ASSERT_TRUE(batched.has_value()) << "its ranks' rows lie together";
  const ProfileSummary whole = computed(profile);
  expect_same_with_waits(*batched, whole);
  // Every rank large (its CPU operators streamed from the file, process groups' calls loaded), each read
  // alone.
  const std::optional<ProfileSummary> streamed = summarize_in_batches(profile, 0, 0, 1);
  ASSERT_TRUE(streamed.has_value());
  expect_same_with_waits(*streamed, whole);
}

TEST(Summary, InBatchesOfRanksEqualsTheWholeProfilesOnRealJobs) {
  for (const Trace& t : {traces()[1], traces()[2]}) {
    SCOPED_TRACE(t.name);
    expect_same_in_batches(import(std::string("batches-") + t.name, t.files));
  }
  const fs::path generated = test::import_generated_job("summary-batches", 5, 2500);
  ASSERT_FALSE(generated.empty());
  expect_same_in_batches(generated);
  // Under the threshold the pass loads the profile whole (nothing to gain from batches).
  EXPECT_FALSE(summarize_in_batches(generated, std::int64_t{1} << 40).has_value());
}

// The summary pass of a large profile streams each rank's CPU operators from the file instead of loading
// them (27.5 million identical operators, each nested in the one before, took 5.9 GB):
// the same summaries as from the events loaded whole. Hand-worked: N identical operators of 1 us nested in
// one another have 1 us of self time between them (the innermost's); a parent listed after its children
// (stored out of order, read back sorted) keeps 10 us of its 30 us.
TEST(Summary, StreamedOperatorsGiveWhatTheLoadedOnesGive) {
  const fs::path dir = scratch("streamed-operators");
  const fs::path trace = dir / "rank0.json";
  {
    std::FILE* f = std::fopen(trace.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("{\"traceEvents\":[\n", f);
    constexpr int kIdentical = 5000;
    for (int i = 0; i < kIdentical; ++i)
      std::fputs(R"({"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":100,"dur":1},)"
                 "\n",
                 f);
    std::fputs(
        R"({"ph":"X","cat":"python_function","name":"train.py(10): step","pid":1,"tid":1,"ts":200,"dur":5},)"
        R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":310,"dur":10},)"
        R"({"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":325,"dur":10},)"
        R"({"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":2,"ts":305,"dur":30},)"
        R"({"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":400,"dur":2})"
        "\n]}\n",
        f);
    std::fclose(f);
  }
  const fs::path profile = import("streamed-operators-profile", "'" + trace.string() + "'");
  // Every rank large: its operators streamed.
  const std::optional<ProfileSummary> batched = summarize_in_batches(profile, 0, 0, 1);
  ASSERT_TRUE(batched.has_value());
  const ProfileSummary whole = computed(profile);
  expect_same_with_waits(*batched, whole);
  ASSERT_EQ(batched->ranks.size(), 1u);
  const RankSummary& r = batched->ranks[0];
  EXPECT_EQ(r.counts.cpu_op, 5004);
  EXPECT_EQ(r.counts.python_function, 1);
  std::map<std::string, OpSummary> ops;
  for (const OpSummary& op : r.ops) ops[op.name] = op;
  EXPECT_EQ(ops["aten::add"].count, 5000);
  EXPECT_EQ(ops["aten::add"].total_ns, 5'000'000);
  EXPECT_EQ(ops["aten::add"].self_ns, 1'000);
  EXPECT_EQ(ops["aten::linear"].self_ns, 10'000);
  EXPECT_EQ(ops["aten::mm"].self_ns, 20'000);
  for (std::size_t i = 0; i < whole.ranks[0].ops.size() && i < r.ops.size(); ++i) {
    EXPECT_EQ(r.ops[i].count, whole.ranks[0].ops[i].count);
    EXPECT_EQ(r.ops[i].self_step_ns, whole.ranks[0].ops[i].self_step_ns);
  }
  EXPECT_EQ(r.counts.python_function, whole.ranks[0].counts.python_function);
}

// The summaries an import computes from the rows it has just read, each rank on a reading thread, and the
// collectives matched once the profile is written (ImportSummaries): the same as the analysis of the events
// read back, the collective wait and transfer included. On every real Kineto job here, one file or several
// (read on two threads, so that a single file is read ahead too), and on a generated job whose ranks'
// collectives match across files.
void expect_summarised_while_importing(const std::string& name, const std::vector<fs::path>& inputs) {
  SCOPED_TRACE(name);
  const fs::path profile = scratch("while-" + name) / "p.msdb";
  ImportSummaries summaries;
  ImportOptions options;
  options.threads = 2;
  options.each_rank_read = [&](const fs::path& file, const RankRecords& rows) { summaries.add(file, rows); };
  const ImportSummary imported = import_traces(inputs, profile, options);
  std::vector<std::pair<std::int32_t, std::string>> rank_files;
  for (const ImportedRank& r : imported.ranks) rank_files.emplace_back(r.rank, r.source_file);
  const std::optional<ProfileSummary> read =
      summaries.combined(Profile::load(profile, LoadOptions{.events = false}), rank_files);
  ASSERT_TRUE(read.has_value()) << "every rank was summarised from the rows read";
  expect_same_with_waits(*read, computed(profile));
}

TEST(Summary, ComputedWhileImportingEqualsTheAnalysisOfTheEvents) {
  for (const Trace& t : traces()) {
    if (std::string(t.name) == "nsys_mpi") continue;  // an Nsight Systems export is written as it is read
    expect_summarised_while_importing(t.name, {t.files});
  }
  expect_summarised_while_importing("critical_path", {kTraces / "hta/critical_path/alexnet"});
  expect_summarised_while_importing("tracelens", {kTraces / "tracelens/h100_qwen1.5_0.5b_inference.json.gz"});
  expect_summarised_while_importing("sample_job",
                                    {fs::path(MESHSCOPE_SOURCE_DIR) / "assets/sample/sample_job"});
  const fs::path traces = test::scratch("while-generated-traces");
  const std::string command =
      fmt::format("'{}' --ranks 6 --events-per-rank 3000 --format kineto-gz -q -o '{}' > /dev/null",
                  MESHSCOPE_GEN_JOB, traces.string());
  ASSERT_EQ(std::system(command.c_str()), 0);
  expect_summarised_while_importing("generated", {traces});
}

// The import summarises each file's rank with the file's own string ids, reusing a reading thread's
// analyzer: its cache of name rules per string id must not carry over to a profile whose ids name other
// texts (found by fuzz_kineto: a kernel classed by the name an earlier file gave its id).
TEST(Summary, AnAnalyzerClassifiesEachProfileByItsOwnStrings) {
  const std::string comm = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  const std::string gemm = "volta_sgemm_128x64_nn";
  const std::vector<const std::string*> strings_a{&comm}, strings_b{&gemm};
  std::vector<ActivityRecord> kernel(1);
  kernel[0].start_ns = 1000;
  kernel[0].end_ns = 2000;
  kernel[0].name = 1;  // the same id in both: other texts
  RankRecords rows;
  rows.activities = kernel;
  rows.strings = strings_a;
  const Profile a = Profile::of_records("a", rows);
  rows.strings = strings_b;
  const Profile b = Profile::of_records("b", rows);
  RankAnalyzer analyzer;
  const RankPart first = analyzer.analyze(a, 0);
  const RankPart second = analyzer.analyze(b, 0);
  ASSERT_EQ(first.result.kernels.size(), 1u);
  ASSERT_EQ(second.result.kernels.size(), 1u);
  EXPECT_EQ(first.result.kernels[0].cls, ActivityClass::kComm);
  EXPECT_EQ(second.result.kernels[0].cls, ActivityClass::kCompute);
}

// What the rows read cannot give is left to the pass: an Nsight Systems export (written as it is read), and
// a profile holding a rank no file summarised. The import still writes summaries that equal the events'.
TEST(Summary, ImportFallsBackToThePassForRanksNotSummarisedWhileReading) {
  {
    ImportSummaries summaries;
    const fs::path profile = scratch("while-nsys") / "p.msdb";
    ImportOptions options;
    options.each_rank_read = [&](const fs::path& file, const RankRecords& rows) {
      summaries.add(file, rows);
    };
    const ImportSummary imported =
        import_traces({kTraces / "nsys/saxpy_mpi_cuda_a100.sqlite"}, profile, options);
    std::vector<std::pair<std::int32_t, std::string>> rank_files;
    for (const ImportedRank& r : imported.ranks) rank_files.emplace_back(r.rank, r.source_file);
    EXPECT_FALSE(
        summaries.combined(Profile::load(profile, LoadOptions{.events = false}), rank_files).has_value());
  }
  {
    // Two files read, one of them named for a rank the profile does not hold: nothing is taken from them.
    ImportSummaries summaries;
    const fs::path profile = scratch("while-missing") / "p.msdb";
    ImportOptions options;
    options.threads = 2;
    options.each_rank_read = [&](const fs::path& file, const RankRecords& rows) {
      summaries.add(file, rows);
    };
    const ImportSummary imported = import_traces({kTraces / "hta/trace_filter"}, profile, options);
    ASSERT_EQ(imported.ranks.size(), 2u);
    std::vector<std::pair<std::int32_t, std::string>> rank_files;
    for (const ImportedRank& r : imported.ranks) rank_files.emplace_back(r.rank, r.source_file);
    EXPECT_TRUE(
        summaries.combined(Profile::load(profile, LoadOptions{.events = false}), rank_files).has_value());
    rank_files.back().second += ".elsewhere";
    EXPECT_FALSE(
        summaries.combined(Profile::load(profile, LoadOptions{.events = false}), rank_files).has_value());
    rank_files.pop_back();
    EXPECT_FALSE(
        summaries.combined(Profile::load(profile, LoadOptions{.events = false}), rank_files).has_value());
  }
  for (const char* name : {"nsys", "trace_filter"}) {
    SCOPED_TRACE(name);
    const fs::path profile = scratch(std::string("with-") + name) / "p.msdb";
    import_with_summaries({name == std::string("nsys") ? kTraces / "nsys/saxpy_mpi_cuda_a100.sqlite"
                                                       : kTraces / "hta/trace_filter"},
                          profile);
    const auto stored = read_summary(profile);
    ASSERT_TRUE(stored.has_value());
    expect_same(*stored, computed(profile));
  }
}

// Rows out of their rank's run (a profile edited after import: an API call of rank 1 and one of rank 2 trade
// ranks in the middle of their runs): the probed runs miss them, the rows read do not add up to the table's,
// and the pass falls back to the whole profile; the summaries stay right.
TEST(Summary, InBatchesFallsBackWhenTheRunsMissRows) {
  const fs::path generated = test::import_generated_job("summary-moved", 4, 2000);
  ASSERT_FALSE(generated.empty());
  sql(generated,
      "UPDATE api_calls SET rank = 3 - rank WHERE id IN ("
      "(SELECT id FROM api_calls WHERE rank = 1 ORDER BY id LIMIT 1 OFFSET 100), "
      "(SELECT id FROM api_calls WHERE rank = 2 ORDER BY id LIMIT 1 OFFSET 100))");
  EXPECT_FALSE(summarize_in_batches(generated, 0).has_value());
  add_summaries(generated, 0);
  const auto stored = read_summary(generated);
  ASSERT_TRUE(stored.has_value());
  expect_same(*stored, computed(generated));
}

TEST(Summary, OverviewBucketsAddUpToTheRanksBreakdown) {
  for (const Trace& t : traces()) {
    SCOPED_TRACE(t.name);
    const auto summary = read_summary(import(t.name, t.files));
    ASSERT_TRUE(summary.has_value());
    for (const RankSummary& r : summary->ranks) {
      const Overview& ov = r.overview;
      if (r.total.activities == 0) continue;
      ASSERT_FALSE(ov.buckets.empty()) << "rank " << r.rank;
      EXPECT_LE(static_cast<std::int64_t>(ov.buckets.size()), kOverviewBuckets + 1);
      // The narrowest power of two: half the width would need more than kOverviewBuckets buckets.
      if (ov.bucket_log2 > 0) {
        EXPECT_GT(r.total.span_ns, kOverviewBuckets * (ov.bucket_ns() / 2));
      }
      EXPECT_LE(ov.first_bucket * ov.bucket_ns(), r.total.start_ns);
      OverviewBucket sum;
      for (const OverviewBucket& b : ov.buckets) {
        EXPECT_LE(b.busy_ns, b.span_ns);
        EXPECT_LE(b.span_ns, ov.bucket_ns());
        sum.compute_ns += b.compute_ns;
        sum.comm_ns += b.comm_ns;
        sum.exposed_comm_ns += b.exposed_comm_ns;
        sum.memory_only_ns += b.memory_only_ns;
        sum.busy_ns += b.busy_ns;
        sum.span_ns += b.span_ns;
      }
      EXPECT_EQ(sum.compute_ns, r.total.compute_ns);
      EXPECT_EQ(sum.comm_ns, r.total.comm_ns);
      EXPECT_EQ(sum.exposed_comm_ns, r.total.exposed_comm_ns);
      EXPECT_EQ(sum.memory_only_ns, r.total.memory_only_ns);
      EXPECT_EQ(sum.busy_ns, r.total.busy_ns);
      EXPECT_EQ(sum.span_ns, r.total.span_ns);
    }
  }
}

TEST(Summary, DiffFromTheSummariesEqualsDiffFromTheEvents) {
  const fs::path a = import("compare_base", (kTraces / "hta/trace_compare/base").string());
  const fs::path b = import("compare_test", (kTraces / "hta/trace_compare/test").string());
  const Profile pa = Profile::load(a), pb = Profile::load(b);
  const Diff events = diff_profiles(pa, analyze(pa), pb, analyze(pb));
  const Diff summaries = diff_summaries(*read_summary(a), *read_summary(b));
  EXPECT_EQ(summaries.a.rank_steps, events.a.rank_steps);
  EXPECT_EQ(summaries.b.step_ns, events.b.step_ns);
  EXPECT_EQ(summaries.a.cpu_ops, events.a.cpu_ops);
  EXPECT_EQ(summaries.b.kernel_ns, events.b.kernel_ns);
  ASSERT_EQ(summaries.classes.size(), events.classes.size());
  for (std::size_t i = 0; i < events.classes.size(); ++i) {
    EXPECT_EQ(summaries.classes[i].a_step_ns, events.classes[i].a_step_ns) << events.classes[i].name;
    EXPECT_EQ(summaries.classes[i].b_ns, events.classes[i].b_ns) << events.classes[i].name;
  }
  ASSERT_EQ(summaries.kernels.size(), events.kernels.size());
  ASSERT_FALSE(events.kernels.empty());
  for (std::size_t i = 0; i < events.kernels.size(); ++i) {
    EXPECT_EQ(summaries.kernels[i].name, events.kernels[i].name);
    EXPECT_EQ(summaries.kernels[i].a_step_ns, events.kernels[i].a_step_ns);
    EXPECT_EQ(summaries.kernels[i].b_example, events.kernels[i].b_example);
  }
  ASSERT_EQ(summaries.cpu_ops.size(), events.cpu_ops.size());
  ASSERT_EQ(summaries.headline.size(), events.headline.size());
  for (std::size_t i = 0; i < events.headline.size(); ++i)
    EXPECT_EQ(summaries.headline[i].text, events.headline[i].text);
}

TEST(Summary, InfoReadsTheSummariesNotTheEvents) {
  const fs::path profile = import("info", (kTraces / "hta/trace_filter").string());
  const fs::path dir = profile.parent_path();
  const std::string before = meshscope("info --json '" + profile.string() + "'", dir);
  // Without its events, a summarised profile still tells info everything it prints.
  sql(profile, "DELETE FROM activities; DELETE FROM api_calls; DELETE FROM ranges; DELETE FROM collectives;");
  EXPECT_EQ(meshscope("info --json '" + profile.string() + "'", dir), before);
  EXPECT_THAT(before, HasSubstr("\"kernel\": "));
  EXPECT_THAT(before, Not(HasSubstr("\"kernel\": 0,")));
}

TEST(Summary, ProfilesWithoutSummariesAreSummarisedOnRequest) {
  test::ProfileBuilder builder("no_summary");
  builder.rank(0, 1);
  builder.step(0, 1, 0, 1000, 7);
  builder.launch(0, 1, 10, 20, 7, 100, 600, "gemm");
  builder.finish();
  EXPECT_FALSE(read_summary(builder.path()).has_value()) << "ProfileWriter alone writes no summaries";
  // As a profile of an older meshscope: no summary tables at all.
  for (const char* t : {"summary_ranks", "summary_steps", "summary_streams", "summary_kernels", "summary_ops",
                        "summary_collectives", "summary_overview"})
    sql(builder.path(), std::string("DROP TABLE ") + t);
  add_summaries(builder.path());
  const auto s = read_summary(builder.path());
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->ranks.size(), 1u);
  EXPECT_EQ(s->ranks[0].total.compute_ns, 500);
  EXPECT_EQ(s->ranks[0].kernels.at(0).name, "gemm");
}

// A profile summarised before the OS counts existed reads them as none, and summarising it again adds their
// columns to its tables.
TEST(Summary, CountsAddedSinceAreNoneInOlderSummariesAndWrittenWhenSummarisedAgain) {
  const fs::path profile = import("older", (kTraces / "nsys/saxpy_mpi_cuda_a100.sqlite").string());
  ASSERT_EQ(read_summary(profile)->ranks.at(0).counts.cpu_sample, 5451);
  sql(profile,
      "ALTER TABLE summary_ranks DROP COLUMN n_os_runtime; ALTER TABLE summary_ranks DROP COLUMN "
      "n_on_cpu; ALTER TABLE summary_ranks DROP COLUMN n_cpu_sample");
  const auto older = read_summary(profile);
  ASSERT_TRUE(older.has_value());
  EXPECT_EQ(older->ranks.at(0).counts.on_cpu, 0);
  EXPECT_EQ(older->ranks.at(0).counts.nvtx, 22);
  add_summaries(profile);
  const auto again = read_summary(profile);
  EXPECT_EQ(again->ranks.at(0).counts.on_cpu, 1619);
  EXPECT_EQ(again->ranks.at(0).counts.cpu_sample, 5451);
}

// Which columns were added after summaries were first written is declared in schema.sql ([optional]): an
// older profile without the operators' GPU times reads them as none; a column that was always there and is
// missing is a damaged file, refused naming it.
TEST(Summary, OnlyTheColumnsTheSchemaTagsOptionalMayBeMissing) {
  const fs::path older = import("older-ops", (kTraces / "param/linear_kineto.json.gz").string());
  // The table as it was made before (SQLite's DROP COLUMN trips over the comment after the last column).
  sql(older,
      "CREATE TABLE before AS SELECT rank, name, count, total_ns, self_ns, step_ns, self_step_ns FROM "
      "summary_ops; DROP TABLE summary_ops; ALTER TABLE before RENAME TO summary_ops");
  const auto read = read_summary(older);
  ASSERT_TRUE(read.has_value());
  ASSERT_FALSE(read->ranks.at(0).ops.empty());
  for (const auto& o : read->ranks.at(0).ops) EXPECT_EQ(o.gpu_ns, 0) << o.name;

  const fs::path damaged = import("damaged-shapes", (kTraces / "nsys/saxpy_mpi_cuda_a100.sqlite").string());
  sql(damaged, "ALTER TABLE summary_op_shapes DROP COLUMN gpu_ns");
  try {
    read_summary(damaged);
    FAIL() << "a summary table without a column it always had was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), damaged.string() +
                                         ": summary_op_shapes.gpu_ns is missing or not of the declared type "
                                         "(a damaged file?)");
  }
}

// On real traces: the GPU time the operators launched themselves adds up, over the operators, to the GPU time
// of the activities whose launch call started inside a CPU operator on its thread, counted here directly from
// the events; and no operator launched more than it holds.
TEST(Summary, OperatorsSelfGpuTimeAddsUpToTheActivitiesLaunchedInsideOperators) {
  for (const char* trace : {"tracelens/h100_qwen1.5_0.5b_inference.json.gz", "hta/trace_filter"}) {
    SCOPED_TRACE(trace);
    const fs::path profile =
        import(std::string("opgpu-") + (trace[0] == 't' ? "qwen" : "hta"), (kTraces / trace).string());
    const Profile p = Profile::load(profile);
    const ProfileSummary s = summarize(p, analyze(p));
    TimeNs expected = 0, self = 0;
    for (const Rank& r : p.ranks()) {
      std::map<std::int64_t, std::size_t> call_of;
      for (std::size_t i = 0; i < r.api_calls.size(); ++i)
        if (r.api_calls[i].correlation != kNull) call_of.emplace(r.api_calls[i].correlation, i);
      for (const Activity& a : r.activities) {
        if (a.kind == ActivityKind::kSync) continue;
        const auto call = call_of.find(a.correlation);
        if (a.correlation == kNull || call == call_of.end()) continue;
        const ApiCall& c = r.api_calls[call->second];
        const CallThread& t = r.thread_of(c);
        bool inside = false;
        for (std::size_t k = 0; k < r.tracks.size() && !inside; ++k) {
          if (r.tracks[k].gpu || r.tracks[k].pid != t.pid || r.tracks[k].tid != t.tid) continue;
          for (const CpuRange& op : r.track_ranges(k)) {
            if (op.kind == RangeKind::kCpuOp && op.start_ns <= c.start_ns && c.start_ns < op.end_ns) {
              inside = true;
              break;
            }
          }
        }
        if (inside) expected += a.duration();
      }
    }
    for (const RankSummary& r : s.ranks) {
      for (const OpSummary& o : r.ops) {
        self += o.gpu_self_ns;
        EXPECT_LE(o.gpu_self_ns, o.gpu_ns) << o.name;
      }
    }
    EXPECT_GT(expected, 0);
    EXPECT_EQ(self, expected);
  }
}

// Operators by recorded shapes, on the two ResNet-50 runs of kineto/ (batch 32; one loads its data in the
// training process, num_workers=0, the other in four workers): the GPU time of the shapes adds up to that of
// the counted operators (summed here straight from op_work), and diff matches every shape the model ran on
// both sides with the same calls per step. What one run ran alone is its data loader's per-image work.
TEST(Summary, OperatorsByShapeMatchAcrossRunsOfOneModel) {
  const fs::path a = import("shapes-w0", (kTraces / "kineto/resnet50_num_workers_0").string());
  const fs::path b = import("shapes-w4", (kTraces / "kineto/resnet50_num_workers_4").string());
  const auto sa = read_summary(a), sb = read_summary(b);
  ASSERT_TRUE(sa && sb);
  ASSERT_EQ(sa->ranks.size(), 1u);
  TimeNs shapes_gpu = 0;
  for (const OpShapeSummary& o : sa->ranks[0].op_shapes) {
    shapes_gpu += o.gpu_ns;
    EXPECT_LE(o.gpu_step_ns, o.gpu_ns);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(a.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT sum(kernel_ns) FROM op_work WHERE status = 1", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  const TimeNs counted_gpu = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_GT(counted_gpu, 0);
  EXPECT_EQ(shapes_gpu, counted_gpu);
  EXPECT_LE(shapes_gpu, sa->ranks[0].kernel_ns);

  const Diff d = diff_summaries(*sa, *sb);
  ASSERT_GT(d.op_shapes.size(), 100u);
  std::size_t matched = 0;
  for (const DiffRow& r : d.op_shapes) {
    SCOPED_TRACE(r.name);
    ASSERT_FALSE(r.a_input_dims.empty()) << "every shape of B's run was run by A's";
    if (r.b_input_dims.empty()) {
      EXPECT_THAT(r.a_input_dims, HasSubstr("[3, 224, 224]")) << "one image, loaded in the training process";
      EXPECT_EQ(r.a_gpu_ns, 0);
      continue;
    }
    EXPECT_EQ(r.a_input_dims, r.b_input_dims);
    EXPECT_EQ(r.a_count, r.b_count) << "the same steps of the same model";
    ++matched;
  }
  EXPECT_EQ(matched, d.op_shapes.size() - 2);
  EXPECT_TRUE(d.notes.empty());

  // Summarised before these rows existed: none, a note that operators compare by name only, and summarising
  // again adds them.
  sql(b, "DROP TABLE summary_op_shapes");
  const auto older = read_summary(b);
  ASSERT_TRUE(older.has_value());
  EXPECT_TRUE(older->ranks.at(0).op_shapes.empty());
  const Diff by_name = diff_summaries(*sa, *older);
  ASSERT_EQ(by_name.notes.size(), 1u);
  EXPECT_THAT(by_name.notes[0], HasSubstr("operators compare by name only"));
  add_summaries(b);
  EXPECT_EQ(read_summary(b)->ranks.at(0).op_shapes.size(), sb->ranks.at(0).op_shapes.size());
}

TEST(Summary, DamagedTablesAreRefusedNamingTheFileAndTable) {
  const fs::path profile =
      import("damaged", (kTraces / "hta/negative_queue_length_values_check/rank0.json.gz").string());
  sql(profile, "UPDATE summary_kernels SET class = 9");
  try {
    read_summary(profile);
    FAIL() << "a class of 9 was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(profile.string()));
    EXPECT_THAT(e.what(), HasSubstr("summary_kernels"));
    EXPECT_THAT(e.what(), HasSubstr("class"));
  }
  sql(profile, "UPDATE summary_kernels SET class = 0; DELETE FROM summary_ranks");
  EXPECT_THROW(read_summary(profile), Error) << "rows of a rank without its summary_ranks row";
}

// Runs meshscope ARGUMENTS expecting exit status 1; returns stderr.
std::string meshscope_fails(const std::string& arguments, const fs::path& dir) {
  const test::CliResult r = test::run_cli(arguments, dir);
  EXPECT_EQ(r.status, 1) << arguments;
  return r.err;
}

TEST(Summary, SummariseNextToEachRankThenMergeOnlyTheSummaries) {
  // docs/SCALE.md: each rank's trace summarised where it was written, only the parts brought together, and
  // the events of the one rank a user picks imported whole. info and diff then say what the whole import
  // says.
  const fs::path dir = scratch("parts");
  const fs::path job = dir / "job";
  ASSERT_EQ(std::system((std::string(MESHSCOPE_GEN_JOB) +
                         " --ranks 8 --events-per-rank 3000 --format kineto-gz -o '" + job.string() +
                         "' >/dev/null")
                            .c_str()),
            0);
  const fs::path full = dir / "full.msdb";
  meshscope("import '" + job.string() + "' -o '" + full.string() + "' -q", dir);
  // One process per rank, as a launcher starts them (MESHSCOPE_RANK stands for srun's SLURM_PROCID, ...).
  const fs::path folder = dir / "parts";
  fs::create_directories(folder);
  for (int r = 0; r < 8; ++r) {
    meshscope("summarize '" + job.string() + "' --rank-from-launcher --summaries-only -o '" +
                  folder.string() + "' -q",
              dir, "MESHSCOPE_RANK=" + std::to_string(r));
    const fs::path part = folder / ("part-" + std::to_string(r) + ".msdb");
    ASSERT_TRUE(fs::exists(part));
    EXPECT_LT(fs::file_size(part), fs::file_size(full) / 8) << "a part holds no events";
  }
  // A part summarised before the OS counts existed merges as well: its missing columns read as none.
  sql(folder / "part-5.msdb",
      "ALTER TABLE summary_ranks DROP COLUMN n_os_runtime; ALTER TABLE summary_ranks "
      "DROP COLUMN n_on_cpu; ALTER TABLE summary_ranks DROP COLUMN n_cpu_sample");
  const std::string parts = " '" + folder.string() + "'";
  const fs::path merged = dir / "merged.msdb";
  meshscope("summarize --merge" + parts + " --events '" + (job / "rank-3.json.gz").string() + "' -o '" +
                merged.string() + "' -q",
            dir);
  EXPECT_EQ(meshscope("info --json '" + merged.string() + "'", dir),
            meshscope("info --json '" + full.string() + "'", dir));
  const auto whole = read_summary(full), pieces = read_summary(merged);
  ASSERT_TRUE(whole && pieces);
  ASSERT_EQ(pieces->ranks.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    // Alone, a rank has no peers to wait for: what needs the other ranks' events is all that differs.
    EXPECT_EQ(pieces->ranks[i].total.exposed_comm_ns, whole->ranks[i].total.exposed_comm_ns);
    EXPECT_EQ(pieces->ranks[i].kernels.size(), whole->ranks[i].kernels.size());
    EXPECT_EQ(pieces->ranks[i].overview.buckets.size(), whole->ranks[i].overview.buckets.size());
  }
  const Diff d = diff_summaries(*whole, *pieces);
  for (const ClassDiff& c : d.classes) EXPECT_EQ(c.a_ns, c.b_ns) << c.name;
  for (const DiffRow& k : d.kernels) EXPECT_EQ(k.delta_ns(), 0) << k.name;
  // Only rank 3 came with its events.
  const Profile p = Profile::load(merged);
  ASSERT_EQ(p.ranks().size(), 8u);
  for (const Rank& r : p.ranks()) EXPECT_EQ(r.activities.empty(), r.rank != 3) << "rank " << r.rank;

  EXPECT_THAT(meshscope_fails("summarize --merge" + parts + " '" + (folder / "part-0.msdb").string() +
                                  "' -o '" + (dir / "twice.msdb").string() + "'",
                              dir),
              HasSubstr("overlap"));
  EXPECT_FALSE(fs::exists(dir / "twice.msdb")) << "nothing is left behind";
}
}  // namespace
}  // namespace meshscope::measure
