// The CUPTI record translation, fed with CUpti_Activity* structs built by hand (no GPU, no driver), and the
// injection library loaded where no GPU exists. Built only where the CUDA toolkit's CUPTI headers are.
#if __has_include(<cupti_activity.h>) && defined(MESHSCOPE_CUPTI_LIBRARY)

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "collectors/cupti/translate.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "tests/collectors/collectors_test_util.hpp"
#include "tests/import/test_support.hpp"

namespace meshscope::test {
namespace {

constexpr std::int64_t kOffset = 1000;

class CuptiTranslate : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("cupti-translate");
    path_ = dir_ / "rank5.cupti.msdb";
    WriterOptions options;
    options.background = false;
    writer_ = std::make_unique<ProfileWriter>(path_, options);
    cupti::TranslatorOptions t;
    t.rank = 5;
    t.pid = 4242;
    t.clock_offset_ns = kOffset;
    translator_ = std::make_unique<cupti::Translator>(*writer_, t, [](bool driver, std::uint32_t cbid) {
      if (!driver && cbid == 211) return std::string("cudaLaunchKernel_v7000");
      if (driver && cbid == 307) return std::string("cuLaunchKernel");
      return std::string();
    });
  }

  void commit() {
    translator_->finish();
    writer_->commit();
    translator_.reset();
    writer_.reset();  // its connection (an exclusive lock) lives as long as the writer
  }

  template <typename T>
  void add(const T& record) {
    translator_->add(reinterpret_cast<const CUpti_Activity*>(&record));
  }

  fs::path dir_, path_;
  std::unique_ptr<ProfileWriter> writer_;
  std::unique_ptr<cupti::Translator> translator_;
};

TEST_F(CuptiTranslate, KernelsCopiesSetsAndGraphs) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 10'000;
  k.end = 15'000;
  k.deviceId = 1;
  k.streamId = 7;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.correlationId = 11;
  k.name = "_Z6vecAddPfS_i";
  add(k);
  CUpti_ActivityKernel10 g = k;  // launched by a CUDA graph
  g.start = 20'000;
  g.end = 21'000;
  g.graphId = 3;
  g.graphNodeId = 9;
  g.correlationId = 12;
  g.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  add(g);

  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 1'000;
  m.end = 3'000;
  m.deviceId = 1;
  m.streamId = 7;
  m.correlationId = 10;
  add(m);

  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.bytes = 4096;
  p.start = 30'000;
  p.end = 31'000;
  p.deviceId = 1;
  p.streamId = 8;
  p.srcDeviceId = 1;
  p.dstDeviceId = 2;
  p.correlationId = 13;
  add(p);

  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 512;
  s.start = 40'000;
  s.end = 40'500;
  s.deviceId = 1;
  s.streamId = 7;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.correlationId = 14;
  add(s);
  commit();

  EXPECT_EQ(
      query_rows(path_,
                 "SELECT a.rank, a.kind, a.device, a.stream, a.start_ns, a.end_ns, n.value, a.correlation,"
                 " a.grid_x, a.grid_y, a.block_x, a.registers, a.shared_bytes, a.bytes,"
                 " (SELECT value FROM strings WHERE id = a.copy_kind), a.graph_id"
                 " FROM activities a JOIN strings n ON n.id = a.name ORDER BY a.start_ns"),
      "5|2|1|7|2000|4000|Memcpy HtoD (Pageable -> Device)|10|NULL|NULL|NULL|NULL|NULL|1048576|HtoD|NULL\n"
      "5|1|1|7|11000|16000|vecAdd(float*, float*, int)|11|128|2|256|32|3072|NULL|NULL|NULL\n"
      "5|1|1|7|21000|22000|ncclDevKernel_AllReduce_Sum_bf16_RING_LL|12|128|2|256|32|3072|NULL|NULL|3\n"
      "5|2|1|8|31000|32000|Memcpy PtoP (device 1 -> device 2)|13|NULL|NULL|NULL|NULL|NULL|4096|PtoP|NULL\n"
      "5|3|1|7|41000|41500|Memset (Device)|14|NULL|NULL|NULL|NULL|NULL|512|NULL|NULL\n");
  EXPECT_EQ(query_rows(path_, "SELECT rank, device, stream, name FROM streams ORDER BY stream"),
            "5|1|7|stream 7\n5|1|8|stream 8\n");
  EXPECT_EQ(query_int(path_,
                      "SELECT count(*) FROM diagnostics WHERE message LIKE 'cupti: 2 kernels (1 from CUDA "
                      "graphs), 2 memcpy, 1 memset%'"),
            1);
}

