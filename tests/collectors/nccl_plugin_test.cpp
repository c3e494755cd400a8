// The NCCL profiler plugin, dlopen()ed by meshscope_fake_rank and driven with made-up descriptors through
// every ABI version, then read back from the per-rank profile it wrote.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "collectors/nccl/nccl_profiler_abi.h"
#include "profiler/profile.hpp"
#include "tests/collectors/collectors_test_util.hpp"

namespace meshscope::test {
namespace {

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;  // 2023-11-14, in ns: far from "now" on purpose

// Now, rounded to the millisecond: GPU globaltimer stamps on the host clock's epoch, as on a real machine.
std::int64_t now_base() {
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  return now / 1'000'000 * 1'000'000;
}

std::map<std::string, std::string> rank_env(const fs::path& dir, int rank, int world) {
  return {{"NCCL_PROFILER_PLUGIN", MESHSCOPE_NCCL_PLUGIN},
          {"MESHSCOPE_OUTPUT_DIR", dir.string()},
          {"MESHSCOPE_FLUSH_MS", "100"},
          {"RANK", std::to_string(rank)},
          {"LOCAL_RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(world)},
          {"SLURM_PROCID", ""},
          {"OMPI_COMM_WORLD_RANK", ""},
          {"MESHSCOPE_RANK", ""}};
}

TEST(NcclPlugin, LoadsAndExportsEveryAbiVersion) {
  void* lib = dlopen(MESHSCOPE_NCCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  for (int v = 1; v <= 5; ++v) {
    const auto* p =
        static_cast<const msncclProfiler_v1*>(dlsym(lib, ("ncclProfiler_v" + std::to_string(v)).c_str()));
    ASSERT_NE(p, nullptr) << v;
    EXPECT_STREQ(p->name, "meshscope");
  }
  EXPECT_EQ(dlsym(lib, "ncclProfiler_v6"), nullptr);
  dlclose(lib);
}

TEST(NcclPlugin, V5RecordsCollectivesWithGpuTimesAndMetadata) {
  const fs::path dir = fresh_dir("nccl-v5");
  const std::int64_t base = now_base();
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--collectives", "12", "--base-ns", std::to_string(base)},
                             rank_env(dir, 3, 4));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto files = files_in(dir, "rank3.nccl.", ".msdb");
  ASSERT_EQ(files.size(), 1u);
  const fs::path db = files[0];

  // 12 collectives (every third an all-gather) and 3 point-to-point operations.
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM collectives WHERE seq IS NOT NULL"), 12);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM collectives WHERE seq IS NULL"), 3);
  EXPECT_EQ(query_rows(db,
                       "SELECT s.value, count(*) FROM collectives c JOIN strings s ON s.id = c.op GROUP BY 1 "
                       "ORDER BY 1"),
            "allgather|4\nallreduce|8\nrecv|3\n");
  // Metadata of one all-reduce, and its GPU start/end from the kernel channel timers (earliest start, latest
  // stop).
  EXPECT_EQ(
      query_rows(db,
                 "SELECT c.rank, c.seq, (SELECT value FROM strings WHERE id=c.communicator),"
                 " (SELECT value FROM strings WHERE id=c.dtype), c.in_nelems, c.in_bytes, c.out_bytes,"
                 " c.group_size, (SELECT value FROM strings WHERE id=c.algorithm),"
                 " (SELECT value FROM strings WHERE id=c.protocol), c.channels, c.source,"
                 " c.start_ns - " +
                     std::to_string(base) + ", c.end_ns - " + std::to_string(base) +
                     " FROM collectives c WHERE c.seq = 0"),
      "3|0|nccl:000000005eed0001|Bfloat16|1048576|2097152|2097152|4|RING|SIMPLE|2|nccl_plugin|6000|400300\n");
  // All-gather: the output is nranks times the input.
  EXPECT_EQ(query_rows(db, "SELECT in_nelems, out_nelems, out_bytes FROM collectives WHERE seq = 2"),
            "1048576|4194304|8388608\n");
  // Process group: this rank's position is known, the merge fills in the rest.
  EXPECT_EQ(query_rows(db, "SELECT pg_name, pg_desc, backend, group_size, ranks_json FROM process_groups"),
            "nccl:000000005eed0001|world|nccl|4|[null, null, null, 3]\n");
  EXPECT_EQ(query_rows(db, "SELECT rank, world_size, rank_source FROM ranks"), "3|4|recorded:RANK\n");
  // Group API events become CPU ranges on the calling thread.
  EXPECT_EQ(
      query_int(db,
                "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value='ncclGroup'"),
      15);
  EXPECT_EQ(
      query_int(db,
                "SELECT count(*) FROM diagnostics WHERE message LIKE '%15 operations timed by GPU kernel%'"),
      1);
  EXPECT_EQ(query_text(db, "SELECT value FROM meta WHERE key='nccl_profiler_abi'"), "v5");
  // The committed file is an ordinary profile.
  const Profile p = Profile::load(db);
  ASSERT_EQ(p.ranks().size(), 1u);
  EXPECT_EQ(p.ranks()[0].rank, 3);
}

// With proxy events on, NCCL's proxy thread also starts PXN proxy operations on behalf of other processes,
// passing that process's context and parent pointers: the plugin must neither touch nor record them.
TEST(NcclPlugin, PxnProxyOperationsOfOtherProcessesAreLeftAlone) {
  const fs::path dir = fresh_dir("nccl-pxn");
  auto env = rank_env(dir, 1, 2);
  env["MESHSCOPE_NCCL_PROXY"] = "1";
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--collectives", "8"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto files = files_in(dir, "rank1.nccl.", ".msdb");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(query_int(files[0], "SELECT count(*) FROM collectives"), 10);
  EXPECT_EQ(
      query_int(files[0],
                "SELECT count(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value <> 'ncclGroup'"),
      0);
  EXPECT_EQ(query_int(files[0], "SELECT count(*) FROM diagnostics WHERE severity <> 'info'"), 0)
      << query_rows(files[0], "SELECT message FROM diagnostics");
}

TEST(NcclPlugin, OlderAbiVersionsFallBackToHostTimes) {
  for (const int abi : {4, 3, 2, 1}) {
    SCOPED_TRACE(abi);
    const fs::path dir = fresh_dir("nccl-v" + std::to_string(abi));
    const auto r = run_process({MESHSCOPE_FAKE_RANK, "--collectives", "8", "--abi", std::to_string(abi),
                                "--base-ns", std::to_string(kBase)},
                               rank_env(dir, 1, 2));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto files = files_in(dir, "rank1.nccl.", ".msdb");
    ASSERT_EQ(files.size(), 1u);
    const fs::path db = files[0];
    EXPECT_EQ(query_int(db, "SELECT count(*) FROM collectives WHERE seq IS NOT NULL"), 8);
    EXPECT_EQ(query_int(db, "SELECT count(*) FROM collectives WHERE seq IS NULL"), 2);
    EXPECT_EQ(query_text(db, "SELECT value FROM strings s JOIN collectives c ON c.op = s.id WHERE c.seq = 0"),
              "allreduce");
    EXPECT_EQ(
        query_text(db, "SELECT value FROM strings s JOIN collectives c ON c.dtype = s.id WHERE c.seq = 0"),
        "Bfloat16");
    EXPECT_EQ(query_text(db, "SELECT value FROM meta WHERE key='nccl_profiler_abi'"),
              "v" + std::to_string(abi));
    if (abi == 4) {
      // GPU timers: exactly the stamps given.
      EXPECT_EQ(query_int(db, "SELECT end_ns - start_ns FROM collectives WHERE seq = 0"), 400'300 - 2'000);
      EXPECT_EQ(
          query_text(db, "SELECT value FROM strings s JOIN collectives c ON c.algorithm = s.id WHERE seq=0"),
          "TREE");
    } else {
      // No GPU timers before v4: host times (kernel channel events in v3, the enqueue call before), near now.
      EXPECT_GT(query_int(db, "SELECT min(start_ns) FROM collectives"), kBase + 100'000'000'000'000);
      EXPECT_EQ(query_int(db, "SELECT count(*) FROM diagnostics WHERE message LIKE '%host time%'"), 1);
      // Times from the enqueue call are marked, for the merge to replace with the kernel's.
      EXPECT_EQ(query_int(db, "SELECT count(*) FROM collectives WHERE source = 'nccl_plugin_enqueue'"),
                abi <= 2 ? query_int(db, "SELECT count(*) FROM collectives") : 0);
      EXPECT_EQ(
          query_text(db, "SELECT value FROM strings s JOIN collectives c ON c.protocol = s.id WHERE seq=0"),
          "SIMPLE");
    }
  }
}

TEST(NcclPlugin, GpuTimerOnAnotherEpochIsMappedToTheHostClock) {
  const fs::path dir = fresh_dir("nccl-epoch");
  // A globaltimer that counts from 1 s: far from the host clock, so the plugin maps it.
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--collectives", "4", "--base-ns", "1000000000"},
                             rank_env(dir, 0, 1));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path db = files_in(dir, "rank0.nccl.", ".msdb").at(0);
  const std::int64_t start = query_int(db, "SELECT start_ns FROM collectives WHERE seq = 0");
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  EXPECT_LT(std::llabs(now - start), 60'000'000'000LL);
  EXPECT_EQ(query_int(db, "SELECT end_ns - start_ns FROM collectives WHERE seq = 0"), 400'000);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM diagnostics WHERE message LIKE '%mapped to the host clock%'"),
            1);
}

TEST(NcclPlugin, KilledProcessLeavesReadableProfile) {
  for (const std::string mode : {"kill", "kill-late"}) {
    SCOPED_TRACE(mode);
    const fs::path dir = fresh_dir("nccl-" + mode);
    const auto r =
        run_process({MESHSCOPE_FAKE_RANK, "--collectives", "10", "--exit", mode}, rank_env(dir, 2, 4));
    EXPECT_EQ(r.signal, SIGKILL) << r.output;
    EXPECT_TRUE(files_in(dir, "rank2.nccl.").empty());
    const auto temp = files_in(dir, ".rank2.nccl.", ".tmp-");
    ASSERT_EQ(temp.size(), 1u);
    EXPECT_EQ(query_int(temp[0], "SELECT count(*) FROM collectives WHERE seq IS NOT NULL"), 10);
    EXPECT_EQ(query_int(temp[0], "SELECT count(*) FROM ranks WHERE rank = 2"), 1);
  }
}

TEST(NcclPlugin, SigtermFlushesThenTerminatesAsBefore) {
  const fs::path dir = fresh_dir("nccl-term");
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--collectives", "6", "--exit", "wait-signal"},
                             rank_env(dir, 0, 1), [](pid_t pid, const fs::path& out) {
                               ASSERT_TRUE(wait_for_text(out, "ready"));
                               ::kill(pid, SIGTERM);
                             });
  EXPECT_EQ(r.signal, SIGTERM) << r.output;
  const auto temp = files_in(dir, ".rank0.nccl.", ".tmp-");
  ASSERT_EQ(temp.size(), 1u);
  EXPECT_EQ(query_int(temp[0], "SELECT count(*) FROM collectives"), 6);
}

TEST(NcclPlugin, FullQueueDropsAndCounts) {
  const fs::path dir = fresh_dir("nccl-drop");
  auto env = rank_env(dir, 0, 1);
  env["MESHSCOPE_NCCL_QUEUE"] = "64";
  env["MESHSCOPE_FLUSH_MS"] = "60000";
  const auto r = run_process({MESHSCOPE_FAKE_RANK, "--collectives", "5000"}, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path db = files_in(dir, "rank0.nccl.", ".msdb").at(0);
  const std::int64_t written = query_int(db, "SELECT count(*) FROM collectives");
  const std::string message =
      query_text(db, "SELECT message FROM diagnostics WHERE message LIKE '%writer queue full%'");
  ASSERT_NE(message, "<no row>");
  const std::int64_t dropped = std::stoll(message.substr(message.find("dropped ") + 8));
  EXPECT_GT(dropped, 0);
  // Group ranges share the queue: everything handed over is either written or counted.
  const std::int64_t groups = query_int(db, "SELECT count(*) FROM ranges");
  EXPECT_EQ(written + groups + dropped, 5000 * 2);
}

}  // namespace
}  // namespace meshscope::test
