// The collectors' own cost per event, measured without a GPU: the real code paths of
// the CUPTI injection library and the NCCL profiler plugin, driven as CUDA and NCCL drive them.
//
//   BM_CollectorApiCallback   per API callback CUPTI delivers to the injection library, on the launching
//                             thread. CUPTI calls it only for the four functions it subscribes to (device
//                             reset, profiler stop twice, context destruction); every other API call is
//                             recorded by CUPTI's activity API without entering meshscope's code. Driven
//                             through the CUPTI test double (build/fake_cupti/libcupti.so.N: the bench runs
//                             itself again with it first in LD_LIBRARY_PATH); BM_CuptiDoubleEventBaseline is
//                             the double's own cost for an event nobody subscribed to, to subtract.
//   BM_CollectorActivityRecord per activity record taken from a CUPTI buffer into profile rows, on the
//                             collector's thread (cupti::Translator into a ProfileWriter whose background
//                             thread writes SQLite); /kernel, /memcpy, /runtime record kinds.
//   BM_CollectorDriverCall    per driver API call taken through CUPTI's callbacks (DRIVER_API=2), on the
//                             launching thread: /0 a launch (recorded), /1 a quiet function (not: the
//                             double's own cost, to subtract).
//   BM_NcclPluginEvent        per NCCL profiler call (startEvent, recordEventState, stopEvent) of the
//   plugin's v5
//                             ABI, one collective as NCCL 2.28 profiles it: a group API event, the
//                             collective, two kernel channels with their stop states.
// Wall time (UseRealTime): what the calling thread waits, including, for activity records, waiting for the
// writer's bounded queue when SQLite falls behind. items_per_second is the number to read: 1e9 /
// items_per_second ns per item. docs/PERFORMANCE.md
// ("Collectors: cost per event") records the results and the command.
#include <benchmark/benchmark.h>
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "collectors/cupti/translate.hpp"
#include "collectors/nccl/nccl_profiler_abi.h"
#include "profiler/profile_writer.hpp"

namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::path(MESHSCOPE_TEST_TMP) / ("bench-collectors-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// ---- CUPTI: the launching thread ----

using ApiEventFn = void (*)(int domain, std::uint32_t cbid, int site, const char* function);

// The injection library loaded as the driver loads it (CUDA_INJECTION64_PATH, InitializeInjection), and the
// double's entry point that plays an API event.
ApiEventFn injected() {
  static ApiEventFn event = []() -> ApiEventFn {
    ::setenv("MESHSCOPE_OUTPUT_DIR", scratch("cupti").c_str(), 1);
    ::setenv("MESHSCOPE_RANK", "0", 1);
    // Driver calls by callback (BM_CollectorDriverCall), drained every millisecond.
    ::setenv("MESHSCOPE_CUPTI_DRIVER_API", "2", 1);
    ::setenv("MESHSCOPE_FLUSH_MS", "1", 1);
    void* lib = dlopen(MESHSCOPE_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
    if (!init) return nullptr;
    init();
    ::unsetenv("MESHSCOPE_FLUSH_MS");
    void* cupti = dlopen(MESHSCOPE_FAKE_CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
    return cupti ? reinterpret_cast<ApiEventFn>(dlsym(cupti, "meshscope_fake_cupti_api_event")) : nullptr;
  }();
  return event;
}

void BM_CollectorApiCallback(benchmark::State& state) {
  const ApiEventFn event = injected();
  if (!event) {
    state.SkipWithError("the injection library did not load the CUPTI test double");
    return;
  }
  // A subscribed function at the site where nothing is flushed: the path every call of it takes.
  for (auto _ : state)
    event(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, CUPTI_API_EXIT,
          "cudaDeviceReset");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CollectorApiCallback)->UseRealTime();

void BM_CuptiDoubleEventBaseline(benchmark::State& state) {
  const ApiEventFn event = injected();
  if (!event) {
    state.SkipWithError("the injection library did not load the CUPTI test double");
    return;
  }
  for (auto _ : state)
    event(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER,
          "cudaLaunchKernel");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CuptiDoubleEventBaseline)->UseRealTime();

using ApiCallFn = void (*)(int domain, std::uint32_t cbid, std::uint32_t correlation, const char* function);

ApiCallFn api_call() {
  if (!injected()) return nullptr;
  void* cupti = dlopen(MESHSCOPE_FAKE_CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
  return cupti ? reinterpret_cast<ApiCallFn>(dlsym(cupti, "meshscope_fake_cupti_api_call")) : nullptr;
}

// A driver call taken by callback (MESHSCOPE_CUPTI_DRIVER_API=2): its entry and exit callbacks on the
// launching thread, the call written into the thread's ring. Batches of 4,096 calls, then a pause (not timed)
// in which the Session thread, flushing every millisecond, empties the ring: the path of a call that is kept,
// not of one dropped at a full ring. ARG 1 plays a quiet function (its callbacks turned off): the double's
// own cost per call, to subtract.
void BM_CollectorDriverCall(benchmark::State& state) {
  const ApiCallFn call = api_call();
  if (!call) {
    state.SkipWithError("the injection library did not load the CUPTI test double");
    return;
  }
  const bool quiet = state.range(0) == 1;
  const std::uint32_t cbid =
      quiet ? CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState : CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
  constexpr int kBatch = 4096;
  // Long enough for the Session thread to translate a batch (about 1 µs a call): 20 ms gave the same time
  // (88.7 against 88.0 ns a call), so no timed call was dropped at a full ring.
  constexpr useconds_t kDrainPauseUs = 8'000;
  std::uint32_t correlation = 1;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i)
      call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, correlation++, "cuLaunchKernelEx");
    state.PauseTiming();
    ::usleep(kDrainPauseUs);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_CollectorDriverCall)->Arg(0)->Arg(1)->Iterations(150)->UseRealTime();

// ---- CUPTI: the collector's thread ----

void BM_CollectorActivityRecord(benchmark::State& state) {
  const fs::path dir = scratch("translate");
  meshscope::ProfileWriter writer(dir / "rank0.msdb");
  writer.set_rank({});
  meshscope::cupti::Translator translator(writer, {}, [](bool driver, std::uint32_t cbid) {
    return std::string(driver ? "cuLaunchKernel_" : "cudaLaunchKernel_") + std::to_string(cbid);
  });
  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.deviceId = 0;
  kernel.streamId = 7;
  kernel.name = "_Z10gemm_kernelPfS_S_i";
  kernel.gridX = 128;
  kernel.gridY = kernel.gridZ = 1;
  kernel.blockX = 256;
  kernel.blockY = kernel.blockZ = 1;
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.bytes = 4 << 20;
  copy.streamId = 7;
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  api.processId = static_cast<std::uint32_t>(::getpid());
  api.threadId = 1;
  const int kind = static_cast<int>(state.range(0));
  std::uint64_t t = 1'000'000'000;
  std::uint32_t correlation = 1;
  for (auto _ : state) {
    t += 2'000;
    switch (kind) {
      case 0:
        kernel.start = t;
        kernel.end = t + 1'500;
        kernel.correlationId = correlation++;
        translator.add(reinterpret_cast<const CUpti_Activity*>(&kernel));
        break;
      case 1:
        copy.start = t;
        copy.end = t + 1'500;
        copy.correlationId = correlation++;
        translator.add(reinterpret_cast<const CUpti_Activity*>(&copy));
        break;
      default:
        api.start = t;
        api.end = t + 1'500;
        api.correlationId = correlation++;
        translator.add(reinterpret_cast<const CUpti_Activity*>(&api));
        break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  translator.finish();
  writer.commit();
  state.counters["written"] = static_cast<double>(translator.counts().kernels + translator.counts().memcpys +
                                                  translator.counts().runtime_calls);
  fs::remove_all(dir);
}
BENCHMARK(BM_CollectorActivityRecord)->ArgName("kind")->Arg(0)->Arg(1)->Arg(2)->UseRealTime();

// ---- NCCL ----

void BM_NcclPluginEvent(benchmark::State& state) {
  const fs::path dir = scratch("nccl");
  ::setenv("MESHSCOPE_OUTPUT_DIR", dir.c_str(), 1);
  ::setenv("RANK", "0", 1);
  void* lib = dlopen(MESHSCOPE_NCCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  auto* p = lib ? static_cast<msncclProfiler_v5*>(dlsym(lib, "ncclProfiler_v5")) : nullptr;
  if (!p) {
    state.SkipWithError("cannot load the NCCL plugin");
    return;
  }
  void* ctx = nullptr;
  int mask = 0;
  if (p->init(&ctx, 0x5eed0001ull, &mask, "world", 1, 8, 0, nullptr) != 0) {
    state.SkipWithError("the plugin's init failed");
    return;
  }
  std::uint64_t timer = 1'000'000'000;
  std::int64_t calls = 0;
  for (auto _ : state) {
    msncclEventDescr_v5 g{};
    g.type = MSNCCL_PROFILE_GROUP_API;
    g.groupApi.groupDepth = 1;
    void* group = nullptr;
    p->startEvent(ctx, &group, &g);
    msncclEventDescr_v5 d{};
    d.type = MSNCCL_PROFILE_COLL;
    d.coll.func = "AllReduce";
    d.coll.count = 1 << 20;
    d.coll.datatype = "ncclBfloat16";
    d.coll.nChannels = 2;
    d.coll.nWarps = 16;
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    void* handle = nullptr;
    p->startEvent(ctx, &handle, &d);
    p->stopEvent(handle);
    p->stopEvent(group);
    void* channel[2] = {nullptr, nullptr};
    for (int c = 0; c < 2; ++c) {
      msncclEventDescr_v5 k{};
      k.type = MSNCCL_PROFILE_KERNEL_CH;
      k.parentObj = handle;
      k.kernelCh.channelId = static_cast<std::uint8_t>(c);
      k.kernelCh.pTimer = timer;
      p->startEvent(ctx, &channel[c], &k);
    }
    for (int c = 0; c < 2; ++c) {
      msncclStateArgs_v5 a{};
      a.kernelCh.pTimer = timer + 400'000;
      p->recordEventState(channel[c], MSNCCL_STATE_KERNEL_CH_STOP, &a);
      p->stopEvent(channel[c]);
    }
    timer += 1'000'000;
    calls += 10;
  }
  state.SetItemsProcessed(calls);
  state.counters["ns_per_collective"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  p->finalize(ctx);  // the plugin writes its profile on its own thread: the folder is left to the tmp root
}
BENCHMARK(BM_NcclPluginEvent)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  // The injection library links libcupti by its soname: the double must come first in LD_LIBRARY_PATH, which
  // the dynamic loader reads at start. Run again with it.
  if (!std::getenv("MESHSCOPE_BENCH_WITH_DOUBLE")) {
    const char* previous = std::getenv("LD_LIBRARY_PATH");
    const std::string path =
        std::string(MESHSCOPE_FAKE_CUPTI_DIR) + (previous && *previous ? ":" + std::string(previous) : "");
    ::setenv("LD_LIBRARY_PATH", path.c_str(), 1);
    ::setenv("MESHSCOPE_BENCH_WITH_DOUBLE", "1", 1);
    ::execv("/proc/self/exe", argv);
    std::perror("bench_collectors: cannot run itself again");
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