TEST_F(CuptiTranslate, ApiCallsSyncsNvtxDevicesOverheads) {
  CUpti_ActivityAPI r{};
  r.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  r.cbid = 211;
  r.start = 100;
  r.end = 400;
  r.processId = 4242;
  r.threadId = 77;
  r.correlationId = 11;
  add(r);
  CUpti_ActivityAPI d = r;
  d.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  d.cbid = 307;
  d.start = 150;
  d.end = 350;
  add(d);
  CUpti_ActivityAPI unknown = r;
  unknown.cbid = 9999;
  unknown.start = 500;
  unknown.end = 600;
  add(unknown);

  CUpti_ActivityContext3 c{};
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = 1;
  c.deviceId = 2;
  c.nullStreamId = 13;
  add(c);
  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sync.start = 1'000;
  sync.end = 9'000;
  sync.contextId = 1;
  sync.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  sync.correlationId = 20;
  add(sync);
  CUpti_ActivitySynchronization2 stream_sync = sync;
  stream_sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  stream_sync.streamId = 21;
  stream_sync.start = 10'000;
  stream_sync.end = 11'000;
  add(stream_sync);

  CUpti_ActivityMarker2 start{};
  start.kind = CUPTI_ACTIVITY_KIND_MARKER;
  start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  start.timestamp = 50;
  start.id = 5;
  start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  start.objectId.pt.processId = 4242;
  start.objectId.pt.threadId = 77;
  start.name = "train_step";
  add(start);
  CUpti_ActivityMarker2 inner = start;
  inner.id = 6;
  inner.timestamp = 60;
  inner.name = "forward";
  inner.domain = "myapp";
  add(inner);
  CUpti_ActivityMarker2 inner_end{};
  inner_end.kind = CUPTI_ACTIVITY_KIND_MARKER;
  inner_end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  inner_end.id = 6;
  inner_end.timestamp = 70;
  inner_end.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  add(inner_end);
  CUpti_ActivityMarker2 end = inner_end;
  end.id = 5;
  end.timestamp = 90;
  add(end);
  CUpti_ActivityMarker2 stray = inner_end;
  stray.id = 99;
  add(stray);
  CUpti_ActivityMarker2 mark = start;
  mark.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
  mark.id = 7;
  mark.timestamp = 80;
  mark.name = "checkpoint";
  add(mark);
  CUpti_ActivityMarker2 never_ends = start;
  never_ends.id = 8;
  add(never_ends);

  CUpti_ActivityDevice5 dev{};
  dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  dev.id = 2;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.globalMemorySize = 85'000'000'000ull;
  dev.computeCapabilityMajor = 9;
  dev.computeCapabilityMinor = 0;
  dev.numMultiprocessors = 132;
  add(dev);

  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 4242;
  o.objectId.pt.threadId = 78;
  o.start = 2'000;
  o.end = 2'500;
  add(o);

  CUpti_ActivityName n{};
  n.kind = CUPTI_ACTIVITY_KIND_NAME;
  n.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  n.objectId.pt.processId = 4242;
  n.objectId.pt.threadId = 77;
  n.name = "MainThread";
  add(n);

  CUpti_Activity other{};
  other.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  translator_->add(&other);
  EXPECT_EQ(translator_->counts().ignored, 1u);
  commit();

  EXPECT_EQ(
      query_rows(path_,
                 "SELECT a.rank, a.kind, a.pid, a.tid, a.start_ns, a.end_ns, n.value, a.correlation, a.cbid"
                 " FROM api_calls a JOIN strings n ON n.id = a.name ORDER BY a.start_ns"),
      "5|1|4242|77|1100|1400|cudaLaunchKernel|11|211\n"
      "5|2|4242|77|1150|1350|cuLaunchKernel|11|307\n"
      "5|1|4242|77|1500|1600|runtime API 9999|11|9999\n");
  // A context-wide sync sits on the context's default stream, on the context's device.
  EXPECT_EQ(query_rows(path_,
                       "SELECT a.kind, a.device, a.stream, a.start_ns, n.value FROM activities a"
                       " JOIN strings n ON n.id = a.name ORDER BY a.start_ns"),
            "4|2|13|2000|Context Sync\n4|2|21|11000|Stream Sync\n");
  EXPECT_EQ(
      query_rows(path_,
                 "SELECT r.kind, r.pid, r.tid, r.start_ns, r.end_ns, n.value, c.value, r.depth FROM ranges r"
                 " JOIN strings n ON n.id = r.name LEFT JOIN strings c ON c.id = r.category"
                 " ORDER BY r.start_ns, r.end_ns DESC"),
      "6|4242|77|1050|1090|train_step|NVTX|0\n"
      "6|4242|77|1060|1070|forward|myapp|1\n"
      "6|4242|77|1080|1080|checkpoint|NVTX|1\n"
      "7|4242|78|3000|3500|CUPTI overhead: buffer flush|cupti_overhead|0\n");
  EXPECT_EQ(query_rows(path_,
                       "SELECT rank, device, name, total_memory_bytes, compute_major, compute_minor, sm_count"
                       " FROM devices"),
            "5|2|NVIDIA H100 80GB HBM3|85000000000|9|0|132\n");
  EXPECT_EQ(query_rows(path_, "SELECT rank, pid, tid, name FROM threads"), "5|4242|77|MainThread\n");
  EXPECT_EQ(
      query_int(path_, "SELECT count(*) FROM diagnostics WHERE message LIKE '%1 NVTX ranges never ended%'"),
      1);
  EXPECT_EQ(
      query_int(path_, "SELECT count(*) FROM diagnostics WHERE message LIKE '%1 NVTX range ends without%'"),
      1);
}

