// meshscope's CUDA collector: a CUPTI injection library (libmeshscope_cupti.so), loaded by the CUDA driver
// from CUDA_INJECTION64_PATH when the process initialises CUDA; the driver calls InitializeInjection() once.
//
// [SECTION] Start: subscribe to CUPTI as "meshscope" (if another CUPTI client holds the process, say so once
//           and step aside), make CUPTI stamp with the profile clock, start the per-rank Session, enable
//           the activity kinds, hook cudaDeviceReset / profiler stop / context destruction, SIGTERM/SIGINT
//           and exit.
// [SECTION] Buffers: CUPTI asks for buffers (at most MESHSCOPE_CUPTI_MAX_BUFFERS, each
//           MESHSCOPE_CUPTI_BUFFER_KB) and returns them full on its own threads; full buffers go through a
//           lock-free queue to the Session thread, which translates every record (translate.cpp) and frees
//           the buffer. When the cap is reached CUPTI drops records itself; when the queue is full the buffer
//           is dropped; both are counted into the profile.
// [SECTION] Flush: the Session thread asks CUPTI for completed buffers every MESHSCOPE_FLUSH_MS and forces
//           out partly filled ones at exit, device reset, profiler stop and on SIGTERM/SIGINT.
// [SECTION] Driver calls by callback (MESHSCOPE_CUPTI_DRIVER_API=2): CUPTI's callback API instead of its
//           DRIVER activity kind, which makes CUPTI wrap every driver call. Each launching thread writes its
//           calls into a ring of its own (no lock, allocation or system call per call); the Session thread
//           turns them into the same api_calls rows.
#include <cupti.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "collectors/cupti/translate.hpp"
#include "collectors/runtime/collector_runtime.hpp"

#define MESHSCOPE_EXPORT __attribute__((visibility("default")))

namespace meshscope::cupti {
namespace {

constexpr std::size_t kAlign = 8;

struct Buffer {
  std::uint8_t* data = nullptr;
  std::size_t valid = 0;
};

std::string result_text(CUptiResult r) {
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text)
    return fmt::format("CUPTI error {}", static_cast<int>(r));
  return text;
}

std::string api_name(bool driver, std::uint32_t cbid) {
  const char* name = nullptr;
  const CUptiResult r =
      cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name);
  return r == CUPTI_SUCCESS && name ? std::string(name) : std::string();
}

class CuptiSource;

// One driver API call taken through a callback, in the profile clock.
struct DriverCall {
  std::uint64_t start = 0, end = 0;
  std::uint32_t cbid = 0, correlation = 0, thread = 0;
};

// One launching thread's driver calls on their way to the Session thread: one producer (that thread), one
// consumer (the Session thread). A full ring drops the call and counts it.
class CallRing {
 public:
  static constexpr std::uint32_t kSlots = 16384;

  // False when full. HALF_FULL is set when this call filled the first half (time to wake the consumer).
  bool push(const DriverCall& call, bool& half_full) noexcept {
    const std::uint32_t head = head_.load(std::memory_order_relaxed);
    const std::uint32_t queued = head - tail_.load(std::memory_order_acquire);
    if (queued >= kSlots) {
      dropped.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    slots_[head % kSlots] = call;
    head_.store(head + 1, std::memory_order_release);
    half_full = queued + 1 == kSlots / 2;
    return true;
  }

  template <class Consume>
  void drain(Consume&& consume) {
    const std::uint32_t head = head_.load(std::memory_order_acquire);
    std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    for (; tail != head; ++tail) consume(slots_[tail % kSlots]);
    tail_.store(tail, std::memory_order_release);
  }

  bool empty() const noexcept {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire);
  }

  std::atomic<bool> owned{true};  // a live thread writes into it
  std::atomic<std::uint64_t> dropped{0};
  std::uint32_t thread = 0;  // the owner's id as CUPTI's records give it

 private:
  std::array<DriverCall, kSlots> slots_{};
  std::atomic<std::uint32_t> head_{0}, tail_{0};
};

