// Merging per-rank profiles: every file numbers its strings its own way, and what is copied from a file must
// be named through that file's string ids (the merge used to copy every file's collectives through the last
// file's ids: sends became receives, and ops missing there failed a NOT NULL constraint).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/record/merge.hpp"
#include "profiler/sqlite_util.hpp"
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

// The OS's record of the threads travels with each rank: strings renumbered, rows of a bad kind left out.
TEST(Merge, ThreadActivityKeepsItsRankAndStacks) {
  const fs::path dir = fresh_dir("merge-thread-activity");
  std::vector<fs::path> files;
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    files.push_back(dir / ("rank" + std::to_string(rank) + ".nccl.1.msdb"));
    {
      ProfileWriter writer(files.back());
      RankInfo info;
      info.rank = rank;
      info.world_size = 2;
      info.source_file = files.back().filename().string();
      info.rank_source = "recorded:RANK";
      writer.set_rank(info);
      for (int i = 0; i < rank * 3; ++i) writer.intern("padding " + std::to_string(i));
      ActivityRecord a;
      a.rank = rank;
      a.start_ns = 1000;
      a.end_ns = 2000;
      a.name = writer.intern("k");
      writer.add_activity(a);
      ThreadActivityRecord run;
      run.rank = rank;
      run.pid = run.tid = 10 + rank;
      run.start_ns = 500;
      run.end_ns = 1500;
      run.cpu = 3;
      writer.add_thread_activity(run);
      ThreadActivityRecord sample = run;
      sample.kind = ThreadActivityKind::kSample;
      sample.start_ns = sample.end_ns = 900;
      sample.stack = writer.intern("leaf (lib.so)\nmain (app) of rank " + std::to_string(rank));
      writer.add_thread_activity(sample);
      writer.commit();
    }
  }
  {
    sql::Database db(files[1], false);
    db.exec(
        "INSERT INTO thread_activity (rank, kind, pid, tid, start_ns, end_ns) VALUES (1, 7, 11, 11, 1, 2)");
  }
  record::MergeOptions options;
  options.align_clocks = false;
  const auto result = record::merge_rank_profiles(files, dir / "job.msdb", options);
  EXPECT_EQ(result.skipped_rows, 1u);
  EXPECT_EQ(
      query_rows(dir / "job.msdb",
                 "SELECT a.rank, a.kind, a.tid, a.start_ns, a.end_ns, a.cpu, s.value FROM thread_activity a "
                 "LEFT JOIN strings s ON s.id = a.stack ORDER BY a.rank, a.kind"),
      "0|1|10|500|1500|3|NULL\n0|2|10|900|900|3|leaf (lib.so)\nmain (app) of rank 0\n"
      "1|1|11|500|1500|3|NULL\n1|2|11|900|900|3|leaf (lib.so)\nmain (app) of rank 1\n");
}

TEST(Merge, APerRankFileIsNeverTheOutput) {
  const fs::path dir = fresh_dir("merge-output-input");
  std::vector<fs::path> files;
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    files.push_back(dir / ("rank" + std::to_string(rank) + ".nccl.1.msdb"));
    write_rank_file(files.back(), rank, 3, 3, 0);
  }
  const auto size = fs::file_size(files[0]);
  record::MergeOptions options;
  options.align_clocks = false;
  try {
    record::merge_rank_profiles(files, files[0], options);
    ADD_FAILURE() << "merged over one of its inputs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is also an input"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(files[0]), size);
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

// HTA's two sampled ranks of trace_filter (recorded with shapes), each imported into DIR as `import` writes a
// rank's part; empty when an import fails.
std::vector<fs::path> imported_sampled_ranks(const fs::path& dir) {
  const fs::path traces = fs::path(MESHSCOPE_SHARED_DIR) / "traces" / "hta" / "trace_filter";
  std::vector<fs::path> files;
  for (int rank = 0; rank < 2; ++rank) {
    files.push_back(dir / ("rank" + std::to_string(rank) + ".kineto.1.msdb"));
    const auto r = run_process({MESHSCOPE_BINARY, "import", "-q",
                                (traces / ("sampled_rank-" + std::to_string(rank) + ".json.gz")).string(),
                                "-o", files.back().string()},
                               {});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.exit_code != 0) return {};
  }
  return files;
}

// FILES merged into DIR/job.msdb with their clocks as recorded (no alignment); the job's path.
fs::path merged_as_recorded(const std::vector<fs::path>& files, const fs::path& dir) {
  record::MergeOptions options;
  options.align_clocks = false;
  record::merge_rank_profiles(files, dir / "job.msdb", options);
  return dir / "job.msdb";
}

