// Merging per-rank profiles: every file numbers its strings its own way, and what is copied from a file must
// be named through that file's string ids (the merge used to copy every file's collectives through the last
// file's ids: sends became receives, and ops missing there failed a NOT NULL constraint).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/record/merge.hpp"
#include "tests/collectors/collectors_test_util.hpp"

namespace meshscope::test {
namespace {

// A per-rank profile as the NCCL collector writes it: SENDS send and RECVS receive operations with a kernel
// each. EXTRA strings interned first shift this file's string ids away from the other files'.
void write_rank_file(const fs::path& path, std::int32_t rank, int sends, int recvs, int extra) {
  ProfileWriter writer(path);
  RankInfo info;
  info.rank = rank;
  info.world_size = 8;
  info.source_file = path.filename().string();
  info.rank_source = "recorded:RANK";
  info.hostname = "host";
  writer.set_rank(info);
  for (int i = 0; i < extra; ++i) writer.intern("padding " + std::to_string(rank) + "." + std::to_string(i));
  // Half the ranks meet "recv" before "send", so the two ops swap ids between files.
  if (rank % 2 == 1) writer.intern("recv");
  const StringId kernel = writer.intern("ncclDevKernel_SendRecv");
  const StringId comm = writer.intern("comm" + std::to_string(rank % 2));
  for (int i = 0; i < sends + recvs; ++i) {
    const bool send = i < sends;
    ActivityRecord a;
    a.rank = rank;
    a.stream = 9;
    a.start_ns = 1'000'000 + i * 1000;
    a.end_ns = a.start_ns + 500;
    a.name = kernel;
    const std::int64_t id = writer.add_activity(a);
    CollectiveRecord c;
    c.rank = rank;
    c.activity_id = id;
    c.op = writer.intern(send ? "send" : "recv");
    c.communicator = comm;
    c.seq = i;
    c.in_bytes = 4096;
    c.group_size = 2;
    c.start_ns = a.start_ns;
    c.end_ns = a.end_ns;
    c.source = "nccl_plugin";
    writer.add_collective(c);
  }
  writer.commit();
}

TEST(Merge, FourRanksKeepTheirSendsAndReceives) {
  const fs::path dir = fresh_dir("merge-strings-4");
  std::vector<fs::path> files;
  for (std::int32_t rank = 0; rank < 4; ++rank) {
    files.push_back(dir / ("rank" + std::to_string(rank) + ".nccl.1.msdb"));
    write_rank_file(files.back(), rank, 250, 250, 0);
  }
  record::MergeOptions options;
  options.align_clocks = false;
  const auto result = record::merge_rank_profiles(files, dir / "job.msdb", options);
  EXPECT_EQ(result.collectives, 2000u);
  EXPECT_EQ(result.linked_collectives, 2000u);
  const fs::path job = dir / "job.msdb";
  EXPECT_EQ(query_rows(job,
                       "SELECT s.value, count(*) FROM collectives c JOIN strings s ON s.id = c.op GROUP BY 1 "
                       "ORDER BY 1"),
            "recv|1000\nsend|1000\n");
  EXPECT_EQ(query_rows(job,
                       "SELECT c.rank, s.value, count(*) FROM collectives c JOIN strings s ON s.id = "
                       "c.communicator GROUP BY 1, 2 ORDER BY 1"),
            "0|comm0|500\n1|comm1|500\n2|comm0|500\n3|comm1|500\n");
}

TEST(Merge, EightRanksWithDifferentStringTablesMergeAndMergeAgain) {
  const fs::path dir = fresh_dir("merge-strings-8");
  std::vector<fs::path> files;
  for (std::int32_t rank = 0; rank < 8; ++rank) {
    files.push_back(dir / ("rank" + std::to_string(rank) + ".nccl.1.msdb"));
    // The last file holds the fewest strings: its ids did not cover the other files' ops.
    write_rank_file(files.back(), rank, 30, 20, 40 - rank * 5);
  }
  record::MergeOptions options;
  options.align_clocks = false;
  for (int attempt = 0; attempt < 2; ++attempt) {  // as `record --merge-only` would, again
    const auto result = record::merge_rank_profiles(files, dir / "job.msdb", options);
    EXPECT_EQ(result.collectives, 400u);
    EXPECT_EQ(
        query_rows(dir / "job.msdb",
                   "SELECT s.value, count(*) FROM collectives c JOIN strings s ON s.id = c.op GROUP BY 1 "
                   "ORDER BY 1"),
        "recv|160\nsend|240\n");
  }
  const Profile p = Profile::load(dir / "job.msdb");
  EXPECT_EQ(p.counts().collective, 400);
}

// Per-rank profiles made by `import` carry work per operator (op_work, kernel_work): the merge copies them
// with the job's ids, every kernel_work row still naming an activity and an operator of its own rank. Real
// traces: HTA's two sampled ranks, recorded with shapes.
TEST(Merge, ImportedRanksKeepTheirWorkPerOperator) {
  const fs::path dir = fresh_dir("merge-work");
  const fs::path traces = fs::path(MESHSCOPE_SHARED_DIR) / "traces" / "hta" / "trace_filter";
  std::vector<fs::path> files;
  std::int64_t ops = 0, kernel_rows = 0;
  double flops = 0;
  for (int rank = 0; rank < 2; ++rank) {
    files.push_back(dir / ("rank" + std::to_string(rank) + ".kineto.1.msdb"));
    const auto r = run_process({MESHSCOPE_BINARY, "import", "-q",
                                (traces / ("sampled_rank-" + std::to_string(rank) + ".json.gz")).string(),
                                "-o", files.back().string()},
                               {});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    ops += query_int(files.back(), "SELECT count(*) FROM op_work");
    kernel_rows += query_int(files.back(), "SELECT count(*) FROM kernel_work");
    flops += std::stod(query_text(files.back(), "SELECT total(flops) FROM op_work WHERE status = 1"));
  }
  ASSERT_GT(kernel_rows, 0);
  record::MergeOptions options;
  options.align_clocks = false;
  record::merge_rank_profiles(files, dir / "job.msdb", options);
  const fs::path job = dir / "job.msdb";
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM op_work"), ops);
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM kernel_work"), kernel_rows);
  EXPECT_NEAR(std::stod(query_text(job, "SELECT total(flops) FROM op_work WHERE status = 1")), flops,
              1e-9 * flops);
  EXPECT_EQ(
      query_int(job,
                "SELECT count(*) FROM kernel_work k JOIN activities a ON a.id = k.activity_id AND a.rank = "
                "k.rank JOIN op_work o ON o.id = k.op_id AND o.rank = k.rank"),
      kernel_rows);
  EXPECT_EQ(query_int(job, "SELECT count(DISTINCT rank) FROM op_work"), 2);
  EXPECT_EQ(
      query_int(job, "SELECT count(*) FROM op_work o JOIN strings s ON s.id = o.name WHERE s.value = ''"), 0);
}

}  // namespace
}  // namespace meshscope::test
