// Nsight Systems import speed per event, next to the Kineto importer on the same events.
//
// Both inputs are generated once into MESHSCOPE_TEST_TMP: an Nsight Systems 3.x export (SQLite) and a Kineto
// JSON trace holding the same events (kernels with their launch API calls, memcpys, NVTX / user-annotation
// ranges). Each benchmark imports its file into a fresh profile through import_traces (the `meshscope import`
// path, writer commit included) and reports ns per event. Run:
//   build-nsys/tests/bench/meshscope_bench_nsys_import --benchmark_counters_tabular=true
// Set MESHSCOPE_BENCH_EVENTS to change the size (default 400000 events per file).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "collectors/import/import.hpp"
#include "profiler/error.hpp"
#include "profiler/sqlite_util.hpp"
#include "tests/import/nsys_cpu_tables.hpp"

namespace {

namespace fs = std::filesystem;
using meshscope::sql::Database;

std::int64_t event_count() {
  const char* value = std::getenv("MESHSCOPE_BENCH_EVENTS");
  return value ? std::max<std::int64_t>(std::atoll(value), 1000) : 400000;
}

// Event mix per "launch": one runtime call + one kernel; every 4th launch a memcpy with its call; every 2nd
// an NVTX range around it. 2 + 0.5 + 0.5 = 3 events per launch.
std::int64_t launches() {
  return event_count() / 3;
}

constexpr std::int64_t kPid = 4242;

fs::path nsys_input() {
  static const fs::path path = [] {
    const fs::path p = fs::path(MESHSCOPE_TEST_TMP) / "bench_nsys.sqlite";
    fs::remove(p);
    Database db(p, false);
    db.exec(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
        "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
        "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.15.1');"
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cudaMemcpyAsync_v3020'),"
        " (3, 'void gemm_kernel<float, 128>(float const*, float*, int)'), (4, 'gemm_kernel'),"
        " (5, 'void elementwise_kernel<256>(int, float*)'), (6, 'elementwise_kernel'), (7, 'forward');"
        "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);"
        "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,"
        " returnValue INTEGER NOT NULL, callchainId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER "
        "NOT NULL,"
        " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT "
        "NULL,"
        " mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,"
        " gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,"
        " blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,"
        " dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,"
        " localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,"
        " graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER, graphId INTEGER);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId "
        "INTEGER,"
        " globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind "
        "INTEGER);"
        "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, text "
        "TEXT,"
        " globalTid INTEGER, textId INTEGER, domainId INTEGER, jsonText TEXT, uint64Value INTEGER,"
        " int64Value INTEGER, uint32Value INTEGER, int32Value INTEGER);");
    const std::int64_t tid = (std::int64_t{1} << 48) | (kPid << 24) | kPid;
    const std::int64_t pid = (std::int64_t{1} << 48) | (kPid << 24);
    auto api = db.prepare("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, ?, 0, NULL)");
    auto kernel = db.prepare(
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 1, NULL, 7, ?, ?, ?, ?, NULL, 1, 0, 32, "
        "108, 1, 1,"
        " 256, 1, 1, 0, 4096, 0, 0, ?, NULL, NULL, NULL, NULL)");
    auto memcpy =
        db.prepare("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 1, 8, ?, ?, 1048576, 1, 0, 2)");
    auto nvtx =
        db.prepare("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, NULL, ?, 7, 0, NULL, NULL, NULL, NULL, NULL)");
    std::int64_t correlation = 0;
    for (std::int64_t i = 0; i < launches(); ++i) {
      const std::int64_t t = i * 10000;
      if (i % 2 == 0) {
        nvtx.bind(1, t);
        nvtx.bind(2, t + 9000);
        nvtx.bind(3, tid);
        nvtx.run();
      }
      api.bind(1, t + 100);
      api.bind(2, t + 600);
      api.bind(3, tid);
      api.bind(4, ++correlation);
      api.bind(5, 1);
      api.run();
      const bool gemm = i % 3 == 0;
      kernel.bind(1, t + 1000);
      kernel.bind(2, t + 4000);
      kernel.bind(3, correlation);
      kernel.bind(4, pid);
      kernel.bind(5, gemm ? 3 : 5);
      kernel.bind(6, gemm ? 4 : 6);
      kernel.bind(7, i);
      kernel.run();
      if (i % 4 == 0) {
        api.bind(1, t + 700);
        api.bind(2, t + 800);
        api.bind(3, tid);
        api.bind(4, ++correlation);
        api.bind(5, 2);
        api.run();
        memcpy.bind(1, t + 5000);
        memcpy.bind(2, t + 8000);
        memcpy.bind(3, correlation);
        memcpy.bind(4, pid);
        memcpy.run();
      }
    }
    db.exec("COMMIT");
    return p;
  }();
  return path;
}

fs::path kineto_input() {
  static const fs::path path = [] {
    const fs::path p = fs::path(MESHSCOPE_TEST_TMP) / "bench_nsys_kineto.json";
    std::FILE* f = std::fopen(p.c_str(), "wb");
    if (!f) meshscope::fail("{}: cannot write", p.string());
    std::string out = R"({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [)";
    bool first = true;
    auto event = [&](std::string_view text) {
      if (!first) out += ',';
      first = false;
      out += '\n';
      out += text;
      if (out.size() > (1u << 20)) {
        std::fwrite(out.data(), 1, out.size(), f);
        out.clear();
      }
    };
    auto us = [](std::int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); };
    std::int64_t correlation = 0;
    for (std::int64_t i = 0; i < launches(); ++i) {
      const std::int64_t t = i * 10000;
      if (i % 2 == 0) {
        event(fmt::format(
            R"({{"ph":"X","cat":"user_annotation","name":"forward","pid":{0},"tid":{0},"ts":{1},"dur":{2}}})",
            kPid, us(t), us(9000)));
      }
      ++correlation;
      event(fmt::format(
          R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":{0},"tid":{0},"ts":{1},"dur":{2},)"
          R"("args":{{"correlation":{3},"cbid":211}}}})",
          kPid, us(t + 100), us(500), correlation));
      const bool gemm = i % 3 == 0;
      event(fmt::format(
          R"({{"ph":"X","cat":"kernel","name":"{0}","pid":0,"tid":7,"ts":{1},"dur":{2},"args":{{"device":0,)"
          R"("stream":7,"correlation":{3},"registers per thread":32,"shared memory":4096,"grid":[108,1,1],)"
          R"("block":[256,1,1]}}}})",
          gemm ? "void gemm_kernel<float, 128>(float const*, float*, int)"
               : "void elementwise_kernel<256>(int, float*)",
          us(t + 1000), us(3000), correlation));
      if (i % 4 == 0) {
        ++correlation;
        event(fmt::format(
            R"({{"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":{0},"tid":{0},"ts":{1},"dur":{2},)"
            R"("args":{{"correlation":{3},"cbid":41}}}})",
            kPid, us(t + 700), us(100), correlation));
        event(fmt::format(
            R"json({{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":8,"ts":{0},)json"
            R"("dur":{1},"args":{{"device":0,"stream":8,"correlation":{2},"bytes":1048576}}}})",
            us(t + 5000), us(3000), correlation));
      }
    }
    out += "\n]}\n";
    std::fwrite(out.data(), 1, out.size(), f);
    std::fclose(f);
    return p;
  }();
  return path;
}

