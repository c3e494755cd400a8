// CUPTI activity records -> meshscope profile rows. Plain code with no call into CUPTI or the driver, so that
// tests can feed it CUpti_Activity* structs built by hand; the injection library (cupti_injection.cpp) walks
// CUPTI's buffers and hands each record here on the writer thread.
#pragma once

#include <algorithm>

#include <cupti_activity.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "profiler/profile_writer.hpp"
#include "profiler/records.hpp"

namespace meshscope::cupti {

// Name of a runtime (DRIVER false) or driver API callback id, as CUPTI spells it (cudaLaunchKernel_v7000).
using ApiNameFn = std::function<std::string(bool driver, std::uint32_t cbid)>;

struct TranslatorOptions {
  std::int32_t rank = 0;
  std::int64_t pid = 0;
  // Added to every CUPTI timestamp: 0 when CUPTI stamps with the profile clock (timestamp callback
  // registered), else (profile clock - cuptiGetTimestamp()) measured at start.
  std::int64_t clock_offset_ns = 0;
  // NVTX ranges still open beyond this many are dropped (and counted), bounding memory.
  std::size_t max_open_ranges = 1 << 16;
};

struct TranslatorCounts {
  std::uint64_t kernels = 0, graph_kernels = 0, memcpys = 0, memsets = 0, syncs = 0, runtime_calls = 0,
                driver_calls = 0, nvtx_ranges = 0, nvtx_marks = 0, overheads = 0, devices = 0, ignored = 0,
                unmatched_range_ends = 0, dropped_open_ranges = 0;
  std::uint64_t untimed = 0;           // records CUPTI could not time (a zero start or end): left out
  std::uint64_t unfinished_syncs = 0;  // event/stream queries that found work still running: left out
};

class Translator {
 public:
  Translator(ProfileWriter& writer, TranslatorOptions options, ApiNameFn api_name);

  // Translates one record. Kinds meshscope does not record are counted in counts().ignored.
  void add(const CUpti_Activity* record);
  // Writes what the translator knows at the end (NVTX ranges that never ended, counts) as diagnostics.
  void finish();

  const TranslatorCounts& counts() const { return counts_; }

 private:
  std::int64_t time(std::uint64_t cupti_ns) const {
    return static_cast<std::int64_t>(cupti_ns) + options_.clock_offset_ns;
  }
  // CUPTI writes 0 for a time it could not collect: such a record is counted, not written as 1970.
  template <typename Record>
  bool untimed(const Record& r) {
    if (r.start != 0 && r.end != 0) return false;
    ++counts_.untimed;
    return true;
  }
  StringId kernel_name(const char* mangled);
  void note_stream(std::int32_t device, std::int64_t stream);
  // The fields every stream-ordered CUPTI record shares (device, stream, start, end, correlation, graph), for
  // a kernel, copy or memset of KIND.
  template <typename Record>
  ActivityRecord on_stream(const Record& r, ActivityKind kind) {
    ActivityRecord a;
    a.rank = options_.rank;
    a.kind = kind;
    a.device = static_cast<std::int32_t>(r.deviceId);
    a.stream = r.streamId;
    a.start_ns = time(r.start);
    a.end_ns = std::max(time(r.end), a.start_ns);
    a.correlation = r.correlationId;
    a.graph_id = r.graphId == 0 ? kNull : static_cast<std::int64_t>(r.graphId);
    note_stream(a.device, a.stream);
    return a;
  }
  void add_kernel(const CUpti_ActivityKernel10& k);
  void add_memcpy(const CUpti_ActivityMemcpy6& m);
  void add_peer_memcpy(const CUpti_ActivityMemcpyPtoP4& m);
  void add_memset(const CUpti_ActivityMemset4& m);
  void add_api(const CUpti_ActivityAPI& a, bool driver);
  void add_sync(const CUpti_ActivitySynchronization2& s);
  void add_marker(const CUpti_ActivityMarker2& m);
  void add_device(const CUpti_ActivityDevice5& d);
  void add_context(const CUpti_ActivityContext3& c);
  void add_overhead(const CUpti_ActivityOverhead3& o);
  void add_name(const CUpti_ActivityName& n);

  ProfileWriter& writer_;
  TranslatorOptions options_;
  ApiNameFn api_name_;
  TranslatorCounts counts_;
  std::unordered_map<std::string, StringId> kernel_names_;        // mangled -> demangled string id
  std::map<std::pair<bool, std::uint32_t>, StringId> api_names_;  // (driver, cbid) -> name
  std::set<std::pair<std::int32_t, std::int64_t>> streams_;       // (device, stream) seen
  std::set<std::int64_t> threads_;                                // named threads
  std::unordered_map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>>
      contexts_;  // id -> (device, null stream)
  struct OpenRange {
    std::int64_t start_ns;
    StringId name, domain;
    std::int64_t pid, tid;
  };
  std::unordered_map<std::uint32_t, OpenRange> open_ranges_;  // NVTX range id -> its start
};

}  // namespace meshscope::cupti
