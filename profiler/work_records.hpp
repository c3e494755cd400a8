// Records of the work tables (schema.sql `op_work` and `kernel_work`; docs/PROFILE.md "Work per operator"):
// the FLOPs and bytes of a CPU operator computed from its recorded shapes (analysis/measure/op_work.hpp), and
// each kernel's share of the operator that launched it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/records.hpp"

namespace meshscope {

// op_work.status
enum class OpWorkStatus : std::uint8_t {
  kCounted = 1,  // its work is counted, on the kernels it and the operators inside it launched
  // Inside a counted operator, or undetermined inside any operator with a formula (no row is written:
  // profiles imported before such rows were left out hold them).
  kNested = 2,
  kUnparsable = 3,    // the recorded shapes do not parse or do not fit the operator
  kUndetermined = 4,  // the shapes do not determine the work (a stride, mask flag or type not recorded)
};
// Whether VALUE (an op_work.status read from a file) is one of the statuses above.
inline bool is_op_work_status(std::int64_t value) {
  return value >= static_cast<std::int64_t>(OpWorkStatus::kCounted) &&
         value <= static_cast<std::int64_t>(OpWorkStatus::kUndetermined);
}
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

// What the import computes of an operator from its recorded shapes: analysis/measure/op_work.hpp's formulas
// (measure::operator_work_formulas), given to the import by the job (ImportOptions::operator_work), so that
// the importers need none of the analyses. An import without them writes no work rows.
struct OperatorWorkFormulas {
  // Whether NAME ("aten::mm") has a formula: a cheap test before any parsing.
  bool (*has_formula)(std::string_view name) = nullptr;
  // The work of NAME from its args' JSON text ("Input Dims", "Input type", "Concrete Inputs"; empty when not
  // recorded): kCounted with CATEGORY (OpWorkRecord::category), FLOPS and BYTES set, else why not.
  OpWorkStatus (*work)(std::string_view name, std::string_view dims, std::string_view types,
                       std::string_view concrete, std::int64_t& category, double& flops,
                       double& bytes) = nullptr;
  explicit operator bool() const { return has_formula != nullptr && work != nullptr; }
};

// A recorded JSON list (input_dims, input_types) in the one form the tables store it: no whitespace outside
// strings but one space after each comma ("[[16, 559, 1024], []]"), however the trace was indented.
std::string canonical_list(std::string_view text);
// TEXT is its own canonical form (as Kineto writes shapes: "[[2, 3], [3]]"): it can be stored without a copy.
bool is_canonical_list(std::string_view text);

// What to read of a profile's work tables (profiler/work_store.hpp read_work).
struct WorkReadOptions {
  // The ranks whose rows are read; empty: every rank's.
  std::vector<std::int32_t> ranks;
  // Only the counted operators of the lowest rank that has any, and no kernel shares.
  bool lowest_rank_only = false;
  bool kernel_shares = true;  // read kernel_work
  // Also the operators recorded with shapes whose work is undetermined (their input types not recorded: a
  // profiler that records shapes only), of the same ranks: their shapes still show the model.
  bool uncounted_shapes = false;
};

// The rows read (read_work), checked as untrusted input.
struct StoredWork {
  bool has_tables = false;  // the file has op_work and kernel_work (profiles written before them do not)
  bool any_rows = false;    // op_work holds a row of any status (some operator was recorded with shapes)
  std::int64_t nested = 0, unparsable = 0, undetermined = 0;  // op_work rows of those statuses, every rank's
  std::vector<OpWorkRecord> counted;                          // status counted, by id
  std::vector<OpWorkRecord> uncounted;  // status undetermined (WorkReadOptions::uncounted_shapes), by id
  std::vector<KernelWorkRecord> kernel_shares;  // in the table's order
};

}  // namespace meshscope