struct State {
  std::atomic<bool> initialized{false};
  std::atomic<bool> active{false};  // buffers are accepted
  std::unique_ptr<CuptiSource> source;
  std::unique_ptr<record::Session> session;
  std::unique_ptr<record::BoundedQueue<Buffer>> queue;
  std::size_t buffer_bytes = 4u << 20;
  std::int64_t max_buffers = 64;
  std::atomic<std::int64_t> outstanding{0};  // buffers handed to CUPTI and not yet freed
  std::atomic<std::uint64_t> refused_buffers{0}, dropped_buffers{0}, dropped_records{0}, cupti_dropped{0};
  std::int64_t clock_offset_ns = 0;
  bool timestamp_callback = false;
  std::string disabled_kinds;
  std::string quiet_apis;  // what leave_out_quiet_apis() did, for the diagnostics
  CUpti_SubscriberHandle subscriber = nullptr;
  std::int64_t pid = 0;  // the process that started CUPTI (a forked child must not touch it)
  std::atomic<bool> driver_callbacks{false};  // driver API calls through callbacks (DRIVER_API=2)
  bool system_thread_ids = false;             // CUPTI names threads by gettid(), not pthread_self()
  std::mutex rings_mutex;        // guards rings (taken once per thread, and by the Session thread)
  std::vector<CallRing*> rings;  // never freed: a thread's ring is reused once it ended and was drained
  std::atomic<std::uint64_t> unringed_calls{0};  // calls of threads that could not get a ring
};

State& state() {
  static State* s = new State();  // never destroyed: CUPTI may call back during exit
  return *s;
}

void free_buffer(std::uint8_t* data) {
  std::free(data);
  state().outstanding.fetch_sub(1, std::memory_order_relaxed);
}

std::uint64_t count_records(std::uint8_t* data, std::size_t valid) {
  std::uint64_t n = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(data, valid, &record) == CUPTI_SUCCESS) ++n;
  return n;
}

// The calling thread's ring, taken on its first driver call and handed back when the thread ends.
struct RingLease {
  CallRing* ring = nullptr;
  ~RingLease() {
    if (ring) ring->owned.store(false, std::memory_order_release);
  }
};
thread_local RingLease t_ring_lease;

CallRing* thread_ring(State& s) noexcept {
  if (t_ring_lease.ring) return t_ring_lease.ring;
  try {
    std::lock_guard lock(s.rings_mutex);
    CallRing* ring = nullptr;
    for (CallRing* r : s.rings) {
      if (!r->owned.load(std::memory_order_acquire) && r->empty()) {
        ring = r;
        ring->owned.store(true, std::memory_order_relaxed);
        break;
      }
    }
    if (!ring) {
      s.rings.reserve(s.rings.size() + 1);
      ring = new CallRing();
      s.rings.push_back(ring);
    }
    // As CUPTI's own records name the thread (its default: pthread_self(), cut to 32 bits).
    ring->thread = s.system_thread_ids ? static_cast<std::uint32_t>(::syscall(SYS_gettid))
                                       : static_cast<std::uint32_t>(::pthread_self());
    t_ring_lease.ring = ring;
    return ring;
  } catch (...) {
    return nullptr;
  }
}

