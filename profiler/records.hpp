// Plain records that collectors and importers hand to the ProfileWriter. One struct per table of schema.sql;
// field meanings are documented there. Integer fields that may be absent use kNull (written as SQL NULL);
// string fields use StringId 0 for "absent".
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace meshscope {

using TimeNs = std::int64_t;
using StringId = std::uint32_t;

inline constexpr std::int64_t kNull = std::numeric_limits<std::int64_t>::min();
inline constexpr StringId kNoString = 0;

// The largest rank meshscope accepts: importers refuse larger ones and Profile::load refuses them too.
inline constexpr std::int64_t kMaxRank = 1'000'000;

// Every time meshscope stores lies within +-kTimeLimitNs (2^62 - 1 ns, about 146 years either side of 1970),
// so that the difference of any two stored times fits in an int64. Importers refuse (or, where documented,
// clamp) times outside it; Profile::load refuses them.
inline constexpr TimeNs kTimeLimitNs = (TimeNs{1} << 62) - 1;
constexpr bool time_in_range(TimeNs t) {
  return t >= -kTimeLimitNs && t <= kTimeLimitNs;
}

enum class ActivityKind : std::uint8_t { kKernel = 1, kMemcpy = 2, kMemset = 3, kSync = 4 };
enum class RangeKind : std::uint8_t {
  kCpuOp = 1,
  kAnnotation = 2,
  kPythonFunction = 3,
  kStep = 4,
  kGpuAnnotation = 5,
  kNvtx = 6,
  kOther = 7,
  kOsRuntime =
      8,  // a call into the OS runtime libraries (Nsight Systems' OSRT trace: pthread, poll, ioctl, ...)
};
enum class ApiKind : std::uint8_t { kRuntime = 1, kDriver = 2 };
// What the operating system recorded of a CPU thread: the intervals it ran on a core, the samples of where
// it was.
enum class ThreadActivityKind : std::uint8_t { kOnCpu = 1, kSample = 2 };
// The values of each kind are 1 to its count: the enums table, the writer and Profile::load take them from
// here.
inline constexpr int kActivityKindCount = 4;
inline constexpr int kRangeKindCount = 8;
inline constexpr int kApiKindCount = 2;
inline constexpr int kThreadActivityKindCount = 2;

// The member ranks in a process group's ranks_json text ("[0, 1, 2]", "[null, 5]"): every integer in it, in
// order, into RANKS. Returns false, with the offending number in BAD when given, when one is not a rank (0 to
// kMaxRank): importers refuse such a list and Profile::load refuses a profile holding one.
bool parse_rank_list(std::string_view text, std::vector<std::int32_t>& ranks, std::string* bad = nullptr);

const char* to_string(ActivityKind kind);
const char* to_string(RangeKind kind);
const char* to_string(ApiKind kind);
const char* to_string(ThreadActivityKind kind);

struct ActivityRecord {
  std::int32_t rank = 0;
  ActivityKind kind = ActivityKind::kKernel;
  std::int32_t device = 0;
  std::int64_t stream = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  StringId name = kNoString;
  std::int64_t correlation = kNull;
  std::int64_t external_id = kNull;
  std::int64_t grid[3] = {kNull, kNull, kNull};
  std::int64_t block[3] = {kNull, kNull, kNull};
  std::int64_t registers = kNull;
  std::int64_t shared_bytes = kNull;
  std::int64_t bytes = kNull;
  StringId copy_kind = kNoString;
  std::int64_t graph_id = kNull;
};

struct CollectiveRecord {
  std::int32_t rank = 0;
  std::int64_t activity_id = kNull;
  StringId communicator = kNoString;
  StringId pg_desc = kNoString;
  StringId pg_ranks = kNoString;
  std::int64_t seq = kNull;
  StringId op = kNoString;
  std::int64_t in_nelems = kNull;
  std::int64_t out_nelems = kNull;
  StringId dtype = kNoString;
  std::int64_t in_bytes = kNull;
  std::int64_t out_bytes = kNull;
  std::int64_t group_size = kNull;
  StringId algorithm = kNoString;
  StringId protocol = kNoString;
  std::int64_t channels = kNull;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  const char* source = "kernel_args";  // static string: kernel_args, cpu_op, nccl_plugin, nvtx
};

struct ApiCallRecord {
  std::int32_t rank = 0;
  ApiKind kind = ApiKind::kRuntime;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  StringId name = kNoString;
  std::int64_t correlation = kNull;
  std::int64_t external_id = kNull;
  std::int64_t cbid = kNull;
};

struct RangeRecord {
  std::int32_t rank = 0;
  RangeKind kind = RangeKind::kCpuOp;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  StringId name = kNoString;
  std::int64_t external_id = kNull;
  std::int64_t step = kNull;
  StringId category = kNoString;
  // A CPU operator's recorded "Input Dims" and "Input type" (canonical JSON lists, canonical_list), every
  // operator's, with a work formula or not: what its Details show. Not held by Profile::load.
  StringId input_dims = kNoString, input_types = kNoString;
};

struct FlowRecord {
  std::int32_t rank = 0;
  StringId category = kNoString;
  std::int64_t flow_id = 0;
  TimeNs src_ns = 0;
  std::int64_t src_pid = 0;
  std::int64_t src_tid = 0;
  TimeNs dst_ns = kNull;
  std::int64_t dst_pid = kNull;
  std::int64_t dst_tid = kNull;
};

struct ThreadActivityRecord {
  std::int32_t rank = 0;
  ThreadActivityKind kind = ThreadActivityKind::kOnCpu;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;  // = start_ns for a sample
  std::int64_t cpu = kNull;
  StringId stack = kNoString;  // samples: the call stack, innermost frame first, one per line
};

struct RankInfo {
  std::int32_t rank = 0;
  std::int64_t world_size = kNull;
  std::string hostname;
  std::int64_t pid = kNull;
  std::string source_file;
  std::string rank_source;
  std::string backend;
  std::string comm_version;
  std::int64_t clock_base_ns = 0;
  std::int64_t clock_offset_ns = 0;
};

struct DeviceInfo {
  std::int32_t rank = 0;
  std::int32_t device = 0;
  std::string name;
  std::int64_t total_memory_bytes = kNull;
  std::int64_t compute_major = kNull;
  std::int64_t compute_minor = kNull;
  std::int64_t sm_count = kNull;
  std::string properties_json;
};

struct ProcessGroupInfo {
  std::int32_t rank = 0;
  std::string pg_name;
  std::string pg_desc;
  std::string backend;
  std::int64_t group_size = kNull;
  std::string ranks_json;
};

struct StreamInfo {
  std::int32_t rank = 0;
  std::int32_t device = 0;
  std::int64_t stream = 0;
  std::string name;
};

struct ThreadInfo {
  std::int32_t rank = 0;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string name;
};

}  // namespace meshscope
