#include "collectors/cupti/translate.hpp"

#include <cxxabi.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <fmt/format.h>

namespace meshscope::cupti {
namespace {

// CUpti_ActivityMemcpyKind, as Kineto and the Nsight importer spell it.
std::string_view copy_kind_name(std::uint8_t kind) {
  static constexpr std::array<std::string_view, 11> kNames = {
      "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < kNames.size() ? kNames[kind] : "Unknown";
}

// CUpti_ActivityMemoryKind.
std::string_view memory_kind_name(std::uint32_t kind) {
  static constexpr std::array<std::string_view, 7> kNames = {"Unknown", "Pageable", "Pinned",       "Device",
                                                             "Array",   "Managed",  "Device Static"};
  return kind < kNames.size() ? kNames[kind] : "Unknown";
}

std::string_view sync_name(CUpti_ActivitySynchronizationType type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "Context Sync";
    default:
      return "Sync";
  }
}

std::string_view overhead_name(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "CUPTI overhead: driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "CUPTI overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "CUPTI overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "CUPTI overhead: resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "CUPTI overhead: module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "CUPTI overhead: lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "CUPTI overhead: command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "CUPTI overhead: activity buffer request";
    default:
      return "CUPTI overhead";
  }
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel".
std::string strip_version(std::string name) {
  const auto at = name.rfind("_v");
  if (at != std::string::npos && at + 2 < name.size() &&
      name.find_first_not_of("0123456789", at + 2) == std::string::npos) {
    name.resize(at);
  }
  return name;
}

}  // namespace

Translator::Translator(ProfileWriter& writer, TranslatorOptions options, ApiNameFn api_name)
    : writer_(writer), options_(options), api_name_(std::move(api_name)) {}

StringId Translator::kernel_name(const char* mangled) {
  const std::string key = mangled ? mangled : "";
  auto it = kernel_names_.find(key);
  if (it != kernel_names_.end()) return it->second;
  std::string text = key;
  if (key.rfind("_Z", 0) == 0) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled(
        abi::__cxa_demangle(key.c_str(), nullptr, nullptr, &status), &std::free);
    if (status == 0 && demangled) text = demangled.get();
  }
  const StringId id =
      writer_.intern(text.empty() ? std::string_view("(unnamed kernel)") : std::string_view(text));
  kernel_names_.emplace(key, id);
  return id;
}

void Translator::note_stream(std::int32_t device, std::int64_t stream) {
  if (streams_.insert({device, stream}).second) {
    writer_.add_stream({options_.rank, device, stream, fmt::format("stream {}", stream)});
  }
}

void Translator::add(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      if (const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(record); !untimed(k))
        add_kernel(k);
      return;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      if (const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record); !untimed(m)) add_memcpy(m);
      return;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      if (const auto& m = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record); !untimed(m))
        add_peer_memcpy(m);
      return;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      if (const auto& m = *reinterpret_cast<const CUpti_ActivityMemset4*>(record); !untimed(m)) add_memset(m);
      return;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      if (const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(record); !untimed(a)) add_api(a, false);
      return;
    case CUPTI_ACTIVITY_KIND_DRIVER:
      if (const auto& a = *reinterpret_cast<const CUpti_ActivityAPI*>(record); !untimed(a)) add_api(a, true);
      return;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      if (const auto& sync = *reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
          !untimed(sync)) {
        // A query (cudaEventQuery/cudaStreamQuery) that found the work unfinished waited for nothing.
        if (sync.returnValue != 0) {
          ++counts_.unfinished_syncs;
        } else {
          add_sync(sync);
        }
      }
      return;
    case CUPTI_ACTIVITY_KIND_MARKER:
      add_marker(*reinterpret_cast<const CUpti_ActivityMarker2*>(record));
      return;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      add_device(*reinterpret_cast<const CUpti_ActivityDevice5*>(record));
      return;
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      add_context(*reinterpret_cast<const CUpti_ActivityContext3*>(record));
      return;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      if (const auto& o = *reinterpret_cast<const CUpti_ActivityOverhead3*>(record); !untimed(o))
        add_overhead(o);
      return;
    case CUPTI_ACTIVITY_KIND_NAME:
      add_name(*reinterpret_cast<const CUpti_ActivityName*>(record));
      return;
    default:
      ++counts_.ignored;
      return;
  }
}

void Translator::add_kernel(const CUpti_ActivityKernel10& k) {
  ActivityRecord a = on_stream(k, ActivityKind::kKernel);
  a.name = kernel_name(k.name);
  a.grid[0] = k.gridX;
  a.grid[1] = k.gridY;
  a.grid[2] = k.gridZ;
  a.block[0] = k.blockX;
  a.block[1] = k.blockY;
  a.block[2] = k.blockZ;
  a.registers = k.registersPerThread;
  a.shared_bytes = static_cast<std::int64_t>(k.staticSharedMemory) + k.dynamicSharedMemory;
  writer_.add_activity(a);
  ++counts_.kernels;
  if (a.graph_id != kNull) ++counts_.graph_kernels;
}

