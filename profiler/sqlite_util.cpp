#include "profiler/sqlite_util.hpp"

#include <utility>

#include "profiler/error.hpp"

namespace meshscope::sql {
namespace {

// SQLite's default memory statistics take a global mutex on every allocation; meshscope needs neither them
// nor serialized connections (each connection is used by one thread at a time). Must run before the first
// open.
void configure_sqlite_once() {
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    return true;
  }();
  (void)configured;
}

}  // namespace

Database::Database(const std::filesystem::path& path, bool read_only, const std::filesystem::path& display)
    : path_(display.empty() ? path : display) {
  configure_sqlite_once();
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    fail("{}: cannot open as SQLite database: {}", path_.string(), message);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() {
  close();
}

void Database::close() {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void Database::exec(std::string_view sql) {
  char* message = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string error = message ? message : "unknown error";
    sqlite3_free(message);
    fail("{}: {}", path_.string(), error);
  }
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK) {
    fail("{}: {}", path_.string(), sqlite3_errmsg(db_));
  }
  return Statement(db_, stmt, &path_);
}

bool Database::has_table(std::string_view name) {
  Statement s = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  s.bind_text(1, name);
  return s.step();
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), path_(other.path_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    path_ = other.path_;
  }
  return *this;
}

void Statement::bind(int index, std::int64_t value) {
  if (value == kNull) {
    sqlite3_bind_null(stmt_, index);
  } else {
    sqlite3_bind_int64(stmt_, index, value);
  }
}

void Statement::bind_string_id(int index, StringId value) {
  if (value == kNoString) {
    sqlite3_bind_null(stmt_, index);
  } else {
    sqlite3_bind_int64(stmt_, index, value);
  }
}

void Statement::bind_text(int index, std::string_view value) {
  if (value.empty()) {
    sqlite3_bind_null(stmt_, index);
  } else {
    sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  }
}

void Statement::bind_double(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
}
void Statement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string message = sqlite3_errmsg(db_);
  sqlite3_reset(stmt_);
  fail("{}: {}", path_ ? path_->string() : std::string("sqlite"), message);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
}

std::int64_t Statement::column_int(int index) const {
  if (sqlite3_column_type(stmt_, index) == SQLITE_NULL) return kNull;
  return sqlite3_column_int64(stmt_, index);
}

std::int64_t Statement::column_int_raw(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

std::int64_t Statement::column_int_or(int index, std::int64_t fallback) const {
  if (sqlite3_column_type(stmt_, index) == SQLITE_NULL) return fallback;
  return sqlite3_column_int64(stmt_, index);
}

double Statement::column_double(int index) const {
  return sqlite3_column_double(stmt_, index);
}

std::string Statement::column_text(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  if (!text) return {};
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index)));
}

bool Statement::column_is_null(int index) const {
  return sqlite3_column_type(stmt_, index) == SQLITE_NULL;
}
int Statement::column_count() const {
  return sqlite3_column_count(stmt_);
}

}  // namespace meshscope::sql