// A driver API callback: the start goes into CUPTI's per-call slot on entry, the call into the thread's ring
// on exit.
void record_driver_call(State& s, CUpti_CallbackId cbid, const CUpti_CallbackData& info) noexcept {
  if (!info.correlationData) return;
  if (info.callbackSite == CUPTI_API_ENTER) {
    *info.correlationData = static_cast<std::uint64_t>(record::clock_ns());
    return;
  }
  const DriverCall call{*info.correlationData, static_cast<std::uint64_t>(record::clock_ns()), cbid,
                        info.correlationId, 0};
  CallRing* ring = thread_ring(s);
  if (!ring) {
    s.unringed_calls.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  DriverCall stamped = call;
  stamped.thread = ring->thread;
  bool half_full = false;
  if (ring->push(stamped, half_full) && half_full && s.session) s.session->request_flush();
}

class CuptiSource final : public record::Source {
 public:
  explicit CuptiSource(const record::Identity& identity) : identity_(identity) {}

  void drain(ProfileWriter& writer) override {
    State& s = state();
    if (!translator_) {
      TranslatorOptions options;
      options.rank = identity_.rank;
      options.pid = identity_.pid;
      options.clock_offset_ns = s.clock_offset_ns;
      translator_.emplace(writer, options, api_name);
    }
    Buffer buffer;
    while (s.queue->pop(buffer)) {
      CUpti_Activity* record = nullptr;
      while (cuptiActivityGetNextRecord(buffer.data, buffer.valid, &record) == CUPTI_SUCCESS)
        translator_->add(record);
      free_buffer(buffer.data);
    }
    if (s.driver_callbacks) drain_driver_calls(s);
  }

  void before_flush(bool forced) override {
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  }

  void finish(ProfileWriter& writer) override {
    State& s = state();
    drain(writer);
    translator_->finish();
    // Records dropped after the last completed buffer (while every request was refused) are only counted
    // here.
    std::size_t dropped_since = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped_since) == CUPTI_SUCCESS && dropped_since) {
      s.cupti_dropped.fetch_add(dropped_since, std::memory_order_relaxed);
    }
    const std::int32_t rank = identity_.rank;
    std::uint32_t version = 0;
    cuptiGetVersion(&version);
    writer.set_meta("cupti_api_version", std::to_string(version));
    writer.add_diagnostic(
        rank, "info",
        s.timestamp_callback
            ? std::string("cupti: timestamps from the profile clock (CLOCK_REALTIME callback)")
            : fmt::format("cupti: timestamps shifted by {} ns onto the profile clock", s.clock_offset_ns));
    if (!s.disabled_kinds.empty()) {
      writer.add_diagnostic(rank, "warning", "cupti: activity kinds not available: " + s.disabled_kinds);
    }
    if (!s.quiet_apis.empty()) writer.add_diagnostic(rank, "info", "cupti: " + s.quiet_apis);
    if (s.driver_callbacks) {
      writer.add_diagnostic(rank, "info",
                            "cupti: driver API calls recorded through CUPTI's callback API "
                            "(MESHSCOPE_CUPTI_DRIVER_API=2), not its DRIVER activity kind");
      std::uint64_t dropped = s.unringed_calls.load();
      {
        std::lock_guard lock(s.rings_mutex);
        for (const CallRing* ring : s.rings) dropped += ring->dropped.load();
      }
      if (dropped > 0) {
        writer.add_diagnostic(
            rank, "warning",
            fmt::format("cupti: dropped {} driver API calls (a thread's ring of {} calls was full)", dropped,
                        CallRing::kSlots));
      }
    }
    if (const auto n = s.cupti_dropped.load()) {
      writer.add_diagnostic(rank, "warning",
                            fmt::format("cupti: CUPTI dropped {} records (buffer cap {} x {} KiB reached)", n,
                                        s.max_buffers, s.buffer_bytes >> 10));
    }
    if (const auto n = s.dropped_buffers.load()) {
      writer.add_diagnostic(rank, "warning",
                            fmt::format("cupti: dropped {} buffers with {} records (writer queue full)", n,
                                        s.dropped_records.load()));
    }
    if (const auto n = s.refused_buffers.load()) {
      writer.add_diagnostic(rank, "warning",
                            fmt::format("cupti: refused {} buffer requests (cap reached)", n));
    }
  }

 private:
  // Driver calls taken by callback, as the DRIVER activity records CUPTI would have written (the translator
  // shifts CUPTI's times onto the profile clock; these are on it already).
  void drain_driver_calls(State& s) {
    // Not under the lock: a thread taking its first ring must not wait for the writer. Rings are never freed.
    std::vector<CallRing*> rings;
    {
      std::lock_guard lock(s.rings_mutex);
      rings = s.rings;
    }
    for (CallRing* ring : rings) {
      ring->drain([&](const DriverCall& call) {
        CUpti_ActivityAPI api{};
        api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
        api.cbid = call.cbid;
        api.start = static_cast<std::uint64_t>(static_cast<std::int64_t>(call.start) - s.clock_offset_ns);
        api.end = static_cast<std::uint64_t>(static_cast<std::int64_t>(call.end) - s.clock_offset_ns);
        api.processId = static_cast<std::uint32_t>(identity_.pid);
        api.threadId = call.thread;
        api.correlationId = call.correlation;
        translator_->add(reinterpret_cast<const CUpti_Activity*>(&api));
      });
    }
  }

  record::Identity identity_;
  std::optional<Translator> translator_;
};

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  State& s = state();
  *max_records = 0;
  *buffer = nullptr;
  *size = 0;
  if (!s.active.load(std::memory_order_relaxed)) return;
  if (s.outstanding.fetch_add(1, std::memory_order_relaxed) >= s.max_buffers) {
    s.outstanding.fetch_sub(1, std::memory_order_relaxed);
    s.refused_buffers.fetch_add(1, std::memory_order_relaxed);
    return;  // CUPTI drops records while it has no buffer; it counts them (cuptiActivityGetNumDroppedRecords)
  }
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kAlign, s.buffer_bytes));
  if (!*buffer) {
    s.outstanding.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  *size = s.buffer_bytes;
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  State& s = state();
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS && dropped) {
    s.cupti_dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
  if (!buffer) return;
  if (valid == 0) {
    free_buffer(buffer);
    return;
  }
  if (!s.active.load(std::memory_order_relaxed) || !s.queue->push({buffer, valid})) {
    s.dropped_records.fetch_add(count_records(buffer, valid), std::memory_order_relaxed);
    s.dropped_buffers.fetch_add(1, std::memory_order_relaxed);
    free_buffer(buffer);
  }
}

