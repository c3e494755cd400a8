// Thin RAII wrappers over the sqlite3 C API, shared by the writer, the loader and the Nsight importer.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "profiler/records.hpp"

namespace meshscope::sql {

class Statement;

class Database {
 public:
  Database() = default;
  // Opens PATH; throws meshscope::Error naming PATH (or DISPLAY, when given: the file the user knows, such as
  // the profile a temporary file becomes) when it cannot be opened, and in every later message.
  Database(const std::filesystem::path& path, bool read_only, const std::filesystem::path& display = {});
  ~Database();
  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);  // throws Error with the database's message
  Statement prepare(std::string_view sql);
  bool has_table(std::string_view name);
  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }
  void close();

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt, const std::filesystem::path* path)
      : db_(db), stmt_(stmt), path_(path) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binding: index is 1-based as in SQLite. kNull / kNoString bind SQL NULL.
  void bind(int index, std::int64_t value);
  void bind_int(int index, std::int64_t value) { bind(index, value); }
  void bind_string_id(int index, StringId value);
  void bind_text(int index, std::string_view value);  // empty text binds NULL
  void bind_double(int index, double value);
  void bind_null(int index);

  bool step();  // true while a row is available; throws Error on failure
  void run() {  // step once and reset (for INSERT/UPDATE)
    step();
    reset();
  }
  void reset();

  std::int64_t column_int(int index) const;      // 0-based; NULL reads as kNull
  std::int64_t column_int_raw(int index) const;  // for NOT NULL columns: no type check (NULL would read as 0)
  std::int64_t column_int_or(int index, std::int64_t fallback) const;
  double column_double(int index) const;
  std::string column_text(int index) const;  // NULL reads as ""
  bool column_is_null(int index) const;
  int column_count() const;
  sqlite3_stmt* handle() const { return stmt_; }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  const std::filesystem::path* path_ = nullptr;
};

}  // namespace meshscope::sql