void Translator::add_memcpy(const CUpti_ActivityMemcpy6& m) {
  ActivityRecord a = on_stream(m, ActivityKind::kMemcpy);
  const std::string_view kind = copy_kind_name(m.copyKind);
  a.name = writer_.intern(
      fmt::format("Memcpy {} ({} -> {})", kind, memory_kind_name(m.srcKind), memory_kind_name(m.dstKind)));
  a.copy_kind = writer_.intern(kind);
  a.bytes = static_cast<std::int64_t>(m.bytes);
  writer_.add_activity(a);
  ++counts_.memcpys;
}

void Translator::add_peer_memcpy(const CUpti_ActivityMemcpyPtoP4& m) {
  ActivityRecord a = on_stream(m, ActivityKind::kMemcpy);
  a.name = writer_.intern(fmt::format("Memcpy PtoP (device {} -> device {})", m.srcDeviceId, m.dstDeviceId));
  a.copy_kind = writer_.intern("PtoP");
  a.bytes = static_cast<std::int64_t>(m.bytes);
  writer_.add_activity(a);
  ++counts_.memcpys;
}

void Translator::add_memset(const CUpti_ActivityMemset4& m) {
  ActivityRecord a = on_stream(m, ActivityKind::kMemset);
  a.name = writer_.intern(fmt::format("Memset ({})", memory_kind_name(m.memoryKind)));
  a.bytes = static_cast<std::int64_t>(m.bytes);
  writer_.add_activity(a);
  ++counts_.memsets;
}

void Translator::add_api(const CUpti_ActivityAPI& api, bool driver) {
  auto [it, inserted] = api_names_.try_emplace({driver, api.cbid}, kNoString);
  if (inserted) {
    std::string name = api_name_ ? strip_version(api_name_(driver, api.cbid)) : std::string();
    if (name.empty()) name = fmt::format("{} API {}", driver ? "driver" : "runtime", api.cbid);
    it->second = writer_.intern(name);
  }
  ApiCallRecord c;
  c.rank = options_.rank;
  c.kind = driver ? ApiKind::kDriver : ApiKind::kRuntime;
  c.pid = api.processId;
  c.tid = api.threadId;
  c.start_ns = time(api.start);
  c.end_ns = std::max(time(api.end), c.start_ns);
  c.name = it->second;
  c.correlation = api.correlationId;
  c.cbid = api.cbid;
  writer_.add_api_call(c);
  ++(driver ? counts_.driver_calls : counts_.runtime_calls);
}

void Translator::add_sync(const CUpti_ActivitySynchronization2& s) {
  ActivityRecord a;
  a.rank = options_.rank;
  a.kind = ActivityKind::kSync;
  const auto ctx = contexts_.find(s.contextId);
  a.device = ctx == contexts_.end() ? 0 : static_cast<std::int32_t>(ctx->second.first);
  // Context-wide syncs have no stream: they go on the context's default stream.
  a.stream = s.streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE ? std::int64_t{s.streamId}
             : ctx != contexts_.end()                          ? std::int64_t{ctx->second.second}
                                                               : 0;
  a.start_ns = time(s.start);
  a.end_ns = std::max(time(s.end), a.start_ns);
  a.name = writer_.intern(sync_name(s.type));
  a.correlation = s.correlationId;
  note_stream(a.device, a.stream);
  writer_.add_activity(a);
  ++counts_.syncs;
}

void Translator::add_marker(const CUpti_ActivityMarker2& m) {
  const bool thread =
      m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS;
  const std::int64_t pid = thread ? std::int64_t{m.objectId.pt.processId} : options_.pid;
  const std::int64_t tid = thread ? std::int64_t{m.objectId.pt.threadId} : 0;
  const StringId domain = writer_.intern(m.domain && *m.domain ? std::string_view(m.domain) : "NVTX");
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    RangeRecord r;
    r.rank = options_.rank;
    r.kind = RangeKind::kNvtx;
    r.pid = pid;
    r.tid = tid;
    r.start_ns = r.end_ns = time(m.timestamp);
    r.name = writer_.intern(m.name && *m.name ? std::string_view(m.name) : "(unnamed mark)");
    r.category = domain;
    writer_.add_range(r);
    ++counts_.nvtx_marks;
    return;
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    if (open_ranges_.size() >= options_.max_open_ranges) {
      ++counts_.dropped_open_ranges;
      return;
    }
    open_ranges_[m.id] = {time(m.timestamp),
                          writer_.intern(m.name && *m.name ? std::string_view(m.name) : "(unnamed range)"),
                          domain, pid, tid};
    return;
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    const auto it = open_ranges_.find(m.id);
    if (it == open_ranges_.end()) {
      ++counts_.unmatched_range_ends;
      return;
    }
    const OpenRange open = it->second;
    open_ranges_.erase(it);
    RangeRecord r;
    r.rank = options_.rank;
    r.kind = RangeKind::kNvtx;
    // A push/pop range is reported on the thread that pushed it; a start/end range keeps the start's thread.
    r.pid = open.pid;
    r.tid = open.tid;
    r.start_ns = open.start_ns;
    r.end_ns = std::max(time(m.timestamp), open.start_ns);
    r.name = open.name;
    r.category = open.domain;
    writer_.add_range(r);
    ++counts_.nvtx_ranges;
  }
}

