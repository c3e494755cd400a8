// A test double of CUPTI's activity API, built as libcupti.so.<CUDA major> so that the injection library
// (libmeshscope_cupti.so, which links libcupti by that name) loads it instead of the real one when the tests
// put its folder first in LD_LIBRARY_PATH. It lets the injection library's whole life be tested on a machine
// without a GPU: subscription, the timestamp callback, buffer requests and completions, caps and drops,
// flushes, API callbacks (device reset, profiler stop) — everything but the GPU itself.
//
// It behaves as the CUPTI documentation describes (cupti_activity.h, cupti_callbacks.h of CUDA 13):
// - cuptiSubscribe_v2 fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, and names the holder, when
//   FAKE_CUPTI_HOLDER is set (another client, e.g. Nsight Systems, subscribed first);
// - records are written into buffers the client hands out through its request callback, each record at an
//   8-byte boundary; a full buffer goes back through the completion callback; when the client declines a
//   buffer, the record is dropped and counted for cuptiActivityGetNumDroppedRecords;
// - cuptiActivityFlushAll returns the partly filled buffer (all records of the fake are complete, so the
//   default and the forced flush behave alike);
// - the timestamp callback, when registered, defines the clock of every record; without it (or when
//   FAKE_CUPTI_NO_TIMESTAMP_CALLBACK is set, as with a CUPTI that lacks the call) records carry
//   CLOCK_MONOTONIC nanoseconds, a clock with another epoch, as on WSL;
// - FAKE_CUPTI_UNSUPPORTED_KINDS (comma-separated CUpti_ActivityKind numbers) makes cuptiActivityEnable fail
//   with CUPTI_ERROR_NOT_COMPATIBLE for those kinds;
// - cuptiActivityEnableRuntimeApi / cuptiActivityEnableDriverApi turn single functions' records off and on;
//   cuptiActivityEnable of the RUNTIME or DRIVER kind afterwards turns every function of that kind back on
//   (as the documentation says it overrides them); FAKE_CUPTI_NO_API_FILTER makes both calls fail with
//   CUPTI_ERROR_NOT_SUPPORTED, as a CUPTI without them would.
//
// - cuptiEnableDomain turns on every callback of a domain, cuptiEnableCallback single ones on and off
//   (FAKE_CUPTI_NO_DOMAIN_CALLBACKS makes cuptiEnableDomain fail); cuptiGetThreadIdType says SYSTEM, the
//   gettid() ids the fake's records carry.
//
// The test program (meshscope_fake_rank --cuda) plays the CUDA driver and the GPU through four extra entry
// points: meshscope_fake_cupti_emit (a record, as CUPTI would produce it), meshscope_fake_cupti_timestamp
// (the record clock), meshscope_fake_cupti_api_event (an API or resource callback) and
// meshscope_fake_cupti_api_call (a whole call: entry and exit callbacks with CUPTI's per-call slot).
#include <cupti.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::int64_t clock_of(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::size_t record_size(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_DEVICE:
      return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_NAME:
      return sizeof(CUpti_ActivityName);
    default:
      return 0;
  }
}

constexpr std::size_t align8(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

struct Fake {
  std::recursive_mutex mutex;  // recursive: the client calls back in from the completion callback
  bool subscribed = false;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::set<std::pair<int, std::uint32_t>> enabled_callbacks, disabled_callbacks;
  std::set<int> enabled_domains;  // every callback of the domain but disabled_callbacks
  std::set<int> enabled_kinds;
  std::set<std::pair<int, std::uint32_t>> disabled_apis;  // (RUNTIME or DRIVER kind, cbid)
  CUpti_TimestampCallbackFunc timestamp = nullptr;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::uint8_t* buffer = nullptr;
  std::size_t size = 0;
  std::size_t used = 0;
  std::size_t max_records = 0;
  std::size_t records_in_buffer = 0;
  std::size_t dropped = 0;  // since the last cuptiActivityGetNumDroppedRecords
};

Fake& fake() {
  static Fake* f = new Fake();  // never destroyed: the client flushes from atexit handlers
  return *f;
}

// Hands the current buffer back to the client. Called with the mutex held, on the thread that filled or
// flushed it (the real CUPTI may use a thread of its own).
void complete_buffer(Fake& f) {
  if (!f.buffer) return;
  std::uint8_t* done = f.buffer;
  const std::size_t size = f.size;
  const std::size_t valid = f.used;
  f.buffer = nullptr;
  f.size = f.used = f.records_in_buffer = 0;
  f.complete(nullptr, 0, done, size, valid);
}

bool listed(const char* variable, int value) {
  const char* list = std::getenv(variable);
  if (!list) return false;
  const std::string text = std::string(",") + list + ",";
  return text.find("," + std::to_string(value) + ",") != std::string::npos;
}

}  // namespace

