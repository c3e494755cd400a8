#include "profiler/work_store.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "profiler/error.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope {
namespace {

using schema::KernelWork;
using schema::OpWork;

bool finite_amount(double v) {
  return std::isfinite(v) && v >= 0;
}

StringId string_id(const sql::Statement& s, int column) {
  return static_cast<StringId>(std::max<std::int64_t>(0, s.column_int(column)));
}

}  // namespace

StoredWork read_work(const std::filesystem::path& path, const WorkReadOptions& options) {
  StoredWork out;
  sql::Database db(path, true);
  const auto op_columns = db.table_columns("op_work");
  const auto kernel_columns = db.table_columns("kernel_work");
  if (!op_columns || !kernel_columns) return out;
  // Every column the schema declares (work tables have had them all since they were added).
  for (const schema::Column& c : OpWork::kColumns) {
    if (!op_columns->contains(c.name)) fail("{}: table op_work has no column {}", path.string(), c.name);
  }
  for (const schema::Column& c : KernelWork::kColumns) {
    if (!kernel_columns->contains(c.name))
      fail("{}: table kernel_work has no column {}", path.string(), c.name);
  }
  out.has_tables = true;
  // The rows of ranks not asked for are left out by SQLite.
  std::string ranks_only;
  if (!options.ranks.empty()) {
    std::string list;
    for (const std::int32_t r : options.ranks) list += fmt::format("{}{}", list.empty() ? "" : ", ", r);
    ranks_only = fmt::format(" AND rank IN ({})", list);
  }
  auto bad = [&](std::string_view table, std::int64_t row, std::string_view problem) {
    fail("{}: {} row {}: {}", path.string(), table, row, problem);
  };
  // A row's rank (a 32-bit one, else it is no rank of the profile) and its amounts, checked.
  auto rank_of = [&](const sql::Statement& s, int column, std::string_view table, std::int64_t row) {
    const std::int64_t rank = s.column_int(column);
    if (rank < INT32_MIN || rank > INT32_MAX) bad(table, row, "its rank is not in the profile");
    return static_cast<std::int32_t>(rank);
  };
  auto check_amounts = [&](double flops, double bytes, std::string_view table, std::int64_t row) {
    if (!finite_amount(flops) || !finite_amount(bytes))
      bad(table, row, "flops and bytes must be finite and not negative");
  };

  {
    sql::Statement s = db.prepare("SELECT status, COUNT(*) FROM op_work GROUP BY status");
    while (s.step()) {
      const std::int64_t status = s.column_int(0), n = s.column_int(1);
      out.any_rows = true;
      if (status == static_cast<std::int64_t>(OpWorkStatus::kNested)) out.nested += n;
      if (status == static_cast<std::int64_t>(OpWorkStatus::kUnparsable)) out.unparsable += n;
      if (status == static_cast<std::int64_t>(OpWorkStatus::kUndetermined)) out.undetermined += n;
    }
  }
  {
    const std::string statuses =
        options.uncounted_shapes ? fmt::format("status IN ({}, {})", static_cast<int>(OpWorkStatus::kCounted),
                                               static_cast<int>(OpWorkStatus::kUndetermined))
                                 : fmt::format("status = {}", static_cast<int>(OpWorkStatus::kCounted));
    sql::Statement s = db.prepare(
        schema::select_sql<OpWork>() + " WHERE " + statuses + ranks_only +
        std::string(options.lowest_rank_only
                        ? " AND rank = (SELECT min(rank) FROM op_work WHERE " + statuses + ranks_only + ")"
                        : "") +
        " ORDER BY id");
    while (s.step()) {
      OpWorkRecord op;
      op.id = s.column_int(OpWork::id);
      op.rank = rank_of(s, OpWork::rank, "op_work", op.id);
      op.external_id = s.column_int(OpWork::external_id);
      op.name = string_id(s, OpWork::name);
      op.input_dims = string_id(s, OpWork::input_dims);
      op.input_types = string_id(s, OpWork::input_types);
      op.pid = s.column_int(OpWork::pid);
      op.tid = s.column_int(OpWork::tid);
      if (s.column_int(OpWork::status) != static_cast<std::int64_t>(OpWorkStatus::kCounted)) {
        op.status = OpWorkStatus::kUndetermined;
        out.uncounted.push_back(op);
        continue;
      }
      op.status = OpWorkStatus::kCounted;
      op.category = s.column_int(OpWork::category);
      op.flops = s.column_double(OpWork::flops);
      op.bytes = s.column_double(OpWork::bytes);
      check_amounts(op.flops, op.bytes, "op_work", op.id);
      op.kernels = std::max<std::int64_t>(0, s.column_int_or(OpWork::kernels, 0));
      op.kernel_ns = std::max<std::int64_t>(0, s.column_int_or(OpWork::kernel_ns, 0));
      out.counted.push_back(op);
    }
  }
  if (options.kernel_shares && !options.lowest_rank_only) {
    sql::Statement s = db.prepare(schema::select_sql<KernelWork>() +
                                  (ranks_only.empty() ? std::string() : " WHERE " + ranks_only.substr(5)));
    while (s.step()) {
      KernelWorkRecord k;
      k.activity_id = s.column_int(KernelWork::activity_id);
      k.rank = rank_of(s, KernelWork::rank, "kernel_work", k.activity_id);
      k.op_id = s.column_int(KernelWork::op_id);
      k.flops = s.column_double(KernelWork::flops);
      k.bytes = s.column_double(KernelWork::bytes);
      check_amounts(k.flops, k.bytes, "kernel_work", k.activity_id);
      out.kernel_shares.push_back(k);
    }
  }
  return out;
}

std::optional<RecordedShapes> read_recorded_shapes(const std::filesystem::path& path, std::int64_t range_id) {
  sql::Database db(path, /*read_only=*/true);
  return read_recorded_shapes(db, range_id);
}

std::optional<RecordedShapes> read_recorded_shapes(sql::Database& db, std::int64_t range_id) {
  const auto columns = db.table_columns("ranges");
  if (!columns || !columns->contains("input_dims") || !columns->contains("input_types")) return std::nullopt;
  sql::Statement s = db.prepare(
      "SELECT (SELECT value FROM strings WHERE id = r.input_dims), "
      "(SELECT value FROM strings WHERE id = r.input_types) FROM ranges r "
      "WHERE r.id = ?1 AND r.input_dims IS NOT NULL");
  s.bind(1, range_id);
  if (!s.step()) return std::nullopt;
  return RecordedShapes{s.column_text(0), s.column_text(1)};
}

}  // namespace meshscope