void Translator::add_device(const CUpti_ActivityDevice5& d) {
  DeviceInfo info;
  info.rank = options_.rank;
  info.device = static_cast<std::int32_t>(d.id);
  info.name = d.name ? d.name : "";
  info.total_memory_bytes = static_cast<std::int64_t>(d.globalMemorySize);
  info.compute_major = d.computeCapabilityMajor;
  info.compute_minor = d.computeCapabilityMinor;
  info.sm_count = d.numMultiprocessors;
  info.properties_json = fmt::format(
      "{{\"source\": \"cupti\", \"core_clock_khz\": {}, \"memory_bandwidth_kbps\": {}, \"l2_cache_bytes\": "
      "{}, \"memcpy_engines\": {}, \"mig\": {}}}",
      d.coreClockRate, d.globalMemoryBandwidth, d.l2CacheSize, d.numMemcpyEngines,
      d.isMigEnabled ? "true" : "false");
  writer_.add_device(info);
  ++counts_.devices;
}

void Translator::add_context(const CUpti_ActivityContext3& c) {
  contexts_[c.contextId] = {c.deviceId, c.nullStreamId};
}

void Translator::add_overhead(const CUpti_ActivityOverhead3& o) {
  RangeRecord r;
  r.rank = options_.rank;
  r.kind = RangeKind::kOther;
  const bool thread =
      o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || o.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS;
  r.pid = thread ? std::int64_t{o.objectId.pt.processId} : options_.pid;
  r.tid = thread ? std::int64_t{o.objectId.pt.threadId} : 0;
  r.start_ns = time(o.start);
  r.end_ns = std::max(time(o.end), r.start_ns);
  r.name = writer_.intern(overhead_name(o.overheadKind));
  r.category = writer_.intern("cupti_overhead");
  writer_.add_range(r);
  ++counts_.overheads;
}

void Translator::add_name(const CUpti_ActivityName& n) {
  if (n.objectKind != CUPTI_ACTIVITY_OBJECT_THREAD || !n.name) return;
  const std::int64_t tid = n.objectId.pt.threadId;
  if (threads_.insert(tid).second) {
    writer_.add_thread({options_.rank, std::int64_t{n.objectId.pt.processId}, tid, n.name});
  }
}

void Translator::finish() {
  const auto& c = counts_;
  writer_.add_diagnostic(
      options_.rank, "info",
      fmt::format(
          "cupti: {} kernels ({} from CUDA graphs), {} memcpy, {} memset, {} syncs, {} runtime and {} driver "
          "calls, {} NVTX ranges, {} NVTX marks, {} CUPTI overhead records",
          c.kernels, c.graph_kernels, c.memcpys, c.memsets, c.syncs, c.runtime_calls, c.driver_calls,
          c.nvtx_ranges, c.nvtx_marks, c.overheads));
  if (!open_ranges_.empty()) {
    writer_.add_diagnostic(
        options_.rank, "warning",
        fmt::format("cupti: {} NVTX ranges never ended (not written)", open_ranges_.size()));
  }
  if (c.untimed) {
    writer_.add_diagnostic(
        options_.rank, "warning",
        fmt::format("cupti: {} records without timestamps (CUPTI could not time them) left out", c.untimed));
  }
  if (c.unfinished_syncs) {
    writer_.add_diagnostic(options_.rank, "info",
                           fmt::format("cupti: {} event/stream queries that found work unfinished left out",
                                       c.unfinished_syncs));
  }
  if (c.unmatched_range_ends) {
    writer_.add_diagnostic(options_.rank, "warning",
                           fmt::format("cupti: {} NVTX range ends without a start", c.unmatched_range_ends));
  }
  if (c.dropped_open_ranges) {
    writer_.add_diagnostic(options_.rank, "warning",
                           fmt::format("cupti: dropped {} NVTX ranges (more than {} open at once)",
                                       c.dropped_open_ranges, options_.max_open_ranges));
  }
}

}  // namespace meshscope::cupti