// ---- The CUPTI API that libmeshscope_cupti.so uses ----

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
    case CUPTI_SUCCESS:
      *str = "CUPTI_SUCCESS";
      break;
    case CUPTI_ERROR_NOT_COMPATIBLE:
      *str = "CUPTI_ERROR_NOT_COMPATIBLE";
      break;
    case CUPTI_ERROR_NOT_SUPPORTED:
      *str = "CUPTI_ERROR_NOT_SUPPORTED";
      break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
      break;
    default:
      *str = "CUPTI_ERROR_UNKNOWN";
      break;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (!name) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = nullptr;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
        *name = "cudaLaunchKernel_v7000";
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
        *name = "cudaMemcpyAsync_v3020";
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
        *name = "cudaStreamSynchronize_v3020";
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
        *name = "cudaGraphLaunch_v10000";
        break;
      case CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020:
        *name = "cudaGetDevice_v3020";
        break;
      default:
        break;
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx) {
    *name = "cuLaunchKernelEx";
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
             cbid == CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState) {
    *name = "cuDevicePrimaryCtxGetState";
  }
  return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                       void* userdata, CUpti_SubscriberParams* params) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  if (const char* holder = std::getenv("FAKE_CUPTI_HOLDER"); holder || f.subscribed) {
    if (params && params->oldSubscriberName && params->oldSubscriberSize > 0) {
      const std::string name = holder ? holder : "meshscope";
      const std::size_t n = std::min(name.size(), params->oldSubscriberSize - 1);
      std::memcpy(params->oldSubscriberName, name.data(), n);
      params->oldSubscriberName[n] = '\0';
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  f.subscribed = true;
  f.callback = callback;
  f.userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&f);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&f)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) {
    f.enabled_callbacks.insert({static_cast<int>(domain), cbid});
    f.disabled_callbacks.erase({static_cast<int>(domain), cbid});
  } else {
    f.enabled_callbacks.erase({static_cast<int>(domain), cbid});
    f.disabled_callbacks.insert({static_cast<int>(domain), cbid});
  }
  return CUPTI_SUCCESS;
}

// Every callback of DOMAIN; FAKE_CUPTI_NO_DOMAIN_CALLBACKS refuses, as a CUPTI that cannot would.
CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  if (subscriber != reinterpret_cast<CUpti_SubscriberHandle>(&f)) return CUPTI_ERROR_INVALID_PARAMETER;
  if (std::getenv("FAKE_CUPTI_NO_DOMAIN_CALLBACKS")) return CUPTI_ERROR_NOT_SUPPORTED;
  if (enable) {
    f.enabled_domains.insert(static_cast<int>(domain));
  } else {
    f.enabled_domains.erase(static_cast<int>(domain));
  }
  return CUPTI_SUCCESS;
}

// The fake names threads as the kernel does (gettid), as CUPTI does when asked for SYSTEM ids.
CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  if (!type) return CUPTI_ERROR_INVALID_PARAMETER;
  *type = CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc func) {
  if (!func) return CUPTI_ERROR_INVALID_PARAMETER;
  if (std::getenv("FAKE_CUPTI_NO_TIMESTAMP_CALLBACK")) return CUPTI_ERROR_NOT_SUPPORTED;
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  f.timestamp = func;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  *timestamp = f.timestamp ? f.timestamp() : static_cast<uint64_t>(clock_of(CLOCK_MONOTONIC));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  if (!requested || !completed) return CUPTI_ERROR_INVALID_PARAMETER;
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  f.request = requested;
  f.complete = completed;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (record_size(kind) == 0 || listed("FAKE_CUPTI_UNSUPPORTED_KINDS", static_cast<int>(kind)))
    return CUPTI_ERROR_NOT_COMPATIBLE;
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  f.enabled_kinds.insert(static_cast<int>(kind));
  std::erase_if(f.disabled_apis, [&](const auto& api) { return api.first == static_cast<int>(kind); });
  return CUPTI_SUCCESS;
}

namespace {

CUptiResult enable_api(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint8_t enable) {
  const char* unsupported = std::getenv("FAKE_CUPTI_NO_API_FILTER");
  if (unsupported && *unsupported) return CUPTI_ERROR_NOT_SUPPORTED;
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  if (enable)
    f.disabled_apis.erase({static_cast<int>(kind), cbid});
  else
    f.disabled_apis.insert({static_cast<int>(kind), cbid});
  return CUPTI_SUCCESS;
}

}  // namespace

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  return enable_api(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, enable);
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  return enable_api(CUPTI_ACTIVITY_KIND_DRIVER, cbid, enable);
}