// Operators' recorded shapes (ranges.input_dims, input_types) come through the merge with the job's string
// ids; a part written before ranges had those columns merges too, its operators without shapes. Real traces:
// HTA's two sampled ranks, recorded with shapes.
TEST(Merge, OperatorShapesComeThroughAndOlderPartsWithoutThemMerge) {
  const fs::path dir = fresh_dir("merge-shapes");
  const std::vector<fs::path> files = imported_sampled_ranks(dir);
  ASSERT_EQ(files.size(), 2u);
  // Every operator's name and shapes, in time order, of the ranges WHERE selects.
  auto shapes_of = [](const fs::path& file, const std::string& where) {
    return query_text(file,
                      "SELECT group_concat(n.value || ' ' || d.value || ' ' || t.value, char(10)) FROM "
                      "(SELECT * FROM ranges WHERE kind = 1 AND " +
                          where +
                          " ORDER BY start_ns, id) r JOIN strings n ON n.id = r.name "
                          "JOIN strings d ON d.id = r.input_dims JOIN strings t ON t.id = r.input_types");
  };
  const std::string rank0_shapes = shapes_of(files[0], "1");
  ASSERT_NE(rank0_shapes.find("aten::"), std::string::npos);
  // Rank 1's part as a build before 2026-11-29 wrote it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(files[1].c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db,
                   "CREATE TABLE older AS SELECT id, rank, kind, pid, tid, start_ns, end_ns, name, depth, "
                   "parent_id, external_id, step, category FROM ranges; DROP TABLE ranges; "
                   "ALTER TABLE older RENAME TO ranges",
                   nullptr, nullptr, nullptr),
      SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  const std::int64_t ranges =
      query_int(files[0], "SELECT count(*) FROM ranges") + query_int(files[1], "SELECT count(*) FROM ranges");
  const fs::path job = merged_as_recorded(files, dir);
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM ranges"), ranges);
  EXPECT_EQ(shapes_of(job, "rank = 0"), rank0_shapes);
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM ranges WHERE rank = 1 AND input_dims IS NOT NULL"), 0);
}

