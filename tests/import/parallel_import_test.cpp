// Files of a job are read on several threads at once (collectors/import/import.cpp): the profile must be the
// same, row for row and id for id, whatever the number of threads, and the same as reading each file straight
// into the writer (the streaming path, which the parallel one replaced for files that fit in memory).
#include <gtest/gtest.h>

#include <string>
#include <vector>

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

ImportOptions with_threads(unsigned threads) {
  ImportOptions options;
  options.threads = threads;
  return options;
}

TEST(ParallelImport, SameProfileWhateverTheThreads) {
  TempDir job("parallel-import-job"), scratch("parallel-import-out");
  write_job(job.path(), 9);
  ImportOptions streamed;  // every file read straight into the writer, one after the other
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
    ImportOptions streamed;
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

}  // namespace
}  // namespace meshscope::testing
