#include "profiler/records.hpp"

#include <charconv>

namespace meshscope {

bool parse_rank_list(std::string_view text, std::vector<std::int32_t>& ranks, std::string* bad) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if ((*p >= '0' && *p <= '9') || *p == '-') {
      std::int64_t value = 0;
      const auto [next, ec] = std::from_chars(p, end, value);
      if (next == p) {  // a lone '-'
        ++p;
        continue;
      }
      if (ec != std::errc() || value < 0 || value > kMaxRank) {
        if (bad) *bad = std::string(p, static_cast<std::size_t>(next - p));
        return false;
      }
      ranks.push_back(static_cast<std::int32_t>(value));
      p = next;
    } else {
      ++p;
    }
  }
  return true;
}

const char* to_string(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kKernel:
      return "kernel";
    case ActivityKind::kMemcpy:
      return "memcpy";
    case ActivityKind::kMemset:
      return "memset";
    case ActivityKind::kSync:
      return "sync";
  }
  return "unknown";
}

const char* to_string(RangeKind kind) {
  switch (kind) {
    case RangeKind::kCpuOp:
      return "cpu_op";
    case RangeKind::kAnnotation:
      return "annotation";
    case RangeKind::kPythonFunction:
      return "python_function";
    case RangeKind::kStep:
      return "step";
    case RangeKind::kGpuAnnotation:
      return "gpu_annotation";
    case RangeKind::kNvtx:
      return "nvtx";
    case RangeKind::kOther:
      return "other";
    case RangeKind::kOsRuntime:
      return "os_runtime";
  }
  return "unknown";
}

const char* to_string(ThreadActivityKind kind) {
  switch (kind) {
    case ThreadActivityKind::kOnCpu:
      return "on_cpu";
    case ThreadActivityKind::kSample:
      return "sample";
  }
  return "unknown";
}

const char* to_string(ApiKind kind) {
  switch (kind) {
    case ApiKind::kRuntime:
      return "runtime";
    case ApiKind::kDriver:
      return "driver";
  }
  return "unknown";
}

}  // namespace meshscope