// Per-rank profiles made by `import` carry work per operator (op_work, kernel_work): the merge copies them
// with the job's ids, every kernel_work row still naming an activity and an operator of its own rank. Real
// traces: HTA's two sampled ranks, recorded with shapes.
TEST(Merge, ImportedRanksKeepTheirWorkPerOperator) {
  const fs::path dir = fresh_dir("merge-work");
  const std::vector<fs::path> files = imported_sampled_ranks(dir);
  ASSERT_EQ(files.size(), 2u);
  std::int64_t ops = 0, kernel_rows = 0;
  double flops = 0;
  for (const fs::path& file : files) {
    ops += query_int(file, "SELECT count(*) FROM op_work");
    kernel_rows += query_int(file, "SELECT count(*) FROM kernel_work");
    flops += std::stod(query_text(file, "SELECT total(flops) FROM op_work WHERE status = 1"));
  }
  ASSERT_GT(kernel_rows, 0);
  const fs::path job = merged_as_recorded(files, dir);
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

// What a one-GPU run of tests/gpu/nccl_self.cpp recorded on an H200 (NCCL 2.28.9, tests/gpu/run.sh): sends to
// the rank itself get no kernel channel event, so the plugin times them by the enqueue call (host
// microseconds around the launch); the CUDA collector saw the NCCL kernel and the call that launched it.
// Torchrun's agent also touched CUDA, without a rank variable.
struct RecordedRank {
  fs::path cupti, nccl, agent;
};

RecordedRank write_self_send_rank(const fs::path& dir, bool with_launches) {
  RecordedRank files{dir / "rank0.cupti.100.msdb", dir / "rank0.nccl.100.msdb", dir / "rank0.cupti.50.msdb"};
  auto rank_info = [](const fs::path& path, std::int64_t pid, const char* source) {
    RankInfo info;
    info.rank = 0;
    info.world_size = 1;
    info.pid = pid;
    info.source_file = path.filename().string();
    info.rank_source = source;
    info.hostname = "host";
    return info;
  };
  {
    ProfileWriter w(files.cupti);
    w.set_rank(rank_info(files.cupti, 100, "recorded:RANK"));
    const StringId kernel = w.intern("ncclDevKernel_SendRecv");
    const StringId launch = w.intern("cuLaunchKernelEx");
    // Two groups (send + receive each): launched at 10 us and 60 us, run at 100-300 us and 400-700 us.
    const std::int64_t launches[] = {10'000, 60'000}, starts[] = {100'000, 400'000},
                       ends[] = {300'000, 700'000};
    for (int g = 0; g < 2; ++g) {
      ActivityRecord a;
      a.stream = 7;
      a.start_ns = starts[g];
      a.end_ns = ends[g];
      a.name = kernel;
      a.correlation = 500 + g;
      w.add_activity(a);
      if (!with_launches) continue;
      ApiCallRecord c;
      c.kind = ApiKind::kDriver;
      c.pid = c.tid = 100;
      c.start_ns = launches[g];
      c.end_ns = launches[g] + 3'000;
      c.name = launch;
      c.correlation = 500 + g;
      w.add_api_call(c);
    }
    w.commit();
  }
  {
    ProfileWriter w(files.nccl);
    w.set_rank(rank_info(files.nccl, 100, "recorded:RANK"));
    // Task events right after each launch: [13, 14] us, [13.5, 14] us, then [63, 64] us twice; a fifth
    // operation's at 500 ms, its kernel never recorded.
    const std::int64_t enqueue[][2] = {
        {13'000, 14'000}, {13'500, 14'000}, {63'000, 64'000}, {63'500, 64'000}, {500'000'000, 500'002'000}};
    for (int i = 0; i < 5; ++i) {
      CollectiveRecord c;
      c.op = w.intern(i % 2 == 0 ? "send" : "recv");
      c.communicator = w.intern("nccl:self");
      c.in_bytes = 16 << 20;
      c.group_size = 2;
      c.start_ns = enqueue[i][0];
      c.end_ns = enqueue[i][1];
      c.source = "nccl_plugin_enqueue";
      w.add_collective(c);
    }
    w.commit();
  }
  {
    ProfileWriter w(files.agent);
    w.set_rank(rank_info(files.agent, 50, "single"));
    ApiCallRecord c;
    c.kind = ApiKind::kDriver;
    c.pid = c.tid = 50;
    c.start_ns = 1'000;
    c.end_ns = 2'000;
    c.name = w.intern("cuDeviceGetCount");
    w.add_api_call(c);
    RangeRecord overhead;  // CUPTI's own overhead, as the agent's real file had
    overhead.kind = RangeKind::kOther;
    overhead.pid = overhead.tid = 50;
    overhead.start_ns = 1'500;
    overhead.end_ns = 1'800;
    overhead.name = w.intern("CUPTI buffer flush");
    overhead.category = w.intern("cupti_overhead");
    w.add_range(overhead);
    w.commit();
  }
  return files;
}

TEST(Merge, EnqueueTimedOperationsTakeTheirKernelsGpuTimes) {
  const fs::path dir = fresh_dir("merge-enqueue-timed");
  const RecordedRank files = write_self_send_rank(dir, true);
  record::MergeOptions options;
  options.align_clocks = false;
  const auto result =
      record::merge_rank_profiles({files.cupti, files.nccl, files.agent}, dir / "job.msdb", options);
  EXPECT_EQ(result.kernel_timed_collectives, 4u);
  const fs::path job = dir / "job.msdb";
  // Each group's operations get the kernel launched just before their task events; the fifth keeps its
  // host times and says so.
  EXPECT_EQ(
      query_rows(
          job,
          "SELECT s.value, c.start_ns, c.end_ns, c.activity_id IS NOT NULL, c.source FROM collectives c "
          "JOIN strings s ON s.id = c.op ORDER BY c.id"),
      "send|100000|300000|1|nccl_plugin\nrecv|100000|300000|1|nccl_plugin\n"
      "send|400000|700000|1|nccl_plugin\nrecv|400000|700000|1|nccl_plugin\n"
      "send|500000000|500002000|0|nccl_plugin_enqueue\n");
  EXPECT_EQ(query_int(job,
                      "SELECT count(DISTINCT c.activity_id) FROM collectives c JOIN activities a ON a.id = "
                      "c.activity_id WHERE a.start_ns = c.start_ns"),
            2);
  EXPECT_EQ(
      query_int(job, "SELECT count(*) FROM diagnostics WHERE message LIKE '4 NCCL operations %enqueue%'"), 1);
  // The agent's file is left out (its driver call with it) and named; the rank's two files are one process.
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM api_calls WHERE pid = 50"), 0);
  EXPECT_EQ(
      query_int(
          job,
          "SELECT count(*) FROM diagnostics WHERE message LIKE 'rank0.cupti.50.msdb: process 50 %left out'"),
      1);
  EXPECT_EQ(query_int(job, "SELECT count(*) FROM diagnostics WHERE message LIKE '%more than one process%'"),
            0);
  EXPECT_EQ(query_text(job, "SELECT source_file FROM ranks"), "rank0.cupti.100.msdb, rank0.nccl.100.msdb");
}

TEST(Merge, EnqueueTimedOperationsKeepTheirTimesWithoutTheLaunches) {
  const fs::path dir = fresh_dir("merge-enqueue-no-launch");
  const RecordedRank files = write_self_send_rank(dir, false);
  record::MergeOptions options;
  options.align_clocks = false;
  const auto result = record::merge_rank_profiles({files.cupti, files.nccl}, dir / "job.msdb", options);
  EXPECT_EQ(result.kernel_timed_collectives, 0u);
  EXPECT_EQ(
      query_int(dir / "job.msdb", "SELECT count(*) FROM collectives WHERE source = 'nccl_plugin_enqueue'"),
      5);
  // Alone, a process without a rank variable is the job's rank 0 ("single"): kept.
  const fs::path alone = fresh_dir("merge-single-alone");
  const RecordedRank single = write_self_send_rank(alone, true);
  record::merge_rank_profiles({single.agent}, alone / "job.msdb", options);
  EXPECT_EQ(query_int(alone / "job.msdb", "SELECT count(*) FROM api_calls WHERE pid = 50"), 1);
}

}  // namespace
}  // namespace meshscope::test
