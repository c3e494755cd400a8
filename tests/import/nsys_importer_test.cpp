// Nsight Systems SQLite export importer: the real (schema 2.9) saxpy export from shared/traces, and small
// exports in the 3.x schema (as NVIDIA documents it) built here to cover NVTX nesting, the NCCL domain (NCCL
// groups included), CUDA graphs, several processes, negative times and bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectors/import/import.hpp"
#include "collectors/import/nsys/nsys_importer.hpp"
#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/sqlite_util.hpp"
#include "tests/import/nsys_cpu_tables.hpp"

namespace meshscope {
namespace {

namespace fs = std::filesystem;

fs::path tmp_dir(const std::string& name) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("nsys_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// globalTid / globalPid as Nsight serialises them: VM 1, process PID, thread TID.
std::int64_t gid(std::int64_t pid, std::int64_t tid = 0) {
  return (std::int64_t{1} << 48) | (pid << 24) | tid;
}

// Builds a small export in the 3.x schema (table and column names as in NVIDIA's schema reference).
class ExportBuilder {
 public:
  explicit ExportBuilder(const fs::path& path, const std::string& version = "3.15.1") : path_(path) {
    fs::remove(path);
    db_ = sql::Database(path, false);
    db_.exec("PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY");
    db_.exec(
        "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
        "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);"
        "CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT "
        "NULL,"
        " nameEnum INTEGER NOT NULL, value TEXT NOT NULL);"
        "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation "
        "TEXT,"
        " totalMemory INTEGER, smCount INTEGER, uuid TEXT, chipName TEXT, computeMajor INTEGER,"
        " computeMinor INTEGER);"
        "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
        "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
        " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid "
        "INTEGER,"
        " textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL,"
        " uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,"
        " returnValue INTEGER NOT NULL, callchainId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
        " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT "
        "NULL,"
        " shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,"
        " registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,"
        " gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
        " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,"
        " localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,"
        " sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER,"
        " graphId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
        " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,"
        " copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,"
        " srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,"
        " migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
        " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL,"
        " bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
        " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL,"
        " eventId INTEGER NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,"
        " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL,"
        " graphExecId INTEGER NOT NULL);");
    meta("EXPORT_SCHEMA_VERSION", version);
    meta("NSIGHT_SYSTEMS_VERSION", "2024.5.1");
    db_.exec("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '')");
    db_.exec(
        "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (281474976710656, 'Local', 'Hostname', 619, 'node7');"
        "INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, 'NVIDIA H100 80GB HBM3', '0000:18:00.0',"
        " 85520809984, 132, 'uuid-0', 'GH100', 9, 0);"
        "INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 1, 'NVIDIA H100 80GB HBM3', '0000:2a:00.0',"
        " 85520809984, 132, 'uuid-1', 'GH100', 9, 0);");
  }

  void meta(const std::string& name, const std::string& value) {
    auto s = db_.prepare("INSERT INTO META_DATA_EXPORT VALUES (?, ?)");
    s.bind_text(1, name);
    s.bind_text(2, value);
    s.run();
  }

  std::int64_t str(const std::string& value) {
    auto s = db_.prepare("INSERT INTO StringIds (id, value) VALUES (?, ?)");
    s.bind(1, next_string_);
    s.bind_text(2, value);
    s.run();
    return next_string_++;
  }

  void process(std::int64_t pid, const std::string& name) {
    auto s = db_.prepare("INSERT INTO PROCESSES VALUES (?, ?, ?)");
    s.bind(1, gid(pid));
    s.bind(2, pid);
    s.bind_text(3, name);
    s.run();
  }

  // NVTX event; TEXT or TEXT_ID (-1: none); END kNull for marks.
  void nvtx(std::int64_t type, std::int64_t start, std::int64_t end, std::int64_t global_tid,
            const std::string& text, std::int64_t text_id = -1, std::int64_t domain = 0,
            const std::string& json = "", std::int64_t payload = kNull) {
    auto s = db_.prepare(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId, jsonText, "
        "uint64Value)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bind(1, start);
    s.bind(2, end);
    s.bind(3, type);
    s.bind_text(4, text);
    s.bind(5, global_tid);
    s.bind(6, text_id < 0 ? kNull : text_id);
    s.bind(7, domain);
    s.bind_text(8, json);
    s.bind(9, payload);
    s.run();
  }

  void api(std::int64_t start, std::int64_t end, std::int64_t global_tid, std::int64_t correlation,
           const std::string& name) {
    auto s = db_.prepare("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?, ?, 0, NULL)");
    s.bind(1, start);
    s.bind(2, end);
    s.bind(3, name.starts_with("cuda") ? 0 : 1);
    s.bind(4, global_tid);
    s.bind(5, correlation);
    s.bind(6, str(name));
    s.run();
  }

  void kernel(std::int64_t start, std::int64_t end, std::int64_t pid, std::int64_t device,
              std::int64_t stream, std::int64_t correlation, const std::string& name,
              std::int64_t graph_id = kNull, std::int64_t graph_node = kNull) {
    auto s = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId,"
        " globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, "
        "blockZ,"
        " staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, "
        "graphNodeId,"
        " graphId) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, 32, 4, 2, 1, 256, 1, 1, 1024, 2048, 0, 0, 1, ?, ?)");
    s.bind(1, start);
    s.bind(2, end);
    s.bind(3, device);
    s.bind(4, stream);
    s.bind(5, correlation);
    s.bind(6, gid(pid));
    const std::int64_t id = str(name);
    s.bind(7, id);
    s.bind(8, id);
    s.bind(9, graph_node);
    s.bind(10, graph_id);
    s.run();
  }

  // A CUPTI synchronisation record (syncType 1 event, 2 stream wait event, 3 stream, 4 context); STREAM is
  // 4294967295 (CUPTI_SYNCHRONIZATION_INVALID_VALUE) for context and event synchronisations.
  void sync(std::int64_t start, std::int64_t end, std::int64_t pid, std::int64_t device, std::int64_t stream,
            std::int64_t correlation, std::int64_t type) {
    auto s = db_.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId,"
        " correlationId, globalPid, syncType, eventId) VALUES (?, ?, ?, 1, ?, ?, ?, ?, 4294967295)");
    s.bind(1, start);
    s.bind(2, end);
    s.bind(3, device);
    s.bind(4, stream);
    s.bind(5, correlation);
    s.bind(6, gid(pid));
    s.bind(7, type);
    s.run();
  }

  void exec(const std::string& sql) { db_.exec(sql); }

  void close() { db_.close(); }

 private:
  fs::path path_;
  sql::Database db_;
  std::int64_t next_string_ = 1;
};

// Runs SQL against a profile and returns the first column of each row as text, joined by ','.
std::string query(const fs::path& profile, const std::string& sql_text) {
  sql::Database db(profile, true);
  auto s = db.prepare(sql_text);
  std::string out;
  while (s.step()) {
    for (int i = 0; i < s.column_count(); ++i) {
      if (!out.empty() && i == 0) out += ';';
      if (i > 0) out += ',';
      out += s.column_is_null(i) ? "NULL" : s.column_text(i);
    }
  }
  return out;
}

// ---- building blocks ----

TEST(NsysNames, DecodesGlobalIds) {
  const auto id = nsys::decode_global_id(302119224788637);
  EXPECT_EQ(id.hw, 0);
  EXPECT_EQ(id.vm, 1);
  EXPECT_EQ(id.pid, 1230493);
  EXPECT_EQ(id.tid, 1230493);
  EXPECT_EQ(nsys::decode_global_id(302119223558144).tid, 0);
}

TEST(NsysNames, StripsApiVersions) {
  EXPECT_EQ(nsys::api_base_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(nsys::api_base_name("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(nsys::api_base_name("cudaMemcpy_vx"), "cudaMemcpy_vx");
}

TEST(NsysNames, ParsesNcclRanges) {
  auto r = nsys::parse_nccl_range(
      "ncclAllReduce", R"({"Message size [bytes]": 4194304, "Reduction operation": "Sum"})", kNull);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, "allreduce");
  EXPECT_EQ(r->bytes, 4194304);
  r = nsys::parse_nccl_range("ncclAllGather size=1024 comm=0xabc nranks=8", "", kNull);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, "allgather");
  EXPECT_EQ(r->bytes, 1024);
  EXPECT_EQ(r->communicator, "0xabc");
  EXPECT_EQ(r->group_size, 8);
  r = nsys::parse_nccl_range("ncclReduceScatter", "", 65536);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->op, "reducescatter");
  EXPECT_EQ(r->bytes, 65536);
  r = nsys::parse_nccl_range("ncclBroadcast count: 100, datatype: float", "", kNull);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bytes, 400);
  EXPECT_FALSE(nsys::parse_nccl_range("ncclCommInitRank", "", kNull));
  EXPECT_FALSE(nsys::parse_nccl_range("ncclGroupEnd", "", kNull));
  EXPECT_FALSE(nsys::parse_nccl_range("", "", kNull));
}

// ---- the real export (schema 2.9.1) ----

TEST(NsysImport, SaxpyExportOfOlderSchema) {
  const fs::path input = fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys/saxpy_mpi_cuda_a100.sqlite";
  ASSERT_TRUE(nsys::is_nsys_export(input));
  const fs::path out = tmp_dir("saxpy") / "saxpy.msdb";
  const auto summary = import_traces({input}, out);
  ASSERT_EQ(summary.ranks.size(), 1u);
  EXPECT_EQ(summary.ranks[0].rank, 0);
  EXPECT_EQ(summary.ranks[0].rank_source, "mpi");  // the main thread is named "MPI Rank 0"
  EXPECT_EQ(summary.ranks[0].gpu_events, 20u);     // 5 kernels + 15 memcpy
  const Profile profile = Profile::load(out);
  const auto& n = profile.counts();
  EXPECT_EQ(n.kernel, 5);
  EXPECT_EQ(n.memcpy, 15);
  EXPECT_EQ(n.runtime + n.driver, 57);  // 95 rows, 38 of them CUDA backtrace records
  EXPECT_EQ(n.nvtx, 22);
  const Rank& rank = profile.ranks().at(0);
  EXPECT_EQ(rank.hostname, "nid001608");
  EXPECT_EQ(rank.pid, 1230493);
  EXPECT_EQ(rank.clock_base_ns, 1687813257637297504);
  ASSERT_EQ(rank.devices.size(), 1u);
  EXPECT_EQ(rank.devices[0].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(rank.devices[0].sm_count, 108);
  EXPECT_EQ(rank.devices[0].compute_major, 8);
  // The first kernel: start 924922186 ns after the session start, on stream 7, launched by correlation 140.
  EXPECT_EQ(query(out,
                  "SELECT start_ns - 1687813257637297504, stream, correlation, grid_x, block_x, registers,"
                  " shared_bytes, graph_id FROM activities WHERE kind = 1 ORDER BY start_ns LIMIT 1"),
            "924922186,7,140,2,512,26,0,NULL");
  EXPECT_EQ(query(out,
                  "SELECT s.value, a.copy_kind IS NOT NULL FROM activities a JOIN strings s ON s.id = a.name"
                  " WHERE a.kind = 2 ORDER BY a.start_ns LIMIT 1"),
            "Memcpy HtoD (Pageable -> Device),1");
  // MPI calls are NVTX ranges of the "MPI" domain; "saxpy" ranges are in the default domain.
  EXPECT_EQ(
      query(
          out,
          "SELECT c.value, COUNT(*) FROM ranges r JOIN strings c ON c.id = r.category GROUP BY 1 ORDER BY 1"),
      "MPI,17;NVTX,5");
  EXPECT_EQ(
      query(out, "SELECT s.value FROM api_calls a JOIN strings s ON s.id = a.name WHERE a.kind = 2 LIMIT 1"),
      "cuModuleGetLoadingMode");
}

// The CPU side of the real export: thread scheduling paired into the intervals each thread ran on a core,
// and CPU samples with their call stacks. Every sample lies inside an interval its thread ran (a sample is
// taken of a running thread), which checks the pairing against data it did not use.
TEST(NsysImport, SaxpyThreadSchedulingAndCpuSamples) {
  const fs::path input = fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys/saxpy_mpi_cuda_a100.sqlite";
  const fs::path out = tmp_dir("saxpy_cpu") / "saxpy.msdb";
  import_traces({input}, out);
  const Profile profile = Profile::load(out);
  EXPECT_EQ(profile.counts().on_cpu, 1619);  // 3238 SCHED_EVENTS rows, each thread's on/off in pairs
  EXPECT_EQ(profile.counts().cpu_sample, 5451);
  const Rank& rank = profile.ranks().at(0);
  ASSERT_EQ(rank.os_threads.size(), 8u);
  const std::int64_t main_thread = rank.os_thread_of(1230493, 1230493);
  ASSERT_GE(main_thread, 0);
  EXPECT_EQ(rank.os_threads[static_cast<std::size_t>(main_thread)].name, "MPI Rank 0");
  const auto runs = rank.thread_on_cpu(static_cast<std::size_t>(main_thread));
  ASSERT_EQ(runs.size(), 1535u);
  EXPECT_EQ(runs[0].start_ns - rank.clock_base_ns, 21932);  // switched on at 21932 ns, off at 183273 ns
  EXPECT_EQ(runs[0].end_ns - rank.clock_base_ns, 183273);
  EXPECT_EQ(runs[0].cpu, 118);
  const auto samples = rank.thread_samples(static_cast<std::size_t>(main_thread));
  ASSERT_EQ(samples.size(), 5451u);
  std::size_t inside = 0, run = 0;
  for (const CpuSample& sample : samples) {
    while (run < runs.size() && runs[run].end_ns < sample.time_ns) ++run;
    if (run < runs.size() && runs[run].start_ns <= sample.time_ns) ++inside;
  }
  EXPECT_EQ(inside, samples.size());
  for (std::size_t i = 1; i < runs.size(); ++i) EXPECT_LE(runs[i - 1].end_ns, runs[i].start_ns);
  // Sample 2 of the export: the dynamic loader resolving a symbol, innermost frame first, modules by name.
  EXPECT_EQ(
      query(out,
            "SELECT s.value FROM thread_activity a JOIN strings s ON s.id = a.stack WHERE a.kind = 2 AND "
            "a.start_ns - 1687813257637297504 = 25074100"),
      "do_lookup_x (ld-2.31.so)\n_dl_lookup_symbol_x (ld-2.31.so)\n_dl_relocate_object (ld-2.31.so)\n"
      "dl_main (ld-2.31.so)\n_dl_sysdep_start (ld-2.31.so)\n_dl_start (ld-2.31.so)\n"
      "0x7fd9a16fe558 (ld-2.31.so)");
}

// ---- exports in the 3.x schema ----

constexpr std::int64_t kBase = 1700000000000000000;

TEST(NsysImport, RebuildsNvtxNestingAndResolvesTextIds) {
  const fs::path dir = tmp_dir("nvtx");
  {
    ExportBuilder b(dir / "nvtx.sqlite");
    b.process(100, "python");
    const std::int64_t t = gid(100, 100), worker = gid(100, 101);
    b.nvtx(75, 0, kNull, t, "MyLib", -1, 3);  // domain 3 of process 100
    b.nvtx(59, 1000, 9000, t, "step");
    b.nvtx(59, 2000, 5000, t, "", b.str("forward"), 3);  // registered string
    b.nvtx(59, 2500, 3000, t, "layer0");
    b.nvtx(59, 6000, 8000, t, "backward");
    b.nvtx(34, 7000, kNull, t, "checkpoint");
    b.nvtx(60, 1500, 4000, worker, "loader");
    b.nvtx(59, 9500, kNull, t, "never ended");
    b.nvtx(33, 0, kNull, t, "a category");  // not a range
    b.close();
  }
  const fs::path out = dir / "nvtx.msdb";
  const auto summary = import_traces({dir / "nvtx.sqlite"}, out);
  ASSERT_EQ(summary.ranks.size(), 1u);
  EXPECT_EQ(summary.ranks[0].rank_source, "nsys-process");
  EXPECT_EQ(summary.ranks[0].cpu_events, 7u);
  EXPECT_EQ(
      query(out, "SELECT s.value, r.depth, p.value, r.start_ns - " + std::to_string(kBase) +
                     ", r.end_ns - r.start_ns, c.value, r.tid FROM ranges r JOIN strings s ON s.id = r.name"
                     " LEFT JOIN ranges pr ON pr.id = r.parent_id LEFT JOIN strings p ON p.id = pr.name"
                     " JOIN strings c ON c.id = r.category ORDER BY r.tid, r.start_ns, r.depth"),
      "step,0,NULL,1000,8000,NVTX,100;forward,1,step,2000,3000,MyLib,100;layer0,2,forward,2500,500,NVTX,100;"
      "backward,1,step,6000,2000,NVTX,100;checkpoint,2,backward,7000,0,NVTX,100;"
      "never ended,0,NULL,9500,0,NVTX,100;loader,0,NULL,1500,2500,NVTX,101");
  EXPECT_THAT(query(out, "SELECT message FROM diagnostics"),
              ::testing::HasSubstr("1 NVTX ranges never ended"));
  const Profile profile = Profile::load(out);
  EXPECT_EQ(profile.ranks()[0].hostname, "node7");
  EXPECT_EQ(profile.ranks()[0].clock_base_ns, kBase);
}

// OS runtime calls (table as the 2.9 and 3.x schemas declare it) nest with the thread's NVTX ranges;
// scheduling covers a thread running when the capture began and one still running at its end; rows of
// processes that are not ranks are left out and said so.
TEST(NsysImport, OsRuntimeCallsSchedulingAndSamplesOfTheRanksThreads) {
  const fs::path dir = tmp_dir("osrt");
  {
    ExportBuilder b(dir / "osrt.sqlite");
    b.process(100, "python");
    const std::int64_t t = gid(100, 100), loader = gid(100, 101), other = gid(200, 200);
    b.exec(test::kNsysOsRuntimeTable);
    b.exec(test::kNsysSchedulingAndSampleTables);
    b.nvtx(59, 1000, 9000, t, "step");
    b.api(1200, 1300, t, 1, "cudaLaunchKernel_v7000");
    b.kernel(1400, 1500, 100, 0, 7, 1, "k");
    const std::int64_t poll = b.str("poll"), lock = b.str("pthread_mutex_lock"), read = b.str("read");
    auto osrt = [&](std::int64_t start, std::int64_t end, std::int64_t gtid, std::int64_t name) {
      b.exec(
          fmt::format("INSERT INTO OSRT_API VALUES ({}, {}, 27, {}, {}, 0, 0, 0)", start, end, gtid, name));
    };
    osrt(2000, 6000, t, poll);
    osrt(6500, 7000, t, lock);
    osrt(3000, 3500, loader, read);
    osrt(100, 200, other, read);
    auto sched = [&](std::int64_t time, std::int64_t cpu, int in, std::int64_t gtid) {
      b.exec(fmt::format("INSERT INTO SCHED_EVENTS VALUES ({}, {}, {}, {})", time, cpu, in, gtid));
    };
    sched(2100, 3, 0, t);  // running since before the capture
    sched(5900, 4, 1, t);
    sched(7100, 4, 0, t);
    sched(8000, 5, 1, t);  // still running at the end
    sched(2900, 1, 1, loader);
    sched(3600, 1, 0, loader);
    sched(9900, 1, 1, other);
    const std::int64_t main_fn = b.str("main"), step_fn = b.str("train_step"),
                       app = b.str("/opt/app/bin/app");
    b.exec(
        fmt::format("INSERT INTO COMPOSITE_EVENTS VALUES (1, 1100, 3, 1, {0}, 1), (2, 6000, 4, 1, {0}, 1), "
                    "(3, 3000, 1, 1, "
                    "{1}, 1);"
                    "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, stackDepth) VALUES (1, {2}, {4}, "
                    "1), (1, {3}, {4}, "
                    "0), (3, {2}, {4}, 0)",
                    t, other, main_fn, step_fn, app));
    // A damaged stack of 300 frames: the first 256 are kept, the rest counted.
    for (int depth = 0; depth < 300; ++depth)
      b.exec(fmt::format(
          "INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, stackDepth) VALUES (2, {}, {}, {})", main_fn,
          app, depth));
    b.close();
  }
  const fs::path out = dir / "osrt.msdb";
  import_traces({dir / "osrt.sqlite"}, out);
  const std::string base = std::to_string(kBase);
  EXPECT_EQ(query(out, "SELECT s.value, r.depth, r.start_ns - " + base + ", r.end_ns - " + base +
                           ", r.tid FROM ranges r JOIN strings s ON s.id = r.name WHERE r.kind = 8"
                           " ORDER BY r.tid, r.start_ns"),
            "poll,1,2000,6000,100;pthread_mutex_lock,1,6500,7000,100;read,0,3000,3500,101");
  EXPECT_EQ(query(out, "SELECT tid, start_ns - " + base + ", end_ns - " + base +
                           ", cpu FROM thread_activity WHERE kind = 1 ORDER BY tid, start_ns"),
            "100,0,2100,3;100,5900,7100,4;100,8000,9900,5;101,2900,3600,1");
  EXPECT_EQ(query(out, "SELECT a.tid, a.start_ns - " + base +
                           ", s.value FROM thread_activity a LEFT JOIN strings s ON s.id = a.stack"
                           " WHERE a.kind = 2 AND a.start_ns - " +
                           base + " = 1100"),
            "100,1100,train_step (app)\nmain (app)");
  EXPECT_EQ(query(out,
                  "SELECT length(s.value) - length(replace(s.value, char(10), '')), s.value LIKE "
                  "'main (app)%(44 more frames)' FROM thread_activity a JOIN strings s ON s.id = a.stack"
                  " WHERE a.start_ns - " +
                      base + " = 6000"),
            "256,1");
  EXPECT_THAT(
      query(out, "SELECT message FROM diagnostics"),
      ::testing::HasSubstr("3 OS runtime calls, 4 intervals threads ran on a core, 2 CPU samples; 3 rows "
                           "of processes that are not ranks left out"));
  const Profile profile = Profile::load(out);
  EXPECT_EQ(profile.counts().os_runtime, 3);
  const Rank& rank = profile.ranks().at(0);
  ASSERT_EQ(rank.os_threads.size(), 2u);
  EXPECT_EQ(rank.thread_on_cpu(0).size(), 3u);
  EXPECT_EQ(rank.thread_samples(0).size(), 2u);
  EXPECT_EQ(rank.thread_on_cpu(1).size(), 1u);
  EXPECT_EQ(rank.os_thread_of(100, 102), -1);
}

TEST(NsysImport, NcclDomainRangesBecomeCollectivesOnTheirKernels) {
  const fs::path dir = tmp_dir("nccl");
  {
    ExportBuilder b(dir / "nccl.sqlite");
    b.process(200, "train.py");
    const std::int64_t t = gid(200, 200);
    b.nvtx(75, 0, kNull, t, "NCCL", -1, 5);
    b.nvtx(59, 100, 400, t, "ncclCommInitRank", -1, 5);
    b.nvtx(59, 1000, 1200, t, "ncclAllReduce", -1, 5, R"({"Message size [bytes]":4194304})");
    b.api(1050, 1150, t, 42, "cudaLaunchKernel_v7000");
    b.kernel(1300, 5300, 200, 0, 13, 42,
             "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    b.nvtx(59, 6000, 6100, t, "ncclBroadcast", -1, 5, "", 1024);  // size as the integer payload
    b.api(6010, 6050, t, 43, "cudaLaunchKernel_v7000");
    b.kernel(6200, 6700, 200, 0, 13, 43, "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)");
    b.api(7000, 7050, t, 44, "cudaLaunchKernel_v7000");  // an NCCL kernel outside any NVTX range
    b.kernel(7100, 7900, 200, 0, 13, 44, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    b.nvtx(59, 8000, 8100, t, "ncclAllReduce", -1, 5, R"({"Message size [bytes]":8})");  // launched nothing
    b.api(2000, 2010, t, 45, "cudaLaunchKernel_v7000");
    b.kernel(2100, 2200, 200, 0, 7, 45, "void gemm<float>(float*)");
    b.close();
  }
  const fs::path out = dir / "nccl.msdb";
  import_traces({dir / "nccl.sqlite"}, out);
  EXPECT_EQ(
      query(out,
            "SELECT o.value, c.in_bytes, c.out_bytes, a.value, p.value, c.source, c.activity_id IS NOT NULL,"
            " c.start_ns - " +
                std::to_string(kBase) +
                " FROM collectives c JOIN strings o ON o.id = c.op LEFT JOIN strings a ON a.id = c.algorithm"
                " LEFT JOIN strings p ON p.id = c.protocol ORDER BY c.start_ns"),
      "allreduce,4194304,4194304,RING,LL,nvtx,1,1300;broadcast,1024,1024,RING,LL,nvtx,1,6200;"
      "allgather,NULL,NULL,RING,LL,kernel_name,1,7100;allreduce,8,8,NULL,NULL,nvtx,0,8000");
  EXPECT_EQ(query(out, "SELECT backend FROM ranks"), "nccl");
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM ranges"), "4");
}

// ---- NCCL groups: collectives issued inside ncclGroupStart..ncclGroupEnd ----

// One thread of a process that uses NCCL, as NCCL instruments itself: push/pop ranges in the "NCCL" NVTX
// domain, kernels launched with cuLaunchKernelEx.
class NcclThread {
 public:
  NcclThread(ExportBuilder& b, std::int64_t pid) : b_(b), pid_(pid), t_(gid(pid, pid)) {
    b_.process(pid, "train.py");
    b_.nvtx(75, 0, kNull, t_, "NCCL", -1, kDomain);
  }
  void range(std::int64_t start, std::int64_t end, const std::string& name, std::int64_t bytes = kNull,
             const std::string& extra = "") {
    const std::string json =
        bytes == kNull ? "" : "{\"Message size [bytes]\":" + std::to_string(bytes) + extra + "}";
    b_.nvtx(59, start, end, t_, name, -1, kDomain, json);
  }
  void group_start(std::int64_t at) { range(at, at + 5, "ncclGroupStart"); }
  // A launch at CALL (inside whichever range encloses it) of a kernel that runs [START, END) on STREAM.
  void launch(std::int64_t call, std::int64_t correlation, std::int64_t start, std::int64_t end,
              std::int64_t stream, const std::string& kernel) {
    b_.api(call, call + 20, t_, correlation, "cuLaunchKernelEx");
    b_.kernel(start, end, pid_, 0, stream, correlation, kernel);
  }
  std::int64_t tid() const { return t_; }

 private:
  static constexpr std::int64_t kDomain = 5;
  ExportBuilder& b_;
  std::int64_t pid_, t_;
};

// The collectives of a profile, in time order: op, message bytes, source, correlation of the kernel it ran
// as, start and end (relative to the session start), algorithm, protocol.
std::string collective_rows(const fs::path& profile) {
  return query(profile,
               "SELECT o.value, COALESCE(c.in_bytes, c.out_bytes), c.source, k.correlation, c.start_ns - " +
                   std::to_string(kBase) + ", c.end_ns - " + std::to_string(kBase) +
                   ", a.value, p.value FROM collectives c JOIN strings o ON o.id = c.op"
                   " LEFT JOIN activities k ON k.id = c.activity_id LEFT JOIN strings a ON a.id = c.algorithm"
                   " LEFT JOIN strings p ON p.id = c.protocol ORDER BY c.start_ns, c.id");
}

const std::string kArgs = "(ncclDevKernelArgsStorage<4096ul>)";

TEST(NsysImport, GroupedCollectivesWithOneKernelPerOpTakeTheirKernelsInOrder) {
  const fs::path dir = tmp_dir("group_per_op");
  {
    ExportBuilder b(dir / "g.sqlite");
    NcclThread n(b, 800);
    // Two all-reduces on two communicators in one group: one kernel each, launched by ncclGroupEnd in issue
    // order (the kernel table lists them the other way round).
    n.group_start(1000);
    n.range(1100, 1150, "ncclAllReduce", 1024);
    b.api(1160, 1170, n.tid(), 10, "cudaLaunchKernel_v7000");  // not NCCL, between the collectives
    b.kernel(1500, 1600, 800, 0, 7, 10, "void scale(float*)");
    n.range(1200, 1250, "ncclAllReduce", 2048);
    n.range(1300, 1600, "ncclGroupEnd");
    b.api(1310, 1320, n.tid(), 9, "cudaEventRecord_v3020");  // launches nothing
    n.launch(1450, 13, 2100, 2600, 14, "ncclDevKernel_AllReduce_Sum_f32_TREE_LL128" + kArgs);
    n.launch(1350, 11, 2000, 3000, 13, "ncclDevKernel_AllReduce_Sum_f32_RING_LL" + kArgs);
    // An all-gather and a reduce-scatter whose kernels were launched in the other order: matched by op.
    n.group_start(4000);
    n.range(4100, 4150, "ncclAllGather", 512);
    n.range(4200, 4250, "ncclReduceScatter", 256);
    n.range(4300, 4600, "ncclGroupEnd");
    n.launch(4350, 21, 5000, 5500, 13, "ncclDevKernel_ReduceScatter_Sum_bf16_RING_SIMPLE" + kArgs);
    n.launch(4450, 22, 5100, 5800, 14, "ncclDevKernel_AllGather_RING_LL128" + kArgs);
    b.close();
  }
  const fs::path out = dir / "g.msdb";
  import_traces({dir / "g.sqlite"}, out);
  EXPECT_EQ(collective_rows(out),
            "allreduce,1024,nvtx,11,2000,3000,RING,LL;allreduce,2048,nvtx,13,2100,2600,TREE,LL128;"
            "reducescatter,256,nvtx,21,5000,5500,RING,SIMPLE;allgather,512,nvtx,22,5100,5800,RING,LL128");
  EXPECT_EQ(query(out, "SELECT COUNT(*), COUNT(DISTINCT activity_id) FROM collectives"), "4,4");
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM activities WHERE kind = 1"), "5");
}

TEST(NsysImport, GroupedCollectivesFusedInOneKernelAllRunAsIt) {
  const fs::path dir = tmp_dir("group_fused");
  {
    ExportBuilder b(dir / "g.sqlite");
    NcclThread n(b, 810);
    // FSDP's coalesced all-gather of three parameter shards: NCCL runs the group as one kernel.
    n.group_start(1000);
    n.range(1100, 1150, "ncclAllGather", 1000);
    n.range(1200, 1250, "ncclAllGather", 2000);
    n.range(1300, 1350, "ncclAllGather", 3000);
    n.range(1400, 1700, "ncclGroupEnd");
    n.launch(1500, 31, 7000, 9000, 13, "ncclDevKernel_AllGather_RING_LL" + kArgs);
    // Different operations in one plan run as NCCL's generic kernel, whose name states no operation.
    n.group_start(10000);
    n.range(10100, 10150, "ncclAllReduce", 64);
    n.range(10200, 10250, "ncclBroadcast", 32);
    n.range(10300, 10500, "ncclGroupEnd");
    n.launch(10400, 32, 11000, 12000, 13, "ncclDevKernel_Generic_1" + kArgs);
    b.close();
  }
  const fs::path out = dir / "g.msdb";
  import_traces({dir / "g.sqlite"}, out);
  EXPECT_EQ(collective_rows(out),
            "allgather,1000,nvtx,31,7000,9000,RING,LL;allgather,2000,nvtx,31,7000,9000,RING,LL;"
            "allgather,3000,nvtx,31,7000,9000,RING,LL;allreduce,64,nvtx,32,11000,12000,NULL,NULL;"
            "broadcast,32,nvtx,32,11000,12000,NULL,NULL");
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM collectives WHERE source = 'kernel_name'"), "0");
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM activities WHERE kind = 1"), "2");
}

TEST(NsysImport, GroupedCollectivesSplitOverFewerKernelsStayInOrder) {
  const fs::path dir = tmp_dir("group_split");
  {
    ExportBuilder b(dir / "g.sqlite");
    NcclThread n(b, 815);
    // Four reduce-scatters that NCCL ran as two launches: the first two in the first kernel.
    n.group_start(1000);
    for (int i = 0; i < 4; ++i) n.range(1100 + 100 * i, 1150 + 100 * i, "ncclReduceScatter", 100 * (i + 1));
    n.range(1500, 1800, "ncclGroupEnd");
    n.launch(1600, 51, 2000, 3000, 13, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL" + kArgs);
    n.launch(1700, 52, 3000, 4000, 13, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL" + kArgs);
    b.close();
  }
  const fs::path out = dir / "g.msdb";
  import_traces({dir / "g.sqlite"}, out);
  EXPECT_EQ(collective_rows(out),
            "reducescatter,100,nvtx,51,2000,3000,RING,LL;reducescatter,200,nvtx,51,2000,3000,RING,LL;"
            "reducescatter,300,nvtx,52,3000,4000,RING,LL;reducescatter,400,nvtx,52,3000,4000,RING,LL");
}

TEST(NsysImport, GroupedSendRecvRunAsOneSendRecvKernel) {
  const fs::path dir = tmp_dir("group_p2p");
  {
    ExportBuilder b(dir / "g.sqlite");
    NcclThread n(b, 820);
    // Pipeline parallelism: send the activation to the next stage, receive its gradient, in one group.
    n.group_start(1000);
    n.range(1100, 1150, "ncclSend", 4096, ",\"Peer\":1");
    n.range(1200, 1250, "ncclRecv", 4096, ",\"Peer\":1");
    n.range(1300, 1500, "ncclGroupEnd");
    n.launch(1400, 61, 2000, 2500, 13, "ncclDevKernel_SendRecv" + kArgs);
    // An all-to-all as grouped send/recv to two peers, run by an older NCCL's kernel.
    n.group_start(3000);
    n.range(3100, 3110, "ncclSend", 100, ",\"Peer\":0");
    n.range(3120, 3130, "ncclRecv", 200, ",\"Peer\":0");
    n.range(3140, 3150, "ncclSend", 300, ",\"Peer\":1");
    n.range(3160, 3170, "ncclRecv", 400, ",\"Peer\":1");
    n.range(3200, 3400, "ncclGroupEnd");
    n.launch(3300, 62, 4000, 4800, 13, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)");
    b.close();
  }
  const fs::path out = dir / "g.msdb";
  import_traces({dir / "g.sqlite"}, out);
  EXPECT_EQ(collective_rows(out),
            "send,4096,nvtx,61,2000,2500,NULL,NULL;recv,4096,nvtx,61,2000,2500,NULL,NULL;"
            "send,100,nvtx,62,4000,4800,RING,SIMPLE;recv,200,nvtx,62,4000,4800,RING,SIMPLE;"
            "send,300,nvtx,62,4000,4800,RING,SIMPLE;recv,400,nvtx,62,4000,4800,RING,SIMPLE");
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM collectives WHERE source = 'kernel_name'"), "0");
}

TEST(NsysImport, NestedGroupsLaunchFromTheOutermostGroupEnd) {
  const fs::path dir = tmp_dir("group_nested");
  {
    ExportBuilder b(dir / "g.sqlite");
    NcclThread n(b, 830);
    n.group_start(1000);
    n.range(1100, 1150, "ncclAllReduce", 100);
    n.group_start(1200);  // a library's own group inside the caller's: only the outer end launches
    n.range(1300, 1350, "ncclAllReduce", 200);
    n.range(1400, 1420, "ncclGroupEnd");
    n.range(1500, 1550, "ncclBroadcast", 300);
    n.range(1600, 1900, "ncclGroupEnd");
    n.launch(1650, 41, 2000, 2400, 13, "ncclDevKernel_AllReduce_Sum_f32_RING_LL" + kArgs);
    n.launch(1700, 42, 2000, 2300, 14, "ncclDevKernel_AllReduce_Sum_f32_RING_LL128" + kArgs);
    n.launch(1750, 43, 2000, 2200, 15, "ncclDevKernel_Broadcast_RING_SIMPLE" + kArgs);
    // Outside any group: the collective's own range launches its kernel.
    n.range(3000, 3200, "ncclAllReduce", 400);
    n.launch(3100, 44, 3300, 3500, 13, "ncclDevKernel_AllReduce_Sum_f32_TREE_LL" + kArgs);
    // A group whose ncclGroupEnd launched nothing captured: its collective keeps its CPU times.
    n.group_start(5000);
    n.range(5100, 5150, "ncclAllReduce", 8);
    n.range(5200, 5300, "ncclGroupEnd");
    b.close();
  }
  const fs::path out = dir / "g.msdb";
  import_traces({dir / "g.sqlite"}, out);
  EXPECT_EQ(collective_rows(out),
            "allreduce,100,nvtx,41,2000,2400,RING,LL;allreduce,200,nvtx,42,2000,2300,RING,LL128;"
            "broadcast,300,nvtx,43,2000,2200,RING,SIMPLE;allreduce,400,nvtx,44,3300,3500,TREE,LL;"
            "allreduce,8,nvtx,NULL,5100,5150,NULL,NULL");
  // The group calls stay plain NVTX ranges.
  EXPECT_EQ(
      query(out,
            "SELECT COUNT(*) FROM ranges r JOIN strings s ON s.id = r.name WHERE s.value LIKE 'ncclGroup%'"),
      "6");
}

TEST(NsysImport, GroupWhoseStartWasNotCapturedEndsAtItsGroupEnd) {
  const fs::path dir = tmp_dir("group_cut");
  {
    ExportBuilder b(dir / "g.sqlite");
    NcclThread n(b, 840);
    // The capture began between ncclGroupStart and the first all-gather of a coalesced group.
    n.range(100, 150, "ncclAllGather", 10);
    n.range(200, 250, "ncclAllGather", 20);
    n.range(300, 500, "ncclGroupEnd");
    n.launch(400, 71, 1000, 2000, 13, "ncclDevKernel_AllGather_RING_LL" + kArgs);
    // An all-reduce launching its own kernel, then another cut group: only what follows the all-reduce joins.
    n.range(3000, 3100, "ncclAllReduce", 30);
    n.launch(3050, 72, 3200, 3300, 13, "ncclDevKernel_AllReduce_Sum_f32_RING_LL" + kArgs);
    n.range(3400, 3450, "ncclReduceScatter", 40);
    n.range(3500, 3700, "ncclGroupEnd");
    n.launch(3600, 73, 4000, 4500, 13, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL" + kArgs);
    b.close();
  }
  const fs::path out = dir / "g.msdb";
  import_traces({dir / "g.sqlite"}, out);
  EXPECT_EQ(collective_rows(out),
            "allgather,10,nvtx,71,1000,2000,RING,LL;allgather,20,nvtx,71,1000,2000,RING,LL;"
            "allreduce,30,nvtx,72,3200,3300,RING,LL;reducescatter,40,nvtx,73,4000,4500,RING,LL");
}

TEST(NsysImport, CudaGraphKernelsKeepTheirGraphId) {
  const fs::path dir = tmp_dir("graphs");
  {
    ExportBuilder b(dir / "graphs.sqlite");
    b.process(300, "infer");
    const std::int64_t t = gid(300, 300);
    b.api(100, 200, t, 7, "cudaGraphLaunch_v10000");
    b.kernel(300, 400, 300, 0, 20, 7, "void a()", 5, 11);
    b.kernel(400, 500, 300, 0, 20, 7, "void b()", 5, 12);
    b.kernel(600, 700, 300, 0, 20, 8, "void c()");
    b.exec("INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (1000, 2000, 0, 1, NULL, 20, 9, " +
           std::to_string(gid(300)) + ", 9, 90)");
    b.close();
  }
  const fs::path out = dir / "graphs.msdb";
  import_traces({dir / "graphs.sqlite"}, out);
  EXPECT_EQ(
      query(out,
            "SELECT s.value, a.graph_id, a.correlation FROM activities a JOIN strings s ON s.id = a.name"
            " ORDER BY a.start_ns"),
      "void a(),5,7;void b(),5,7;void c(),NULL,8;CUDA graph 9,9,9");
  EXPECT_EQ(query(out, "SELECT s.value FROM api_calls a JOIN strings s ON s.id = a.name"), "cudaGraphLaunch");
}

TEST(NsysImport, OneExportOfSeveralProcessesIsOneJob) {
  const fs::path dir = tmp_dir("multi");
  for (const bool mpi : {false, true}) {
    const fs::path input = dir / (mpi ? "mpi.sqlite" : "plain.sqlite");
    {
      ExportBuilder b(input);
      b.process(401, "worker");
      b.process(400, "worker");
      b.api(10, 20, gid(401, 401), 1, "cudaLaunchKernel_v7000");
      b.kernel(30, 40, 401, 1, 7, 1, "void k1()");
      b.api(10, 20, gid(400, 400), 1, "cudaLaunchKernel_v7000");
      b.kernel(50, 90, 400, 0, 7, 1, "void k0()");
      b.exec(
          "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId,"
          " globalPid, bytes, copyKind, srcKind, dstKind) VALUES (100, 200, 1, 1, 8, 2, " +
          std::to_string(gid(401)) + ", 4096, 8, 2, 2)");
      b.exec(
          "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId,"
          " globalPid, value, bytes, memKind) VALUES (100, 150, 0, 1, 7, 3, " +
          std::to_string(gid(400)) + ", 0, 512, 2)");
      b.exec(
          "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId,"
          " correlationId, globalPid, syncType, eventId) VALUES (300, 400, 0, 1, 7, 4, " +
          std::to_string(gid(400)) + ", 3, 0)");
      if (mpi) {
        b.exec("CREATE TABLE MPI_RANKS (globalTid INTEGER NOT NULL, rank INTEGER NOT NULL)");
        b.exec("INSERT INTO MPI_RANKS VALUES (" + std::to_string(gid(401, 401)) + ", 0), (" +
               std::to_string(gid(400, 400)) + ", 1)");
      }
      b.close();
    }
    const fs::path out = dir / (mpi ? "mpi.msdb" : "plain.msdb");
    const auto summary = import_traces({input}, out);
    ASSERT_EQ(summary.ranks.size(), 2u);
    // Without MPI ranks processes are numbered in pid order; with them, as MPI says.
    const std::string source = mpi ? "mpi" : "nsys-process";
    EXPECT_EQ(query(out, "SELECT rank, pid, rank_source FROM ranks ORDER BY rank"),
              mpi ? "0,401," + source + ";1,400," + source : "0,400," + source + ";1,401," + source);
    const std::string pid400 = mpi ? "1" : "0", pid401 = mpi ? "0" : "1";
    EXPECT_EQ(query(out, "SELECT rank, device, name FROM devices ORDER BY rank"),
              mpi ? "0,1,NVIDIA H100 80GB HBM3;1,0,NVIDIA H100 80GB HBM3"
                  : "0,0,NVIDIA H100 80GB HBM3;1,1,NVIDIA H100 80GB HBM3");
    EXPECT_EQ(query(out,
                    "SELECT s.value, a.bytes, c.value FROM activities a JOIN strings s ON s.id = a.name"
                    " LEFT JOIN strings c ON c.id = a.copy_kind WHERE a.rank = " +
                        pid401 + " AND a.kind = 2"),
              "Memcpy DtoD (Device -> Device),4096,DtoD");
    EXPECT_EQ(
        query(out,
              "SELECT a.kind, s.value FROM activities a JOIN strings s ON s.id = a.name WHERE a.rank = " +
                  pid400 + " AND a.kind > 2 ORDER BY a.kind"),
        "3,Memset (Device);4,Stream Sync");
    EXPECT_EQ(query(out, "SELECT COUNT(*) FROM streams"), "3");
  }
}

TEST(NsysImport, SeveralExportsOfOneJobCombine) {
  const fs::path dir = tmp_dir("job");
  for (int rank = 0; rank < 2; ++rank) {
    ExportBuilder b(dir / ("report_" + std::to_string(rank) + ".sqlite"));
    const std::int64_t pid = 500 + rank;
    b.process(pid, "train");
    b.str("unused");
    b.exec("INSERT INTO ThreadNames VALUES (" +
           std::to_string(b.str("MPI Rank " + std::to_string(1 - rank))) + ", 0, " +
           std::to_string(gid(pid, pid)) + ")");
    b.api(10, 20, gid(pid, pid), 1, "cudaLaunchKernel_v7000");
    b.kernel(30, 40, pid, 0, 7, 1, "void k()");
    b.close();
  }
  const fs::path out = dir / "job.msdb";
  const auto summary = import_traces({dir}, out);
  ASSERT_EQ(summary.ranks.size(), 2u);
  EXPECT_EQ(query(out, "SELECT rank, pid, rank_source FROM ranks ORDER BY rank"), "0,501,mpi;1,500,mpi");
  EXPECT_EQ(query(out, "SELECT name FROM threads ORDER BY rank"), "MPI Rank 0;MPI Rank 1");
}

TEST(NsysImport, KeepsAndFlagsEventsBeforeTheSessionStart) {
  const fs::path dir = tmp_dir("negative");
  {
    ExportBuilder b(dir / "neg.sqlite");
    b.process(600, "p");
    b.api(-500, -400, gid(600, 600), 1, "cudaMalloc_v3020");
    b.kernel(-300, 100, 600, 0, 7, 2, "void k()");
    b.close();
  }
  const fs::path out = dir / "neg.msdb";
  import_traces({dir / "neg.sqlite"}, out);
  EXPECT_EQ(query(out, "SELECT first_ns - " + std::to_string(kBase) + " FROM ranks"), "-500");
  EXPECT_THAT(query(out, "SELECT message FROM diagnostics WHERE severity = 'warning'"),
              ::testing::HasSubstr("3 event times lie before the capture session start"));
}

TEST(NsysImport, UnknownSchemaVersionImportsWhatItUnderstandsAndWarnsOnce) {
  const fs::path dir = tmp_dir("version");
  {
    ExportBuilder b(dir / "v9.sqlite", "9.0.0");
    b.process(700, "p");
    b.exec("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN futureColumn INTEGER");
    b.kernel(10, 20, 700, 0, 7, 1, "void k()");
    b.close();
  }
  const fs::path out = dir / "v9.msdb";
  import_traces({dir / "v9.sqlite"}, out);
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM activities"), "1");
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM diagnostics WHERE message LIKE '%schema 9.0.0 is not one%'"),
            "1");
}

std::string import_error(const fs::path& input) {
  try {
    import_traces({input}, input.parent_path() / "out.msdb");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(NsysImport, RefusesBadInputWithOneLine) {
  const fs::path dir = tmp_dir("bad");
  {
    sql::Database other(dir / "other.sqlite", false);
    other.exec("CREATE TABLE recipes (name TEXT)");
  }
  EXPECT_EQ(
      import_error(dir / "other.sqlite"),
      (dir / "other.sqlite").string() +
          ": an SQLite database but not an Nsight Systems export (no META_DATA_EXPORT, EXPORT_META_DATA or "
          "StringIds table)");
  {
    std::ofstream corrupt(dir / "corrupt.sqlite", std::ios::binary);
    corrupt << std::string("SQLite format 3\0", 16) << std::string(4096, '\x7f');
  }
  EXPECT_THAT(
      import_error(dir / "corrupt.sqlite"),
      ::testing::StartsWith((dir / "corrupt.sqlite").string() + ": unreadable or corrupt SQLite database ("));
  {
    ExportBuilder b(dir / "empty.sqlite");
    b.close();
  }
  EXPECT_EQ(
      import_error(dir / "empty.sqlite"),
      (dir / "empty.sqlite").string() + ": the Nsight Systems export holds no CUDA or NVTX events to import");
  EXPECT_FALSE(fs::exists(dir / "out.msdb"));
  // A meshscope profile is SQLite too.
  const fs::path profile = tmp_dir("bad_profile") / "p.msdb";
  {
    ExportBuilder b(profile.parent_path() / "ok.sqlite");
    b.process(1, "p");
    b.kernel(1, 2, 1, 0, 7, 1, "void k()");
    b.close();
    import_traces({profile.parent_path() / "ok.sqlite"}, profile);
  }
  EXPECT_THAT(import_error(profile),
              ::testing::HasSubstr("a meshscope profile, not an Nsight Systems export"));
}

TEST(NsysImport, CommandLineExitsOneWithOneLine) {
  const fs::path dir = tmp_dir("cli");
  {
    std::ofstream corrupt(dir / "corrupt.sqlite", std::ios::binary);
    corrupt << std::string("SQLite format 3\0", 16) << std::string(4096, '\x01');
  }
  const std::string command = std::string(MESHSCOPE_BINARY) + " import " + (dir / "corrupt.sqlite").string() +
                              " -o " + (dir / "out.msdb").string() + " 2>" + (dir / "stderr.txt").string();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream err(dir / "stderr.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], ::testing::HasSubstr("corrupt.sqlite: unreadable or corrupt SQLite database"));
}

// ---- hostile and out-of-range exports ----

// Runs SQL on a copy of the real saxpy export.
fs::path saxpy_with(const fs::path& dir, const std::string& name, const std::string& sql_text) {
  const fs::path copy = dir / (name + ".sqlite");
  fs::copy_file(fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys/saxpy_mpi_cuda_a100.sqlite", copy,
                fs::copy_options::overwrite_existing);
  sql::Database db(copy, false);
  db.exec(sql_text);
  return copy;
}

TEST(NsysHostile, AViewInPlaceOfATableIsRefusedNotRun) {
  const fs::path dir = tmp_dir("hostile_view");
  // Was: import hung forever in the view's recursion.
  const fs::path endless = saxpy_with(dir, "endless",
                                      "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO real_kernels;"
                                      "CREATE VIEW cupti_activity_kind_kernel AS WITH RECURSIVE r(x) AS "
                                      "(SELECT 1 UNION ALL SELECT x + 1 FROM r)"
                                      " SELECT x AS start, x AS end, 0 AS deviceId, 7 AS streamId, x AS "
                                      "correlationId, 0 AS globalPid FROM r");
  EXPECT_EQ(import_error(endless),
            endless.string() +
                ": CUPTI_ACTIVITY_KIND_KERNEL is not an ordinary table (a view or virtual "
                "table; meshscope reads only tables)");
  EXPECT_FALSE(fs::exists(dir / "out.msdb"));
  // A column computed when read counts as absent: its expression does not run.
  const fs::path computed =
      saxpy_with(dir, "computed",
                 "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphId INTEGER GENERATED "
                 "ALWAYS AS (length(printf('%.*c', 100000000, 'x'))) VIRTUAL");
  EXPECT_EQ(import_error(computed), "(no error)");
  EXPECT_EQ(query(dir / "out.msdb", "SELECT count(*) FROM activities WHERE graph_id IS NOT NULL"), "0");
}

TEST(NsysHostile, TimesOutOfRangeAreRefusedNamingTableAndRow) {
  const fs::path dir = tmp_dir("hostile_times");
  {
    ExportBuilder b(dir / "max.sqlite");
    b.process(1, "p");
    b.kernel(1000, 2000, 1, 0, 7, 1, "void ok()");
    b.kernel(std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max(), 1, 0, 7, 2,
             "void late()");
    b.close();
  }
  // Was: imported with exit 0 and start + session start wrapped negative.
  EXPECT_EQ(import_error(dir / "max.sqlite"),
            (dir / "max.sqlite").string() +
                ": CUPTI_ACTIVITY_KIND_KERNEL row 2: time 9223372036854775807 ns (after the session start at "
                "1700000000000000000 ns) is out of range");
  {
    ExportBuilder b(dir / "session.sqlite");
    b.process(1, "p");
    b.kernel(1000, 2000, 1, 0, 7, 1, "void ok()");
    b.exec("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 9223372036854775807");
    b.close();
  }
  EXPECT_EQ(import_error(dir / "session.sqlite"),
            (dir / "session.sqlite").string() +
                ": TARGET_INFO_SESSION_START_TIME: utcEpochNs 9223372036854775807 is out of range");
  {
    ExportBuilder b(dir / "backwards.sqlite");
    b.process(1, "p");
    b.kernel(5000, 2000, 1, 0, 7, 1, "void backwards()");
    b.kernel(6000, 7000, 1, 0, 7, 2, "void ok()");
    b.exec("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 0");
    b.close();
  }
  // An activity that ends before it starts is kept with zero length and reported (the profile stores
  // end_ns >= start_ns).
  EXPECT_EQ(import_error(dir / "backwards.sqlite"), "(no error)");
  EXPECT_EQ(query(dir / "out.msdb", "SELECT end_ns - start_ns FROM activities ORDER BY start_ns"), "0;1000");
  EXPECT_EQ(query(dir / "out.msdb",
                  "SELECT count(*) FROM diagnostics WHERE message LIKE '%1 events ended before "
                  "they started in the export; kept with zero length'"),
            "1");
  {
    ExportBuilder b(dir / "device.sqlite");
    b.process(1, "p");
    b.kernel(1000, 2000, 1, 0, 7, 1, "void k()");
    b.exec("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 4294967296");
    b.close();
  }
  EXPECT_EQ(import_error(dir / "device.sqlite"),
            (dir / "device.sqlite").string() +
                ": CUPTI_ACTIVITY_KIND_KERNEL row 1: deviceId 4294967296 is out of range");
  {
    ExportBuilder b(dir / "mpi.sqlite");
    b.process(1, "p");
    b.kernel(1000, 2000, 1, 0, 7, 1, "void k()");
    b.exec(
        "CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER);"
        "INSERT INTO MPI_RANKS VALUES (" +
        std::to_string(gid(1, 1)) + ", 4294967296)");
    b.close();
  }
  EXPECT_EQ(import_error(dir / "mpi.sqlite"),
            (dir / "mpi.sqlite").string() + ": MPI_RANKS row 1: rank 4294967296 is out of range");
}

TEST(NsysHostile, TextInAnIntegerColumnIsRefusedNamingTableAndRow) {
  const fs::path dir = tmp_dir("hostile-types");
  {
    ExportBuilder b(dir / "text.sqlite");
    b.process(1, "p");
    b.kernel(1000, 2000, 1, 0, 7, 1, "void ok()");
    b.kernel(3000, 4000, 1, 0, 7, 2, "void typed()");
    b.exec("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = 'soon' WHERE correlationId = 2");
    b.close();
  }
  // Was: the text read as 0, a kernel of 155 s (after the session start).
  EXPECT_EQ(
      import_error(dir / "text.sqlite"),
      (dir / "text.sqlite").string() +
          ": CUPTI_ACTIVITY_KIND_KERNEL.end row 2: holds text where an integer belongs (a damaged file?)");
  {
    ExportBuilder b(dir / "blob.sqlite");
    b.process(1, "p");
    b.kernel(1000, 2000, 1, 0, 7, 1, "void ok()");
    b.exec("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = x'07'");
    b.close();
  }
  EXPECT_NE(import_error(dir / "blob.sqlite").find("CUPTI_ACTIVITY_KIND_KERNEL.streamId row 1: holds a blob"),
            std::string::npos)
      << import_error(dir / "blob.sqlite");
}

TEST(NsysHostile, AnExportOfOnlyStringIdsIsOneLineOnTheCommandLine) {
  const fs::path dir = tmp_dir("hostile_strings_only");
  {
    sql::Database db(dir / "strings.sqlite", false);
    db.exec(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (1, 'x')");
  }
  // Was two lines: a warning about the unstated schema version, then the error.
  const std::string command = std::string(MESHSCOPE_BINARY) + " import " + (dir / "strings.sqlite").string() +
                              " -o " + (dir / "out.msdb").string() + " 2>" + (dir / "stderr.txt").string();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream err(dir / "stderr.txt");
  std::vector<std::string> lines;
  for (std::string line; std::getline(err, line);) lines.push_back(line);
  EXPECT_EQ(lines,
            std::vector<std::string>{"meshscope: " + (dir / "strings.sqlite").string() +
                                     ": the Nsight Systems export holds no CUDA or NVTX events to import"});
}

// ---- export layouts of Nsight Systems 2024 and 2026; device-wide synchronisations ----

// One step of one process, written as a list of row inserts: NVTX ranges nesting, launches, kernels on two
// streams, an NCCL all-reduce, a stream synchronisation and two device-wide ones (context and event sync,
// which CUPTI gives no stream).
std::vector<std::function<void(ExportBuilder&)>> one_step_rows() {
  using B = ExportBuilder&;
  const std::int64_t t = gid(300, 300);
  const std::int64_t none = 4294967295;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE
  return {
      [=](B b) { b.nvtx(59, 1000, 90000, t, "ProfilerStep#7"); },
      [=](B b) { b.nvtx(59, 2000, 40000, t, "forward"); },
      [=](B b) { b.nvtx(59, 3000, 9000, t, "layer0"); },
      [=](B b) { b.api(3500, 3600, t, 1, "cudaLaunchKernel_v7000"); },
      [=](B b) { b.kernel(4000, 14000, 300, 0, 7, 1, "void gemm<float>(float*)"); },
      [=](B b) { b.api(9500, 9600, t, 2, "cudaLaunchKernel_v7000"); },
      [=](B b) { b.kernel(14500, 20000, 300, 0, 7, 2, "void relu<float>(float*)"); },
      [=](B b) { b.nvtx(75, 0, kNull, t, "NCCL", -1, 5); },
      [=](B b) {
        b.nvtx(59, 41000, 42000, t, "ncclAllReduce", -1, 5, R"({"Message size [bytes]":1048576})");
      },
      [=](B b) { b.api(41100, 41200, t, 3, "cudaLaunchKernel_v7000"); },
      [=](B b) {
        b.kernel(41500, 61500, 300, 0, 13, 3,
                 "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
      },
      [=](B b) { b.api(62000, 70000, t, 4, "cudaStreamSynchronize_v3020"); },
      [=](B b) { b.sync(62000, 70000, 300, 0, 7, 4, 3); },
      [=](B b) { b.api(71000, 80000, t, 5, "cudaDeviceSynchronize_v3020"); },
      [=](B b) { b.sync(71000, 80000, 300, 0, none, 5, 4); },
      [=](B b) { b.api(81000, 85000, t, 6, "cudaEventSynchronize_v3020"); },
      [=](B b) { b.sync(81000, 85000, 300, 0, none, 6, 1); },
  };
}

// Everything the profile holds of one export, in a fixed order, for comparing two layouts.
std::string whole_profile(const fs::path& out) {
  const std::string base = std::to_string(kBase);
  return query(out,
               "SELECT a.kind, a.device, a.stream, s.value, a.start_ns - " + base +
                   ", a.end_ns - a.start_ns, a.correlation FROM activities a JOIN strings s ON s.id = a.name"
                   " ORDER BY a.stream, a.start_ns") +
         "|" +
         query(out,
               "SELECT s.value, r.depth, p.value, r.start_ns - " + base +
                   " FROM ranges r JOIN strings s ON s.id = r.name LEFT JOIN ranges pr ON pr.id = r.parent_id"
                   " LEFT JOIN strings p ON p.id = pr.name ORDER BY r.start_ns, r.depth") +
         "|" + query(out, "SELECT device, stream, name FROM streams ORDER BY device, stream") + "|" +
         collective_rows(out) + "|" +
         query(out, "SELECT kind, start_ns - " + base + ", correlation FROM api_calls ORDER BY start_ns");
}

TEST(NsysLayouts, Exports2024And2026ImportAlikeWhateverTheRowOrder) {
  const fs::path dir = tmp_dir("layouts");
  {
    // Nsight Systems 2024.5: export schema 3.15, rows in time order per table.
    ExportBuilder b(dir / "nsys2024.sqlite", "3.15.1");
    b.process(300, "train.py");
    for (const auto& row : one_step_rows()) row(b);
    b.close();
  }
  {
    // Nsight Systems 2026.1 (export schema 3.24.14, product version 2026.1.1.204 as such exports state):
    // since 2025.6 "it cannot be assumed that rows will continue to be exported in any particular order,
    // including timestamp order" (release notes). The same rows, written last to first.
    ExportBuilder b(dir / "nsys2026.sqlite", "3.24.14");
    b.exec(
        "UPDATE META_DATA_EXPORT SET name = 'EXPORT_PRODUCT_VERSION', value = '2026.1.1.204'"
        " WHERE name = 'NSIGHT_SYSTEMS_VERSION'");
    b.process(300, "train.py");
    auto rows = one_step_rows();
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) (*it)(b);
    b.close();
  }
  const fs::path out2024 = dir / "2024.msdb", out2026 = dir / "2026.msdb";
  import_traces({dir / "nsys2024.sqlite"}, out2024);
  import_traces({dir / "nsys2026.sqlite"}, out2026);
  const std::string profile2024 = whole_profile(out2024);
  EXPECT_EQ(whole_profile(out2026), profile2024);
  // Nesting was rebuilt from out-of-order rows: layer0 inside forward inside the step.
  EXPECT_THAT(profile2024, ::testing::HasSubstr("ProfilerStep#7,0,NULL,1000;forward,1,ProfilerStep#7,2000;"
                                                "layer0,2,forward,3000"));
  EXPECT_THAT(collective_rows(out2026), ::testing::HasSubstr("allreduce,1048576,nvtx,3,41500,61500,RING,LL"));
  for (const fs::path& out : {out2024, out2026}) {
    EXPECT_EQ(
        query(out, "SELECT COUNT(*) FROM diagnostics WHERE message LIKE '%schema%not one meshscope knows%'"),
        "0");
  }
}

TEST(NsysLayouts, DeviceWideSynchronisationsAreDeviceEventsNotAStream) {
  const fs::path dir = tmp_dir("device_sync");
  {
    ExportBuilder b(dir / "sync.sqlite", "3.24.14");
    b.process(300, "train.py");
    for (const auto& row : one_step_rows()) row(b);
    b.close();
  }
  const fs::path out = dir / "sync.msdb";
  import_traces({dir / "sync.sqlite"}, out);
  // Was: a stream 4294967295 ("GPU0 stream 4294967295") holding the context and event synchronisations.
  EXPECT_EQ(query(out, "SELECT COUNT(*) FROM activities WHERE stream = 4294967295"), "0");
  EXPECT_EQ(
      query(out,
            "SELECT s.value, a.stream FROM activities a JOIN strings s ON s.id = a.name WHERE a.kind = 4"
            " ORDER BY a.start_ns"),
      "Stream Sync,7;Context Sync,-1;Event Sync,-1");
  EXPECT_EQ(query(out, "SELECT stream, name FROM streams ORDER BY stream"),
            "-1,device-wide syncs;7,stream 7;13,stream 13");
  const Profile profile = Profile::load(out);
  const auto& streams = profile.ranks().at(0).streams;
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_EQ(streams[0].stream, -1);
  EXPECT_EQ(streams[0].count, 2u);
}

}  // namespace
}  // namespace meshscope
