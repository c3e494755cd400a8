// Files of a job are read on several threads at once (collectors/import/import.cpp): the profile must be the
// same, row for row and id for id, whatever the number of threads, and the same as reading each file straight
// into the writer (the streaming path, which the parallel one replaced for files that fit in memory).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/measure/op_work.hpp"
#include "collectors/import/import.hpp"
#include "collectors/import/input_file.hpp"
#include "tests/import/test_support.hpp"

namespace meshscope::testing {
namespace {

// Every row of every table, in rowid order (the creation time aside).
std::vector<std::string> all_rows(const std::filesystem::path& profile) {
  std::vector<std::string> rows;
  for (const auto& table :
       query_rows(profile, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    const std::string where = table == "meta" ? " WHERE key <> 'created_unix_s'" : "";
    for (auto& row :
         query_rows(profile, "SELECT rowid, * FROM \"" + table + "\"" + where + " ORDER BY rowid"))
      rows.push_back(table + ": " + row);
  }
  return rows;
}

std::string decompressed(const std::filesystem::path& path) {
  import::ByteBuffer buffer;
  import::read_whole_file(path, buffer, 0);
  return std::string(buffer.view());
}

// A job of COUNT ranks made of the two real ranks of hta/trace_filter (distributedInfo rank 0 and 1, world
// size 128): file N is rank N's copy of one of them, with distributedInfo saying rank N.
void write_job(const std::filesystem::path& dir, int count) {
  const auto source = traces_dir() / "hta" / "trace_filter";
  const std::string ranks[2] = {decompressed(source / "sampled_rank-0.json.gz"),
                                decompressed(source / "sampled_rank-1.json.gz")};
  for (int n = 0; n < count; ++n) {
    std::string text = ranks[n % 2];
    const std::string stated = n % 2 == 0 ? "\"rank\": 0," : "\"rank\": 1,";
    const auto at = text.find(stated);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, stated.size(), "\"rank\": " + std::to_string(n) + ",");
    write_text(dir / ("rank-" + std::to_string(n) + ".json"), text);
  }
}

// The options of the job's import (job/import_job.hpp): work per operator computed, so that its rows are
// compared too.
ImportOptions with_work_formulas() {
  ImportOptions options;
  options.operator_work = measure::operator_work_formulas();
  return options;
}

ImportOptions with_threads(unsigned threads) {
  ImportOptions options = with_work_formulas();
  options.threads = threads;
  return options;
}

TEST(ParallelImport, SameProfileWhateverTheThreads) {
  TempDir job("parallel-import-job"), scratch("parallel-import-out");
  write_job(job.path(), 9);
  ImportOptions streamed =
      with_work_formulas();  // every file read straight into the writer, one after the other
  streamed.streaming_threshold_bytes = 0;
  const auto reference = import_traces({job.path()}, scratch / "streamed.msdb", streamed);
  ASSERT_EQ(reference.ranks.size(), 9u);
  const auto expected = all_rows(scratch / "streamed.msdb");
  ASSERT_GT(expected.size(), 50000u);
  for (const unsigned threads : {1u, 2u, 5u}) {
    const auto out = scratch / ("threads-" + std::to_string(threads) + ".msdb");
    const auto summary = import_traces({job.path()}, out, with_threads(threads));
    EXPECT_EQ(summary.ranks.size(), 9u);
    const auto rows = all_rows(out);
    ASSERT_EQ(rows.size(), expected.size()) << threads << " threads";
    for (std::size_t i = 0; i < rows.size(); ++i) ASSERT_EQ(rows[i], expected[i]) << threads << " threads";
  }
}

// Traces whose rows take the paths the reading threads prepare for the writer: CPU-side collectives resolved
// to their kernels or kept with CPU times (ns_resolution_trace: record_param_comms without kernels),
// collectives from kernel names and args (nccl_parser_config), ranges listed out of order (call_stack), work
// per operator (trace_diff, resnet50).
TEST(ParallelImport, SameProfileAsStreamingOnRealTraces) {
  TempDir scratch("parallel-import-real");
  const auto traces = traces_dir();
  for (const auto& trace :
       {traces / "hta" / "ns_resolution_trace" / "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        traces / "hta" / "nccl_parser_config" / "nccl_data.json.gz",
        traces / "hta" / "call_stack" / "backward_thread.json",
        traces / "hta" / "trace_diff" / "test" / "test.json.gz",
        traces / "kineto" / "resnet50_num_workers_0" / "worker0.1623143089861.pt.trace.json.gz"}) {
    ImportOptions streamed = with_work_formulas();
    streamed.streaming_threshold_bytes = 0;
    import_traces({trace}, scratch / "streamed.msdb", streamed);
    import_traces({trace}, scratch / "threads.msdb", with_threads(2));
    EXPECT_EQ(all_rows(scratch / "threads.msdb"), all_rows(scratch / "streamed.msdb")) << trace;
    if (trace.string().find("ns_resolution") != std::string::npos) {  // the CPU-side collectives are covered
      EXPECT_GT(std::stoi(query_one(
                    scratch / "threads.msdb",
                    "SELECT count(*) FROM collectives WHERE source = 'cpu_op' AND activity_id IS NULL")),
                0);
    }
  }
}

// Bad input in a many-file import: a rank file corrupt in the middle stops the import with one
// line naming it, and nothing is left at the output path or beside it; with --skip-bad the rest is imported
// and each file left out is listed on standard output and kept as a diagnostic of the job.
class BadFileInJob : public ::testing::Test {
 protected:
  void SetUp() override {
    write_job(job_.path(), 8);
    const auto rank5 = job_ / "rank-5.json";
    const std::string text = read_text(rank5);
    write_text(rank5, text.substr(0, text.size() / 2));  // cut in the middle of traceEvents
  }
  CommandResult import(const std::string& flags) {
    return run_meshscope(
        "import '" + job_.path().string() + "' -o '" + (out_ / "job.msdb").string() + "' " + flags,
        scratch_.path());
  }
  TempDir job_{"bad-job"}, out_{"bad-job-out"}, scratch_{"bad-job-scratch"};
};

TEST_F(BadFileInJob, StopsNamingTheFileAndLeavesNothing) {
  const auto r = import("-q");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.err.rfind("meshscope: " + (job_ / "rank-5.json").string() + ": truncated or malformed JSON (", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(out_.entries().empty());  // neither the profile nor its temporary file
}

TEST_F(BadFileInJob, SkipBadImportsTheRestAndListsWhatItSkipped) {
  // A second bad file of another kind: a gzip file cut short, and a third that claims a rank already claimed.
  const std::string gz = read_text(traces_dir() / "hta" / "trace_filter" / "sampled_rank-1.json.gz");
  write_text(job_ / "rank-6.json.gz", gz.substr(0, gz.size() / 2));
  std::filesystem::copy_file(job_ / "rank-2.json", job_ / "rank-2x.json");
  const auto r = import("--skip-bad");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto profile = out_ / "job.msdb";
  // Every rank but 5, each once, rank 2 from the first file that claimed it.
  EXPECT_EQ(query_rows(profile, "SELECT rank FROM ranks ORDER BY rank"),
            (std::vector<std::string>{"0", "1", "2", "3", "4", "6", "7"}));
  EXPECT_EQ(query_one(profile, "SELECT count(DISTINCT rank) FROM ranges"), "7");
  EXPECT_EQ(query_one(profile, "SELECT source_file FROM ranks WHERE rank = 2"),
            std::filesystem::absolute(job_ / "rank-2.json").lexically_normal().string());
  std::vector<std::string> skipped;
  std::size_t from = 0;
  while ((from = r.out.find("note: skipped ", from)) != std::string::npos) {
    const auto end = r.out.find('\n', from);
    skipped.push_back(r.out.substr(from + 14, end - from - 14));
    from = end;
  }
  ASSERT_EQ(skipped.size(), 3u) << r.out;
  EXPECT_EQ(skipped[0].rfind((job_ / "rank-2x.json").string() + ": claims rank 2, which ", 0), 0u)
      << skipped[0];
  EXPECT_EQ(skipped[1].rfind((job_ / "rank-5.json").string() + ": truncated or malformed JSON", 0), 0u)
      << skipped[1];
  EXPECT_EQ(skipped[2].rfind((job_ / "rank-6.json.gz").string() + ": ", 0), 0u) << skipped[2];
  // The profile says so too (a diagnostic of the whole job per file).
  EXPECT_EQ(
      query_one(profile, "SELECT count(*) FROM diagnostics WHERE rank IS NULL AND message LIKE 'skipped %'"),
      "3");
}

TEST_F(BadFileInJob, SkipBadFailsWhenNoFileIsLeft) {
  TempDir bad("bad-job-all");
  write_text(bad / "rank-0.json", "{\"traceEvents\": [");
  write_text(bad / "rank-1.json", "");
  const auto r = run_meshscope(
      "import --skip-bad '" + bad.path().string() + "' -o '" + (out_ / "job.msdb").string() + "'",
      scratch_.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(
      r.err.rfind("meshscope: no file could be imported (2 skipped: " + (bad / "rank-0.json").string() + ": ",
                  0),
      0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_TRUE(out_.entries().empty());
}

// A file written while it is read (here every file: the streaming threshold is 0) that fails part-way under
// --skip-bad: the import starts over without it, and the profile is the one the reading threads give.
TEST_F(BadFileInJob, SkipBadStartsOverWithoutAFileWrittenAsRead) {
  ImportOptions streamed = with_work_formulas();
  streamed.streaming_threshold_bytes = 0;
  streamed.skip_bad = true;
  const auto summary = import_traces({job_.path()}, out_ / "streamed.msdb", streamed);
  ASSERT_EQ(summary.skipped.size(), 1u);
  EXPECT_EQ(summary.skipped[0].path, (job_ / "rank-5.json").string());
  EXPECT_EQ(summary.ranks.size(), 7u);
  ImportOptions threads = with_threads(2);
  threads.skip_bad = true;
  import_traces({job_.path()}, out_ / "threads.msdb", threads);
  // The same rows; the two readers word the JSON error each their own way.
  auto rows = [](const std::filesystem::path& profile) {
    auto all = all_rows(profile);
    for (auto& row : all) {
      if (const auto at = row.find("truncated or malformed JSON ("); at != std::string::npos) row.resize(at);
    }
    return all;
  };
  EXPECT_EQ(rows(out_ / "streamed.msdb"), rows(out_ / "threads.msdb"));
}

}  // namespace
}  // namespace meshscope::testing
