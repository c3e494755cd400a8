// Reading the work tables (op_work, kernel_work; docs/PROFILE.md "Work per operator") of a profile's file,
// with their columns and values checked as untrusted input. What the rows mean (the measured roofline, the
// workload inference) is analysis/measure/work.hpp's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profiler/work_records.hpp"

namespace meshscope {
namespace sql {
class Database;
}

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

struct StoredWork {
  bool has_tables = false;  // the file has op_work and kernel_work (profiles written before them do not)
  bool any_rows = false;    // op_work holds a row of any status (some operator was recorded with shapes)
  std::int64_t nested = 0, unparsable = 0, undetermined = 0;  // op_work rows of those statuses, every rank's
  std::vector<OpWorkRecord> counted;                          // status counted, by id
  std::vector<OpWorkRecord> uncounted;  // status undetermined (WorkReadOptions::uncounted_shapes), by id
  std::vector<KernelWorkRecord> kernel_shares;  // in the table's order
};

// The work tables of the profile at PATH (a read-only connection of its own). Throws meshscope::Error naming
// the file, table and row when a column is missing or a value is not finite and non-negative.
StoredWork read_work(const std::filesystem::path& path, const WorkReadOptions& options = {});

// The recorded "Input Dims" and "Input type" of one CPU operator (ranges.input_dims, input_types).
struct RecordedShapes {
  std::string input_dims, input_types;  // empty when not recorded
};
// The shapes of the CPU operator whose ranges.id is RANGE_ID in DB, every operator's, with a work formula or
// not; nullopt when none were recorded (or the profile was imported before ranges kept them). One look-up by
// primary key: the Details of a selected operator.
std::optional<RecordedShapes> read_recorded_shapes(sql::Database& db, std::int64_t range_id);
// The same from the profile at PATH, opened read-only on the hardened connection of an untrusted file.
std::optional<RecordedShapes> read_recorded_shapes(const std::filesystem::path& path, std::int64_t range_id);

}  // namespace meshscope
