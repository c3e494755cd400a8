// libFuzzer harness: the Nsight Systems importer, then Profile::load on what it wrote. The first input byte
// picks the mode:
//   even: the rest of the input is the export file itself (SQLite pages: damaged headers, b-trees, records);
//   odd:  the rest is SQL run on a copy of a small export built here in the documented 3.x schema, by
//         the file's author (views and triggers allowed): hostile shapes and values in a well-formed file.
// Findings: a crash, a sanitizer report, a timeout, or an accepted export that writes an unloadable profile.
#include <cstdint>
#include <string_view>

#include "collectors/import/import.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace meshscope;

namespace {

// A small export: two processes, kernels, a memcpy, runtime calls, NVTX ranges with an NCCL domain and a
// group, MPI ranks, a GPU and a session start; OS runtime calls, thread scheduling and CPU samples.
const char* const kSeedExport = R"sql(
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.15.1');
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'void gemm()'), (2, 'ncclDevKernel_AllReduce_RING_LL'), (3, 'cudaLaunchKernel_v7000'),
  (4, 'NCCL'), (5, 'MPI Rank 1'), (6, 'ProfilerStep#3');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '', '');
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER, value TEXT);
INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (281474976710656, 'Local', 'Hostname', 619, 'node7');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  totalMemory INTEGER, smCount INTEGER, uuid TEXT, chipName TEXT, computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, 'NVIDIA H100', '0000:18:00.0', 85520809984, 132, 'u', 'GH100', 9, 0);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES (281474993487872, 1, 'a'), (281475010265088, 2, 'b');
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (5, 0, 281475010265089);
CREATE TABLE MPI_RANKS (globalTid INTEGER, rank INTEGER);
INSERT INTO MPI_RANKS VALUES (281474993487873, 0);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId, uint64Value) VALUES
  (0, NULL, 75, 'NCCL', 281474993487873, NULL, 1, NULL),
  (100, 9000, 59, NULL, 281474993487873, 6, 0, NULL),
  (200, 300, 59, 'ncclGroupStart', 281474993487873, NULL, 1, NULL),
  (310, 400, 59, 'ncclAllReduce', 281474993487873, NULL, 1, 4096),
  (410, 600, 59, 'ncclGroupEnd', 281474993487873, NULL, 1, NULL),
  (700, 800, 34, 'mark', 281475010265089, NULL, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (420, 450, 0, 281474993487873, 1, 3, 0, NULL),
  (150, 160, 0, 281475010265089, 2, 3, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, registersPerThread INTEGER, gridX INTEGER,
  gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, staticSharedMemory INTEGER,
  dynamicSharedMemory INTEGER, graphNodeId INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (500, 900, 0, 1, 13, 1, 281474993487872, 2, 2, 32, 4, 1, 1, 256, 1, 1, 0, 0, NULL, NULL),
  (170, 260, 0, 1, 7, 2, 281475010265088, 1, 1, 64, 8, 2, 1, 128, 1, 1, 1024, 0, 5, 9);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER, graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (1000, 1100, 0, 1, 7, 3, 281475010265088, 4096, 1, 0, 2, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER, eventId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (1200, 1300, 0, 1, 7, 4, 281475010265088, 3, 0);
INSERT INTO StringIds VALUES (7, 'poll'), (8, 'main'), (9, '/usr/lib/libc.so.6');
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL);
INSERT INTO OSRT_API VALUES (400, 900, 27, 281474993487873, 7, 0, 0, 0), (50, 60, 27, 281475010265089, 7, 0, 0, 0);
CREATE TABLE SCHED_EVENTS (start INTEGER NOT NULL, cpu INTEGER NOT NULL, isSchedIn INTEGER NOT NULL, globalTid INTEGER);
INSERT INTO SCHED_EVENTS VALUES (10, 3, 0, 281474993487873), (500, 4, 1, 281474993487873), (700, 4, 0, 281474993487873),
  (20, 1, 1, 281475010265089);
CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER, threadState INTEGER,
  globalTid INTEGER, cpuCycles INTEGER NOT NULL);
INSERT INTO COMPOSITE_EVENTS VALUES (1, 600, 4, 1, 281474993487873, 1), (2, 30, 1, 1, 281475010265089, 1);
CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL,
  kernelMode INTEGER, thumbCode INTEGER, unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER,
  unwindMethod INTEGER, stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));
INSERT INTO SAMPLING_CALLCHAINS (id, symbol, module, stackDepth) VALUES (1, 7, 9, 0), (1, 8, 9, 1), (2, 8, 9, 0);
)sql";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::SqliteBlocksReleased sqlite_released;
  if (size == 0) return 0;
  static const fuzz::fs::path seed = [] {
    const fuzz::fs::path path = fuzz::scratch() / "seed.sqlite";
    fuzz::apply_sql(path, kSeedExport);
    return path;
  }();
  const fuzz::fs::path input = fuzz::scratch() / "export.sqlite";
  const fuzz::fs::path output = fuzz::scratch() / "out.msdb";
  if (data[0] % 2 == 0) {
    fuzz::write_file(input, data + 1, size - 1);
  } else {
    fuzz::fs::copy_file(seed, input, fuzz::fs::copy_options::overwrite_existing);
    fuzz::apply_sql(input, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  }
  try {
    import_traces({input}, output);
  } catch (const Error&) {
    return 0;
  }
  fuzz::must_load(output);
  return 0;
}
