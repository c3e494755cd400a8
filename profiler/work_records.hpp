// Records of the work tables (schema.sql `op_work` and `kernel_work`; docs/PROFILE.md "Work per operator"):
// the FLOPs and bytes of a CPU operator computed from its recorded shapes (analysis/measure/op_work.hpp), and
// each kernel's share of the operator that launched it.
#pragma once

#include <cstdint>

#include "profiler/records.hpp"

namespace meshscope {

// op_work.status
enum class OpWorkStatus : std::uint8_t {
  kCounted = 1,       // its work is counted, on the kernels it and the operators inside it launched
  kNested = 2,        // inside a counted operator (profiles imported before such rows were left out)
  kUnparsable = 3,    // the recorded shapes do not parse or do not fit the operator
  kUndetermined = 4,  // the shapes do not determine the work (a stride, mask flag or type not recorded)
};
inline const char* to_string(OpWorkStatus status) {
  switch (status) {
    case OpWorkStatus::kCounted:
      return "counted";
    case OpWorkStatus::kNested:
      return "nested";
    case OpWorkStatus::kUnparsable:
      return "unparsable";
    case OpWorkStatus::kUndetermined:
      return "undetermined";
  }
  return "?";
}

struct OpWorkRecord {
  std::int64_t id = 0;  // op_work.id, assigned by the importer (kernel_work.op_id points here)
  std::int32_t rank = 0;
  std::int64_t external_id = kNull;  // joins ranges (rank, external_id)
  std::int64_t pid = 0, tid = 0;
  TimeNs start_ns = 0;
  StringId name = kNoString;
  OpWorkStatus status = OpWorkStatus::kCounted;
  std::int64_t category = kNull;  // analysis/measure WorkCategory (1 gemm .. 6 other); NULL unless computed
  double flops = 0, bytes = 0;    // NULL in the table unless computed
  StringId input_dims = kNoString;
  StringId input_types = kNoString;
  std::int64_t kernels = 0;    // kernels attributed to it (counted ops)
  std::int64_t kernel_ns = 0;  // their summed duration
};

struct KernelWorkRecord {
  std::int64_t activity_id = 0;
  std::int32_t rank = 0;
  std::int64_t op_id = 0;  // op_work.id of the counted operator
  double flops = 0, bytes = 0;
};

}  // namespace meshscope
