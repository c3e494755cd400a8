#include "profiler/records.hpp"

namespace meshscope {

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
