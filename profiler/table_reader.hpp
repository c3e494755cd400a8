// The validating reader every load of a profile's tables goes through (profile_scan.cpp, profile.cpp):
// tables, never views; columns by name with their types checked; every value checked as it is taken. Inside
// the profiler only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/records.hpp"
#include "profiler/schema_tables.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope::load {

using sql::Affinity;

inline const char* affinity_name(sql::Affinity a) {
  switch (a) {
    case Affinity::kInteger:
      return "INTEGER";
    case Affinity::kText:
      return "TEXT";
    case Affinity::kBlob:
      return "BLOB";
    case Affinity::kReal:
      return "REAL";
    case Affinity::kNumeric:
      return "NUMERIC";
  }
  return "?";
}

// One table as Profile::load reads it. Before reading: the table must be an ordinary table (never a view: its
// SQL would run), the wanted columns are found by name and their declared types checked; a wanted column the
// profile lacks reads as NULL when optional (profiles of another schema_version load what meshscope knows).
// While reading: every value is checked as it is taken (type, range), and a bad one is refused with one line
// naming the file, the table and the row (its id, or its position).
class TableReader {
 public:
  // TABLE's columns as schema_tables.hpp describes them, selected in that order: read column Activities::rank
  // as integer(Activities::rank).
  // UNREAD columns are selected as NULL (SQLite then does not decode them): for loads that do not keep them.
  template <typename Table>
  static TableReader of(sql::Database& db, bool required_table, const char* key_column = "id",
                        std::string_view tail = {}, std::span<const int> unread = {}) {
    return TableReader(db, Table::kName, Table::kColumns, required_table, key_column, tail, unread);
  }

  TableReader(sql::Database& db, const char* table, std::span<const schema::Column> columns,
              bool required_table, const char* key_column = "id", std::string_view tail = {},
              std::span<const int> unread = {})
      : path_(db.path()), table_(table), columns_(columns) {
    const auto declared = db.table_columns(table);
    if (!declared) {
      if (required_table) fail("{}: not a meshscope profile (no {} table)", path_.string(), table);
      return;
    }
    std::string sql = "SELECT ";
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const schema::Column& c = columns_[i];
      if (i) sql += ", ";
      if (std::find(unread.begin(), unread.end(), static_cast<int>(i)) != unread.end()) {
        sql += "NULL";
        continue;
      }
      const auto found = declared->find(c.name);
      if (found == declared->end()) {
        if (c.required) {
          fail("{}: table {} has no column {} (not a profile this meshscope can read)", path_.string(), table,
               c.name);
        }
        sql += "NULL";
        continue;
      }
      if (found->second == sql::kComputedColumn) {
        fail("{}: {}.{} is a computed column (meshscope reads only stored values; a hostile file?)",
             path_.string(), table, c.name);
      }
      const Affinity affinity = sql::affinity_of(found->second);
      if (affinity != c.affinity) {
        fail("{}: {}.{} is declared {}, not {} (a damaged or hostile file?)", path_.string(), table, c.name,
             found->second.empty() ? std::string("without a type") : found->second,
             affinity_name(c.affinity));
      }
      sql += fmt::format("\"{}\"", c.name);
      if (key_column && std::string_view(c.name) == key_column) key_ = static_cast<int>(i);
    }
    sql += fmt::format(" FROM \"{}\"", table);
    if (!tail.empty()) sql += fmt::format(" {}", tail);
    statement_ = db.prepare(sql);
    present_ = true;
  }

  bool present() const { return present_; }
  bool step() {
    if (!present_ || !statement_.step()) return false;
    ++row_;
    return true;
  }

  [[noreturn]] void bad(int i, std::string_view problem) const {
    const std::string row =
        key_ >= 0 && statement_.column_type(key_) == SQLITE_INTEGER
            ? fmt::format("{} {}={}", table_, columns_[key_].name, statement_.column_int(key_))
            : fmt::format("{} row {}", table_, row_);
    fail("{}: {}: {} {}", path_.string(), row, columns_[i].name, problem);
  }
  [[noreturn]] void bad_row(std::string_view problem) const {
    const std::string row =
        key_ >= 0 && statement_.column_type(key_) == SQLITE_INTEGER
            ? fmt::format("{} {}={}", table_, columns_[key_].name, statement_.column_int(key_))
            : fmt::format("{} row {}", table_, row_);
    fail("{}: {}: {}", path_.string(), row, problem);
  }

  // An integer, or kNull for NULL (an absent optional column reads as NULL).
  std::int64_t integer_or_null(int i) const {
    std::int64_t value = 0;
    const int type = statement_.column_type_and_int(i, value);
    if (type == SQLITE_INTEGER) return value;
    if (type == SQLITE_NULL) return kNull;
    bad(i, "is not an integer");
  }
  std::int64_t integer(int i) const {
    const std::int64_t v = integer_or_null(i);
    if (v == kNull) bad(i, "is NULL");
    return v;
  }
  std::int64_t in_range(int i, std::int64_t lo, std::int64_t hi, const char* what) const {
    const std::int64_t v = integer(i);
    if (v < lo || v > hi) bad(i, fmt::format("{} is not {}", v, what));
    return v;
  }
  std::int32_t rank(int i) const {
    return static_cast<std::int32_t>(in_range(i, 0, kMaxRank, "a rank (0 to 1000000)"));
  }
  std::int32_t int32(int i) const {
    return static_cast<std::int32_t>(in_range(i, INT32_MIN, INT32_MAX, "a 32-bit integer"));
  }
  TimeNs time(int i) const {
    const std::int64_t v = integer(i);
    if (!time_in_range(v)) bad(i, fmt::format("{} is out of range (times lie within +-2^62 ns)", v));
    return v;
  }
  TimeNs time_or_null(int i) const { return statement_.column_type(i) == SQLITE_NULL ? kNull : time(i); }
  // A [start, end] pair: both times in range, end not before start.
  std::pair<TimeNs, TimeNs> interval(int start, int end) const {
    const TimeNs a = time(start), b = time(end);
    if (b < a) bad(end, fmt::format("{} is before {} {}", b, columns_[start].name, a));
    return {a, b};
  }
  StringId string_id(int i, std::int64_t bound) const {
    const std::int64_t v = integer_or_null(i);
    if (v == kNull) return kNoString;
    if (v < 0 || v >= bound) bad(i, fmt::format("{} is not the id of a string in the profile", v));
    return static_cast<StringId>(v);
  }
  std::string text(int i) const {
    const int type = statement_.column_type(i);
    if (type == SQLITE_NULL) return {};
    if (type != SQLITE_TEXT) bad(i, "is not text");
    return statement_.column_text(i);
  }

 private:
  const std::filesystem::path& path_;
  const char* table_;
  std::span<const schema::Column> columns_;
  sql::Statement statement_;
  bool present_ = false;
  int key_ = -1;
  std::int64_t row_ = 0;
};

inline std::vector<std::int32_t> member_ranks(const TableReader& t, int column, std::string_view text) {
  std::vector<std::int32_t> ranks;
  std::string bad;
  if (!parse_rank_list(text, ranks, &bad)) t.bad(column, fmt::format("holds {}, which is not a rank", bad));
  return ranks;
}

}  // namespace meshscope::load