// CUPTI writes 0 for times it could not collect (cuptiActivityGetNextRecord's documentation): such records
// are counted and left out rather than placed in 1970. Queries that found work unfinished waited for nothing.
TEST_F(CuptiTranslate, UntimedRecordsAndUnfinishedQueriesAreCountedNotWritten) {
  CUpti_ActivityKernel10 timed{};
  timed.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  timed.start = 10'000;
  timed.end = 12'000;
  timed.name = "k";
  add(timed);
  CUpti_ActivityKernel10 no_end = timed;
  no_end.end = 0;
  add(no_end);
  CUpti_ActivityAPI no_start{};
  no_start.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  no_start.cbid = 211;
  no_start.end = 5'000;
  add(no_start);
  CUpti_ActivitySynchronization2 query{};
  query.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  query.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  query.start = 20'000;
  query.end = 20'100;
  query.streamId = 7;
  query.returnValue = 600;  // CUDA_ERROR_NOT_READY
  add(query);
  commit();
  EXPECT_EQ(query_int(path_, "SELECT count(*) FROM activities"), 1);
  EXPECT_EQ(query_int(path_, "SELECT min(start_ns) FROM activities"), 10'000 + kOffset);
  EXPECT_EQ(query_int(path_, "SELECT count(*) FROM api_calls"), 0);
  EXPECT_EQ(query_text(path_, "SELECT message FROM diagnostics WHERE severity = 'warning'"),
            "cupti: 2 records without timestamps (CUPTI could not time them) left out");
  EXPECT_EQ(query_int(path_,
                      "SELECT count(*) FROM diagnostics WHERE message = "
                      "'cupti: 1 event/stream queries that found work unfinished left out'"),
            1);
}

// The injection library loads on a machine without a GPU and stays out of the way: InitializeInjection
// returns 1 and the process goes on (CUPTI cannot start without a driver, which is one log line). This is the
// one test that runs the real libcupti; whatever the outcome, the child's exit status and its own words are
// in the failure message.
TEST(CuptiInjection, LoadsAndStaysHarmlessWithoutAGpu) {
#if defined(__SANITIZE_ADDRESS__)
  // The real libcupti is closed source and not instrumented; under the sanitizers the library is exercised
  // end to end with the CUPTI double instead (cupti_injection_test.cpp).
  GTEST_SKIP() << "the real libcupti is not run under the sanitizers";
#endif
  const fs::path dir = fresh_dir("cupti-nogpu");
  const fs::path log = dir.parent_path() / (dir.filename().string() + ".stderr");
  std::fflush(nullptr);  // the child must not write the parent's buffered output a second time
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen(log.c_str(), "w", stderr)) ::_exit(9);
    ::setenv("MESHSCOPE_OUTPUT_DIR", dir.c_str(), 1);
    void* lib = dlopen(MESHSCOPE_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "dlopen: %s\n", dlerror());
      ::_exit(10);
    }
    auto* init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
    if (!init) ::_exit(11);
    if (init() != 1) ::_exit(12);
    if (init() != 1) ::_exit(13);  // the driver calls it once; a second call is harmless too
    std::exit(0);
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const std::string words = testing::read_text(log);
  const std::string outcome = WIFEXITED(status)     ? "exit status " + std::to_string(WEXITSTATUS(status))
                              : WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                    : "status " + std::to_string(status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << outcome << "; the child said:\n" << words;
  // Without a driver CUPTI refuses the subscription: one line, and nothing written.
  if (words.find("cannot subscribe to CUPTI") != std::string::npos) {
    EXPECT_EQ(std::count(words.begin(), words.end(), '\n'), 1) << words;
    EXPECT_TRUE(fs::is_empty(dir)) << words;
  }
}

}  // namespace
}  // namespace meshscope::test

#endif
