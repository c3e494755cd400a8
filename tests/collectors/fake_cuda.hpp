// meshscope_fake_rank --cuda: plays the CUDA driver and the GPU for the CUPTI injection library. It loads the
// library named by CUDA_INJECTION64_PATH and calls InitializeInjection(), as the driver does at cuInit, then
// produces, for each training step, the records a real GPU run produces through CUPTI: device and context
// records, a GEMM kernel (a CUDA-graph replay on every fourth step) launched by cudaLaunchKernel, the NCCL
// kernel of the step's collective launched by cuLaunchKernelEx over exactly the collective's GPU time, an
// NVTX range around the step, host-to-device copies, memsets, peer copies, stream syncs, a mark and a CUPTI
// overhead record. The records go through the CUPTI test double (fake_cupti.cpp), which the injection library
// loads in place of libcupti.
#pragma once

#include <cupti.h>
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fake_cuda {

// What a rank emitted, printed at the end so that tests can compare it with the profile.
struct Counts {
  long kernels = 0, memcpys = 0, memsets = 0, syncs = 0, runtime = 0, driver = 0, ranges = 0, marks = 0;
  long graph_kernels = 0, overheads = 0, offered = 0, stored = 0;
  long driver_launches = 0;  // cuLaunchKernelEx calls made (recorded as activity records or by callback)
};

class Gpu {
 public:
  // Loads the injection library as the driver would. False when CUDA_INJECTION64_PATH is unset or the test
  // double is not what the injection library loaded.
  bool start(int device) {
    device_ = static_cast<std::uint32_t>(device);
    const char* injection = std::getenv("CUDA_INJECTION64_PATH");
    if (!injection || !*injection) return false;
    void* lib = dlopen(injection, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "fake_rank: cannot load %s: %s\n", injection, dlerror());
      return false;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"));
    if (!init) {
      std::fprintf(stderr, "fake_rank: %s has no InitializeInjection\n", injection);
      return false;
    }
    init();
    // The injection library's libcupti (the double) is loaded now; find its test entry points.
    void* cupti = dlopen(MESHSCOPE_FAKE_CUPTI_SONAME, RTLD_NOW | RTLD_NOLOAD);
    emit_ = cupti ? reinterpret_cast<EmitFn>(dlsym(cupti, "meshscope_fake_cupti_emit")) : nullptr;
    stamp_ = cupti ? reinterpret_cast<StampFn>(dlsym(cupti, "meshscope_fake_cupti_timestamp")) : nullptr;
    event_ = cupti ? reinterpret_cast<EventFn>(dlsym(cupti, "meshscope_fake_cupti_api_event")) : nullptr;
    recorded_ =
        cupti ? reinterpret_cast<RecordedFn>(dlsym(cupti, "meshscope_fake_cupti_api_recorded")) : nullptr;
    call_ = cupti ? reinterpret_cast<CallFn>(dlsym(cupti, "meshscope_fake_cupti_api_call")) : nullptr;
    if (!emit_ || !stamp_ || !event_ || !recorded_ || !call_) {
      std::fprintf(stderr, "fake_rank: the injection library did not load the CUPTI test double (%s)\n",
                   MESHSCOPE_FAKE_CUPTI_SONAME);
      return false;
    }
    create_context();
    return true;
  }

  // One training step on the GPU: [gemm][collective kernel = START..END] inside an NVTX range.
  void step(int i, std::int64_t start, std::int64_t end) {
    const std::uint32_t corr = next_correlation_;
    next_correlation_ += 4;  // memcpy, GEMM launch, NCCL launch, stream sync
    range(static_cast<std::uint32_t>(i + 1), start - 450'000, end + 20'000, step_names_[i % 4]);
    if (i % 4 == 0) {
      memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4u << 20, start - 440'000, start - 400'000, corr);
      api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, start - 445'000,
          start - 442'000, corr);
      memset_record(start - 399'000, start - 398'000);
    }
    const bool graph = i % 4 == 2;
    kernel(kGemm, start - 350'000, start - 50'000, kComputeStream, corr + 1, graph ? 7 : 0);
    api(CUPTI_ACTIVITY_KIND_RUNTIME,
        graph ? CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000
              : CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
        start - 360'000, start - 355'000, corr + 1);
    kernel(kNcclKernel, start, end, kNcclStream, corr + 2, 0);
    // The driver's callbacks run at the call (now, on this thread); CUPTI's activity record is written later.
    call_(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, corr + 2, "cuLaunchKernelEx");
    ++counts_.driver_launches;
    api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, start - 40'000, start - 35'000,
        corr + 2);
    if (i % 8 == 5) peer_memcpy(end + 1'000, end + 9'000, 0);
    sync(end + 10'000, end + 15'000, corr + 3);
    api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, end - 5'000,
        end + 16'000, corr + 3);
    if (i == 0) mark(start - 460'000, "first step");
    // What PyTorch asks the runtime and driver many times a step, doing no GPU work: recorded only when the
    // injection library left these functions on.
    for (int k = 0; k < 3; ++k) {
      getter(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
             start - 370'000 + k * 1'000);
    }
    getter(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState, start - 365'000);
  }

  // A call that launches nothing: CUPTI gives it a correlation id of its own.
  void getter(CUpti_ActivityKind kind, std::uint32_t cbid, std::int64_t at) {
    const std::uint32_t corr = next_getter_correlation_++;
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) call_(CUPTI_CB_DOMAIN_DRIVER_API, cbid, corr, "getter");
    if (recorded_(static_cast<int>(kind), cbid)) api(kind, cbid, at, at + 200, corr);
  }

  // N small kernels as fast as the caller can produce them (a burst that outruns the writer).
  void burst(long n, std::int64_t at) {
    for (long k = 0; k < n; ++k) kernel(kSmall, at + k * 1'000, at + k * 1'000 + 500, kComputeStream, 0, 0);
  }

  // CUPTI's own cost, as it reports it.
  void overhead(std::int64_t start, std::int64_t end) {
    CUpti_ActivityOverhead3 o{};
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.processId = static_cast<std::uint32_t>(getpid());
    o.objectId.pt.threadId = tid();
    o.start = stamp_(start);
    o.end = stamp_(end);
    if (put(&o)) ++counts_.overheads;
  }

  // The program calls cudaDeviceReset(): the driver runs the API-enter callbacks first.
  void device_reset() {
    event_(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020, CUPTI_API_ENTER,
           "cudaDeviceReset");
  }

  void print_counts() const {
    const Counts& c = counts_;
    std::printf(
        "fake_cuda: kernels=%ld graph_kernels=%ld memcpys=%ld memsets=%ld syncs=%ld runtime=%ld driver=%ld "
        "driver_launches=%ld "
        "ranges=%ld marks=%ld overheads=%ld offered=%ld stored=%ld\n",
        c.kernels, c.graph_kernels, c.memcpys, c.memsets, c.syncs, c.runtime, c.driver, c.driver_launches,
        c.ranges, c.marks, c.overheads, c.offered, c.stored);
    std::fflush(stdout);
  }

 private:
  using EmitFn = int (*)(const CUpti_Activity*);
  using StampFn = std::uint64_t (*)(std::int64_t);
  using EventFn = void (*)(int, std::uint32_t, int, const char*);
  using RecordedFn = int (*)(int, std::uint32_t);
  using CallFn = void (*)(int, std::uint32_t, std::uint32_t, const char*);

  static constexpr std::uint32_t kContext = 1, kComputeStream = 7, kNcclStream = 13, kDefaultStream = 0;
  // A GEMM as nvcc mangles it, the NCCL 2.2x device kernel of a bf16 ring all-reduce, and a small kernel.
  static constexpr const char* kGemm = "_Z9gemm_tileILi128EEvPKfS1_Pfi";
  static constexpr const char* kNcclKernel =
      "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE";
  static constexpr const char* kSmall = "vectorized_elementwise_kernel";
  static constexpr const char* step_names_[4] = {"step 0 mod 4", "step 1 mod 4", "step 2 mod 4",
                                                 "step 3 mod 4"};

  static std::uint32_t tid() { return static_cast<std::uint32_t>(syscall(SYS_gettid)); }

  bool put(const void* record) {
    ++counts_.offered;
    const bool stored = emit_(static_cast<const CUpti_Activity*>(record)) == 1;
    if (stored) ++counts_.stored;
    return stored;
  }

  void create_context() {
    CUpti_ActivityDevice5 d{};
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = device_;
    d.name = "NVIDIA H100 80GB HBM3 (fake)";
    d.globalMemorySize = 85'031'714'816ull;
    d.globalMemoryBandwidth = 3'352'320'000ull;
    d.coreClockRate = 1'980'000;
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    d.numMultiprocessors = 132;
    d.l2CacheSize = 52'428'800;
    d.numMemcpyEngines = 5;
    put(&d);
    CUpti_ActivityContext3 c{};
    c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    c.contextId = kContext;
    c.deviceId = device_;
    c.nullStreamId = kDefaultStream;
    put(&c);
    CUpti_ActivityName n{};
    n.kind = CUPTI_ACTIVITY_KIND_NAME;
    n.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    n.objectId.pt.processId = static_cast<std::uint32_t>(getpid());
    n.objectId.pt.threadId = tid();
    n.name = "pt_main_thread";
    put(&n);
  }

  template <typename R>
  void on_stream(R& r, std::int64_t start, std::int64_t end, std::uint32_t stream, std::uint32_t corr) {
    r.start = stamp_(start);
    r.end = stamp_(end);
    r.deviceId = device_;
    r.contextId = kContext;
    r.streamId = stream;
    r.correlationId = corr;
  }

  void kernel(const char* name, std::int64_t start, std::int64_t end, std::uint32_t stream,
              std::uint32_t corr, std::uint32_t graph) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    on_stream(k, start, end, stream, corr);
    k.gridX = 132;
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 128;
    k.staticSharedMemory = 16'384;
    k.dynamicSharedMemory = 65'536;
    k.graphId = graph;
    if (put(&k)) {
      ++counts_.kernels;
      if (graph) ++counts_.graph_kernels;
    }
  }

  void memcpy_record(CUpti_ActivityMemcpyKind kind, std::uint64_t bytes, std::int64_t start, std::int64_t end,
                     std::uint32_t corr) {
    CUpti_ActivityMemcpy6 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = static_cast<std::uint8_t>(kind);
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = bytes;
    on_stream(m, start, end, kComputeStream, corr);
    if (put(&m)) ++counts_.memcpys;
  }

  void peer_memcpy(std::int64_t start, std::int64_t end, std::uint32_t corr) {
    CUpti_ActivityMemcpyPtoP4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    m.bytes = 1u << 20;
    m.srcDeviceId = device_;
    m.dstDeviceId = device_ + 1;
    on_stream(m, start, end, kNcclStream, corr);
    if (put(&m)) ++counts_.memcpys;
  }

  void memset_record(std::int64_t start, std::int64_t end) {
    CUpti_ActivityMemset4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = 1u << 16;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    on_stream(m, start, end, kComputeStream, 0);
    if (put(&m)) ++counts_.memsets;
  }

  void sync(std::int64_t start, std::int64_t end, std::uint32_t corr) {
    CUpti_ActivitySynchronization2 s{};
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s.start = stamp_(start);
    s.end = stamp_(end);
    s.correlationId = corr;
    s.contextId = kContext;
    s.streamId = kNcclStream;
    if (put(&s)) ++counts_.syncs;
  }

  void api(CUpti_ActivityKind kind, std::uint32_t cbid, std::int64_t start, std::int64_t end,
           std::uint32_t corr) {
    CUpti_ActivityAPI a{};
    a.kind = kind;
    a.cbid = cbid;
    a.start = stamp_(start);
    a.end = stamp_(end);
    a.processId = static_cast<std::uint32_t>(getpid());
    a.threadId = tid();
    a.correlationId = corr;
    if (put(&a)) ++(kind == CUPTI_ACTIVITY_KIND_DRIVER ? counts_.driver : counts_.runtime);
  }

  void marker(CUpti_ActivityFlag flags, std::uint32_t id, std::int64_t at, const char* name) {
    CUpti_ActivityMarker2 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = flags;
    m.timestamp = stamp_(at);
    m.id = id;
    m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    m.objectId.pt.processId = static_cast<std::uint32_t>(getpid());
    m.objectId.pt.threadId = tid();
    m.name = name;
    m.domain = nullptr;  // the default NVTX domain
    put(&m);
  }

  void range(std::uint32_t id, std::int64_t start, std::int64_t end, const char* name) {
    const long before = counts_.stored;
    marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, start, name);
    marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, end, nullptr);
    if (counts_.stored == before + 2) ++counts_.ranges;
  }

  void mark(std::int64_t at, const char* name) {
    const long before = counts_.stored;
    marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 0, at, name);
    if (counts_.stored == before + 1) ++counts_.marks;
  }

  std::uint32_t device_ = 0;
  std::uint32_t next_correlation_ = 1;
  std::uint32_t next_getter_correlation_ = 1u << 30;  // apart from the launches' ids
  EmitFn emit_ = nullptr;
  StampFn stamp_ = nullptr;
  EventFn event_ = nullptr;
  RecordedFn recorded_ = nullptr;
  CallFn call_ = nullptr;
  Counts counts_;
};

}  // namespace fake_cuda
