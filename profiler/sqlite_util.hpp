// Thin RAII wrappers over the sqlite3 C API, shared by the writer, the loader and the Nsight importer.
//
// Every SQLite file meshscope reads is someone else's (a profile or an export sent by a colleague), so a
// read-only Database is opened as untrusted: defensive mode, no views, no triggers, trusted_schema off, no
// ATTACH, length and SQL-size limits, and a progress handler that gives up after an amount of work
// proportional to the file's size. Readers then check the shape of each table they read (table_columns()) and
// the values of each row. Only the writer's own temporary file is opened without these guards.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "profiler/records.hpp"

namespace meshscope::sql {

class Statement;
struct ConnectionState;  // the display path and the work budget, at a stable address for Statements

// How table_columns() marks a column computed when read (a generated VIRTUAL column: its expression would
// run).
inline constexpr std::string_view kComputedColumn = "<computed>";

// Limits on an untrusted file: the longest string or blob read (a longer value is an error, not a read of
// gigabytes), and the work allowed per byte of file (SQLite virtual-machine steps) on top of a fixed base.
inline constexpr int kMaxValueBytes = 16 << 20;
inline constexpr std::int64_t kWorkPerFileByte = 64;
inline constexpr std::int64_t kBaseWork = 50'000'000;

class Database {
 public:
  Database();
  // Opens PATH; throws meshscope::Error naming PATH (or DISPLAY, when given: the file the user knows, such as
  // the profile a temporary file becomes) when it cannot be opened, and in every later message. READ_ONLY
  // opens it as untrusted (see above); read-write opens are for meshscope's own files.
  Database(const std::filesystem::path& path, bool read_only, const std::filesystem::path& display = {});
  // A read-only, untrusted connection to a copy of IMAGE, an SQLite file's bytes held in memory (no file
  // system: what the fuzzers read thousands of times a second), named DISPLAY in messages. Throws Error
  // naming DISPLAY when SQLite cannot take the image.
  static Database from_image(std::span<const unsigned char> image, const std::filesystem::path& display);
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Applies the untrusted-file guards to a connection opened read-write: a collector's journaled file (whose
  // WAL only a writable connection can replay), and every file meshscope changes that it did not just create
  // (the summaries written into a copy of someone's profile, a merge's output). The work allowed is in
  // proportion to the file's size plus EXTRA_BYTES (what will be copied in).
  void harden(std::uintmax_t extra_bytes = 0);

  void exec(std::string_view sql);  // throws Error with the database's message
  Statement prepare(std::string_view sql);
  // True when NAME is an ordinary table of the main schema (not a view, not a virtual table).
  bool has_table(std::string_view name);
  // The columns of table NAME (name -> declared type, upper case; kComputedColumn for a column computed when
  // read, whose expression would run) when it is an ordinary table; nullopt when there is no such table.
  // Throws Error naming the file when NAME is a view, a virtual table, an index or a trigger: nothing but
  // declared tables is ever read. A read-only connection looks each table up once (readers check a table
  // before every statement they prepare on it, thousands of times when reading rank by rank).
  std::optional<std::map<std::string, std::string>> table_columns(std::string_view name);
  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const;
  void close();

 private:
  std::optional<std::map<std::string, std::string>> read_table_columns(std::string_view name);

  sqlite3* db_ = nullptr;
  std::unique_ptr<ConnectionState> state_;
};

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt, const ConnectionState* state)
      : db_(db), stmt_(stmt), state_(state) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binding: index is 1-based as in SQLite. kNull / kNoString bind SQL NULL.
  void bind(int index, std::int64_t value);
  void bind_string_id(int index, StringId value);
  void bind_text(int index, std::string_view value);  // empty text binds NULL; throws Error beyond 2 GiB
  void bind_double(int index, double value);
  void bind_null(int index);

  bool step();  // true while a row is available; throws Error on failure
  void run() {  // step once and reset (for INSERT/UPDATE)
    step();
    reset();
  }
  void reset();

  // 0-based; NULL reads as kNull. TEXT, a BLOB or a fraction in the column is an Error naming the file, the
  // table and column, and the row (the statement's row number).
  std::int64_t column_int(int index) const;
  std::int64_t column_int_raw(int index) const;  // for NOT NULL columns: no type check (NULL would read as 0)
  std::int64_t column_int_or(int index, std::int64_t fallback) const;
  double column_double(int index) const;
  std::string column_text(int index) const;  // NULL reads as ""
  bool column_is_null(int index) const;
  int column_type(int index) const { return sqlite3_column_type(stmt_, index); }
  // The column's type and, when it is SQLITE_INTEGER, its value in VALUE: one look-up of the column where
  // column_type + column_int take two (the loaders check every value's type).
  int column_type_and_int(int index, std::int64_t& value) const {
    sqlite3_value* v = sqlite3_column_value(stmt_, index);
    const int type = sqlite3_value_type(v);
    if (type == SQLITE_INTEGER) value = sqlite3_value_int64(v);
    return type;
  }
  int column_count() const;
  sqlite3_stmt* handle() const { return stmt_; }

 private:
  std::optional<std::int64_t> integer_value(int index) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  const ConnectionState* state_ = nullptr;
  std::int64_t row_ = 0;  // rows stepped since the last reset
};

// Copies the SQLite file FROM, page by page, into a new file TO (SQLite's online backup: a consistent copy, a
// WAL's committed pages included, and nothing the file holds is run). FROM is opened read-only as untrusted.
// Throws Error naming FROM or SHOWN_TO (the output the copy becomes).
void copy_database(const std::filesystem::path& from, const std::filesystem::path& to,
                   const std::filesystem::path& shown_to);

// Declared type affinity as SQLite computes it (section 3.1 of "Datatypes In SQLite").
enum class Affinity { kInteger, kText, kBlob, kReal, kNumeric };
Affinity affinity_of(std::string_view declared_type);

}  // namespace meshscope::sql