// Device reset, profiler stop and context destruction end what CUPTI can still deliver for a context: flush
// now, from this thread.
void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  State& s = state();
  if (!s.active.load(std::memory_order_relaxed)) return;
  bool flush = false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    flush =
        (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 && info->callbackSite == CUPTI_API_ENTER) ||
        (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000 && info->callbackSite == CUPTI_API_EXIT);
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const auto* info = static_cast<const CUpti_CallbackData*>(data);
    if (s.driver_callbacks.load(std::memory_order_relaxed)) record_driver_call(s, cbid, *info);
    flush = cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && info->callbackSite == CUPTI_API_EXIT;
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    flush = cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING;
  }
  if (!flush) return;
  // Not forced: work may still be running here, and a forced flush would hand over buffers with unfinished
  // records. The default flush returns every buffer whose records are complete (also partly filled ones).
  cuptiActivityFlushAll(0);
  if (s.session) s.session->request_flush();
}

std::uint64_t CUPTIAPI profile_clock() {
  return static_cast<std::uint64_t>(record::clock_ns());
}

void at_exit() {
  State& s = state();
  if (!s.active.load() || s.pid != static_cast<std::int64_t>(::getpid())) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (s.session) s.session->shutdown();
  s.active.store(false);
}

// API functions that launch, copy, set or wait for nothing and return at once: device, attribute and version
// queries, error strings, capture-state queries, context getters. PyTorch calls some of them tens of times
// per kernel (15 recorded DDP steps of a small transformer on an H200: 132,808 cudaGetDevice and 42,559
// cuDevicePrimaryCtxGetState calls beside 9,371 kernel launches); each record costs CUPTI and the writer time
// and tells nothing about the GPU. Left out unless MESHSCOPE_CUPTI_ALL_APIS=1, as Nsight Systems leaves out
// APIs "with little performance impact" unless --cuda-trace-all-apis.
constexpr CUpti_CallbackId kQuietRuntimeApis[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceFlags_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetAttribute_v5000,
    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceGetStreamPriorityRange_v5050,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorName_v6050,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030,
    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExchangeStreamCaptureMode_v10010,
    CUPTI_RUNTIME_TRACE_CBID_cudaPointerGetAttributes_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaFuncGetAttributes_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020,
};
constexpr CUpti_CallbackId kQuietDriverApis[] = {
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGet,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetUuid,
    CUPTI_DRIVER_TRACE_CBID_cuDeviceGetUuid_v2,
    CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetFlags,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetId,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetLimit,
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetStreamPriorityRange,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetName,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuFuncGetName,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorString,
    CUPTI_DRIVER_TRACE_CBID_cuGetErrorName,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuPointerGetAttributes,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing,
    CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamGetCtx_v2_ptsz,
};