CUptiResult CUPTIAPI cuptiActivityEnableAllSyncRecords(uint8_t) {
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  if (!f.complete) return CUPTI_ERROR_INVALID_OPERATION;
  if (f.records_in_buffer > 0) complete_buffer(f);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t offset = 0;
  if (*record) {
    const auto* current = reinterpret_cast<std::uint8_t*>(*record);
    offset = static_cast<std::size_t>(current - buffer) + align8(record_size((*record)->kind));
  }
  if (offset >= valid) {
    *record = nullptr;
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  *dropped = f.dropped;
  f.dropped = 0;
  return CUPTI_SUCCESS;
}

// ---- The test program's side: the CUDA driver and the GPU ----

// The clock records carry for an event at REALTIME_NS (CLOCK_REALTIME): the timestamp callback's clock when
// one is registered (the callback returns CLOCK_REALTIME), else CLOCK_MONOTONIC.
FAKE_EXPORT std::uint64_t meshscope_fake_cupti_timestamp(std::int64_t realtime_ns) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  if (f.timestamp) return static_cast<uint64_t>(realtime_ns);
  return static_cast<std::uint64_t>(realtime_ns - clock_of(CLOCK_REALTIME) + clock_of(CLOCK_MONOTONIC));
}

// Stores RECORD as CUPTI would. Returns 1 when stored, 0 when its kind is not enabled or it was dropped (no
// buffer). Strings the record points to must outlive the process's profiling (the caller keeps them).
FAKE_EXPORT int meshscope_fake_cupti_emit(const CUpti_Activity* record) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  if (!f.request || !f.enabled_kinds.count(static_cast<int>(record->kind))) return 0;
  const std::size_t size = record_size(record->kind);
  if (size == 0) return 0;
  const bool full = f.buffer && (f.used + align8(size) > f.size ||
                                 (f.max_records > 0 && f.records_in_buffer >= f.max_records));
  if (full) complete_buffer(f);
  if (!f.buffer) {
    std::uint8_t* buffer = nullptr;
    std::size_t buffer_size = 0, max_records = 0;
    f.request(&buffer, &buffer_size, &max_records);
    if (!buffer || buffer_size < align8(size)) {
      ++f.dropped;
      return 0;
    }
    f.buffer = buffer;
    f.size = buffer_size;
    f.max_records = max_records;
  }
  std::memcpy(f.buffer + f.used, record, size);
  f.used += align8(size);
  ++f.records_in_buffer;
  return 1;
}

// Whether CUPTI would produce a record of the API function CBID of KIND (RUNTIME or DRIVER): its kind is
// enabled and the function not turned off. The driver calls the function either way; only the record goes.
FAKE_EXPORT int meshscope_fake_cupti_api_recorded(int kind, std::uint32_t cbid) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  return f.enabled_kinds.count(kind) && !f.disabled_apis.count({kind, cbid}) ? 1 : 0;
}

namespace {

// The subscriber's callback when it enabled (DOMAIN, CBID), else null.
CUpti_CallbackFunc subscribed_callback(int domain, std::uint32_t cbid, void*& userdata) {
  Fake& f = fake();
  std::lock_guard lock(f.mutex);
  const bool enabled = f.enabled_callbacks.count({domain, cbid}) ||
                       (f.enabled_domains.count(domain) && !f.disabled_callbacks.count({domain, cbid}));
  userdata = f.userdata;
  return enabled ? f.callback : nullptr;
}

}  // namespace

// A whole API call as the driver makes it: the entry callback, the function, the exit callback, with CUPTI's
// per-call slot (correlationData) and the call's correlation id. Nothing when no callback is enabled for it.
FAKE_EXPORT void meshscope_fake_cupti_api_call(int domain, std::uint32_t cbid, std::uint32_t correlation,
                                               const char* function) {
  void* userdata = nullptr;
  const CUpti_CallbackFunc callback = subscribed_callback(domain, cbid, userdata);
  if (!callback) return;
  std::uint64_t slot = 0;
  int result = 0;
  CUpti_CallbackData data{};
  data.functionName = function;
  data.correlationId = correlation;
  data.correlationData = &slot;
  data.callbackSite = CUPTI_API_ENTER;
  callback(userdata, static_cast<CUpti_CallbackDomain>(domain), cbid, &data);
  data.callbackSite = CUPTI_API_EXIT;
  data.functionReturnValue = &result;
  callback(userdata, static_cast<CUpti_CallbackDomain>(domain), cbid, &data);
}

// An API or resource event: calls the subscriber's callback if it enabled this (domain, cbid).
FAKE_EXPORT void meshscope_fake_cupti_api_event(int domain, std::uint32_t cbid, int site,
                                                const char* function) {
  void* userdata = nullptr;
  const CUpti_CallbackFunc callback = subscribed_callback(domain, cbid, userdata);
  if (!callback) return;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    CUpti_ResourceData data{};
    callback(userdata, static_cast<CUpti_CallbackDomain>(domain), cbid, &data);
    return;
  }
  CUpti_CallbackData data{};
  data.callbackSite = static_cast<CUpti_ApiCallbackSite>(site);
  data.functionName = function;
  callback(userdata, static_cast<CUpti_CallbackDomain>(domain), cbid, &data);
}
