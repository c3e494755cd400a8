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