// Called after the RUNTIME and DRIVER kinds were enabled (enabling a kind turns its functions back on).
void leave_out_quiet_apis(State& s, bool driver_enabled) {
  if (record::env_int("MESHSCOPE_CUPTI_ALL_APIS", 0) != 0) return;
  int left_out = 0;
  CUptiResult failure = CUPTI_SUCCESS;
  auto leave_out = [&](std::span<const CUpti_CallbackId> functions,
                       CUptiResult (*enable)(CUpti_CallbackId, uint8_t)) {
    for (const CUpti_CallbackId cbid : functions) {
      const CUptiResult r = enable(cbid, 0);
      if (r == CUPTI_SUCCESS)
        ++left_out;
      else
        failure = r;
    }
  };
  leave_out(kQuietRuntimeApis, cuptiActivityEnableRuntimeApi);
  if (driver_enabled) leave_out(kQuietDriverApis, cuptiActivityEnableDriverApi);
  if (left_out > 0) {
    s.quiet_apis = fmt::format(
        "{} API functions that do no GPU work are not recorded (cudaGetDevice, cudaGetLastError, "
        "cudaStreamIsCapturing, cuDevicePrimaryCtxGetState, cuCtxGetCurrent, cuKernelGetName, ...; "
        "MESHSCOPE_CUPTI_ALL_APIS=1 records them)",
        left_out);
  } else if (failure != CUPTI_SUCCESS) {
    s.quiet_apis =
        fmt::format("every API call is recorded: this CUPTI cannot leave out single functions ({})",
                    result_text(failure));
  }
}