// The same export with the CPU side Nsight Systems records with --cpuctxsw and --sample: per launch, its
// thread switched off and back onto a core (two SCHED_EVENTS rows, one run), and one CPU sample with a
// three-frame call stack.
fs::path nsys_input_with_cpu_side() {
  static const fs::path path = [] {
    const fs::path p = fs::path(MESHSCOPE_TEST_TMP) / "bench_nsys_cpu.sqlite";
    fs::remove(p);
    fs::copy_file(nsys_input(), p);
    Database db(p, false);
    db.exec(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
        "INSERT INTO StringIds VALUES (8, 'poll'), (9, 'train_step'), (10, 'main'), (11, "
        "'/usr/lib/libc.so.6'),"
        " (12, '/opt/app/bin/python');");
    db.exec(meshscope::test::kNsysSchedulingAndSampleTables);
    const std::int64_t tid = (std::int64_t{1} << 48) | (kPid << 24) | kPid;
    auto sched = db.prepare("INSERT INTO SCHED_EVENTS VALUES (?, ?, ?, ?)");
    auto sample = db.prepare("INSERT INTO COMPOSITE_EVENTS VALUES (?, ?, 3, 1, ?, 1)");
    auto frame =
        db.prepare("INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, stackDepth) VALUES (?, ?, ?, ?)");
    for (std::int64_t i = 0; i < launches(); ++i) {
      const std::int64_t t = i * 10000;
      for (const auto& [at, in] : {std::pair{t + 8500, 0}, std::pair{t + 9500, 1}}) {
        sched.bind(1, at);
        sched.bind(2, i % 8);
        sched.bind(3, in);
        sched.bind(4, tid);
        sched.run();
      }
      sample.bind(1, i + 1);
      sample.bind(2, t + 300);
      sample.bind(3, tid);
      sample.run();
      for (int depth = 0; depth < 3; ++depth) {
        frame.bind(1, i + 1);
        frame.bind(2, 8 + depth + (depth == 0 ? static_cast<int>(i % 2) : 0));
        frame.bind(3, depth == 0 ? 11 : 12);
        frame.bind(4, depth);
        frame.run();
      }
    }
    db.exec("COMMIT");
    return p;
  }();
  return path;
}

void run_import(benchmark::State& state, const fs::path& input, const char* name) {
  const fs::path out = fs::path(MESHSCOPE_TEST_TMP) / fmt::format("bench_{}.msdb", name);
  std::uint64_t events = 0;
  for (auto _ : state) {
    const auto summary = meshscope::import_traces({input}, out);
    events = 0;
    for (const auto& r : summary.ranks) events += r.gpu_events + r.cpu_events;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["ns_per_event"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()) * 1e-9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  fs::remove(out);
}

void BM_NsysImport(benchmark::State& state) {
  run_import(state, nsys_input(), "nsys");
}
// Counted events are the traced ones (as above); the CPU side adds 2 rows per launch (a run and a sample).
void BM_NsysImportWithCpuSide(benchmark::State& state) {
  run_import(state, nsys_input_with_cpu_side(), "nsys_cpu");
  state.counters["os_rows"] = static_cast<double>(2 * launches());
}
void BM_KinetoImportSameEvents(benchmark::State& state) {
  run_import(state, kineto_input(), "kineto");
}

BENCHMARK(BM_NsysImport)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_NsysImportWithCpuSide)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_KinetoImportSameEvents)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