// Driver API calls through CUPTI's callback API: every driver function's callbacks but the quiet ones. False
// (and the DRIVER activity kind stands in) when CUPTI refuses.
bool driver_calls_by_callback(State& s) {
  CUpti_ActivityThreadIdType thread_ids = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  if (cuptiGetThreadIdType(&thread_ids) == CUPTI_SUCCESS)
    s.system_thread_ids = thread_ids == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
  s.driver_callbacks.store(true);
  const CUptiResult enabled = cuptiEnableDomain(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  if (enabled != CUPTI_SUCCESS) {
    s.driver_callbacks.store(false);
    record::log_line("cupti", fmt::format("driver API callbacks refused ({}): driver calls are recorded as "
                                          "CUPTI activity records instead",
                                          result_text(enabled)));
    return false;
  }
  if (record::env_int("MESHSCOPE_CUPTI_ALL_APIS", 0) == 0) {
    for (const CUpti_CallbackId cbid : kQuietDriverApis)
      cuptiEnableCallback(0, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  return true;
}

bool start() {
  State& s = state();
  if (record::env_int("MESHSCOPE_CUPTI", 1) == 0) return false;
  s.pid = ::getpid();

  char previous[128] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "meshscope";
  params.oldSubscriberName = previous;
  params.oldSubscriberSize = sizeof previous;
  const CUptiResult subscribed = cuptiSubscribe_v2(&s.subscriber, on_callback, nullptr, &params);
  if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    record::log_line("cupti",
                     fmt::format("{} already holds CUPTI in this process; meshscope's CUDA collector steps "
                                 "aside (NCCL collectives are still recorded by the NCCL plugin)",
                                 previous[0] ? previous : "another CUPTI client"));
    return false;
  }
  if (subscribed != CUPTI_SUCCESS) {
    record::log_line("cupti",
                     fmt::format("disabled: cannot subscribe to CUPTI: {}", result_text(subscribed)));
    return false;
  }
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                      CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);

  // One clock with the NCCL plugin: CUPTI stamps with CLOCK_REALTIME through the callback; without it (older
  // CUPTI), CUPTI's own timestamps are shifted by the difference measured now.
  s.timestamp_callback = cuptiActivityRegisterTimestampCallback(profile_clock) == CUPTI_SUCCESS;
  if (!s.timestamp_callback) {
    std::uint64_t cupti_now = 0;
    if (cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS) {
      s.clock_offset_ns = record::clock_ns() - static_cast<std::int64_t>(cupti_now);
    }
  }

  s.buffer_bytes = static_cast<std::size_t>(std::clamp<std::int64_t>(
                       record::env_int("MESHSCOPE_CUPTI_BUFFER_KB", 4096), 64, 1 << 20))
                   << 10;
  s.max_buffers = std::clamp<std::int64_t>(record::env_int("MESHSCOPE_CUPTI_MAX_BUFFERS", 64), 2, 1 << 16);
  std::size_t capacity = 2;
  while (capacity < static_cast<std::size_t>(s.max_buffers)) capacity <<= 1;
  s.queue = std::make_unique<record::BoundedQueue<Buffer>>(capacity);

  const record::Identity identity = record::identity_from_environment();
  s.source = std::make_unique<CuptiSource>(identity);
  s.session = std::make_unique<record::Session>(*s.source, identity,
                                                record::session_options_from_environment("cupti"));
  if (!s.session->start()) return false;
  record::install_signal_flush(*s.session);
  std::atexit(at_exit);

  const CUptiResult registered = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (registered != CUPTI_SUCCESS) {
    s.session->disable(fmt::format("cannot register activity buffers: {}", result_text(registered)));
    return false;
  }
  s.active.store(true);
  struct Kind {
    CUpti_ActivityKind kind;
    const char* name;
  };
  static constexpr Kind kKinds[] = {
      {CUPTI_ACTIVITY_KIND_DEVICE, "device"},
      {CUPTI_ACTIVITY_KIND_CONTEXT, "context"},
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "concurrent kernel"},
      {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
      {CUPTI_ACTIVITY_KIND_MEMCPY2, "peer memcpy"},
      {CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
      {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime API"},
      {CUPTI_ACTIVITY_KIND_DRIVER, "driver API"},
      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "synchronization"},
      {CUPTI_ACTIVITY_KIND_MARKER, "NVTX"},
      {CUPTI_ACTIVITY_KIND_NAME, "names"},
      {CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"},
  };
  // Event and stream queries that found work unfinished are not waits: leave them out at the source.
  cuptiActivityEnableAllSyncRecords(0);
  // 0: no driver calls; 1: CUPTI's DRIVER activity kind; 2: CUPTI's callback API (driver_calls_by_callback).
  const std::int64_t driver_mode = record::env_int("MESHSCOPE_CUPTI_DRIVER_API", 1);
  const bool by_callback = driver_mode == 2 && driver_calls_by_callback(s);
  bool driver_enabled = false;
  for (const Kind& k : kKinds) {
    if (k.kind == CUPTI_ACTIVITY_KIND_DRIVER && (driver_mode == 0 || by_callback)) continue;
    const CUptiResult r = cuptiActivityEnable(k.kind);
    if (r != CUPTI_SUCCESS) {
      if (!s.disabled_kinds.empty()) s.disabled_kinds += ", ";
      s.disabled_kinds += fmt::format("{} ({})", k.name, result_text(r));
    } else if (k.kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      driver_enabled = true;
    }
  }
  leave_out_quiet_apis(s, driver_enabled);
  return true;
}

}  // namespace
}  // namespace meshscope::cupti

// Called by the CUDA driver once, on the thread that initialises CUDA. Returns 1 (the driver ignores
// failures, and so does the job: any problem is one log line and the collector stays off).
extern "C" MESHSCOPE_EXPORT int InitializeInjection(void) {
  using namespace meshscope::cupti;
  if (state().initialized.exchange(true)) return 1;
  try {
    start();
  } catch (const std::exception& e) {
    state().active.store(false);
    meshscope::record::log_line("cupti", fmt::format("disabled: {}", e.what()));
  } catch (...) {
    state().active.store(false);
    meshscope::record::log_line("cupti", "disabled: internal error at start");
  }
  return 1;
}
