#include "profiler/sqlite_util.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
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

// What a connection's statements need from it: the name its messages use, and the work budget.
struct ConnectionState {
  std::filesystem::path path;
  bool read_only = false;
  std::map<std::string, std::optional<std::map<std::string, std::string>>, std::less<>> columns;  // read-only
  std::int64_t budget = 0;  // progress callbacks allowed (0: no limit)
  std::int64_t used = 0;
  bool exhausted = false;
};

namespace {

constexpr int kStepsPerCallback = 10'000;

int on_progress(void* data) {
  auto* state = static_cast<ConnectionState*>(data);
  if (state->budget == 0 || ++state->used <= state->budget) return 0;
  state->exhausted = true;
  return 1;  // interrupts the statement (SQLITE_INTERRUPT)
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

void copy_database(const std::filesystem::path& from, const std::filesystem::path& to,
                   const std::filesystem::path& shown_to) {
  Database source(from, true);
  Database copy(to, false, shown_to);
  sqlite3_backup* backup = sqlite3_backup_init(copy.handle(), "main", source.handle(), "main");
  if (!backup)
    fail("{}: cannot copy {}: {}", shown_to.string(), from.string(), sqlite3_errmsg(copy.handle()));
  const int stepped = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (stepped != SQLITE_DONE)
    fail("{}: cannot copy {}: {}", shown_to.string(), from.string(), sqlite3_errstr(stepped));
}

Affinity affinity_of(std::string_view declared_type) {
  const std::string type = upper(std::string(declared_type));
  if (type.find("INT") != std::string::npos) return Affinity::kInteger;
  if (type.find("CHAR") != std::string::npos || type.find("CLOB") != std::string::npos ||
      type.find("TEXT") != std::string::npos) {
    return Affinity::kText;
  }
  if (type.empty() || type.find("BLOB") != std::string::npos) return Affinity::kBlob;
  if (type.find("REAL") != std::string::npos || type.find("FLOA") != std::string::npos ||
      type.find("DOUB") != std::string::npos) {
    return Affinity::kReal;
  }
  return Affinity::kNumeric;
}

Database::Database(const std::filesystem::path& path, bool read_only, const std::filesystem::path& display)
    : state_(std::make_unique<ConnectionState>()) {
  state_->path = display.empty() ? path : display;
  configure_sqlite_once();
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    fail("{}: cannot open as SQLite database: {}", state_->path.string(), message);
  }
  sqlite3_extended_result_codes(db_, 1);
  state_->read_only = read_only;
  if (read_only) harden();
}

Database Database::from_image(std::span<const unsigned char> image, const std::filesystem::path& display) {
  Database out;
  out.state_ = std::make_unique<ConnectionState>();
  out.state_->path = display;
  configure_sqlite_once();
  if (sqlite3_open_v2(":memory:", &out.db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK)
    fail("{}: cannot open in memory: out of memory", display.string());
  sqlite3_extended_result_codes(out.db_, 1);
  // SQLite frees the copy with the connection; the image itself is the caller's.
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(std::max<std::size_t>(image.size(), 1)));
  if (!copy) fail("{}: cannot hold {} bytes in memory", display.string(), image.size());
  std::copy(image.begin(), image.end(), copy);
  const int taken = sqlite3_deserialize(out.db_, "main", copy, static_cast<sqlite3_int64>(image.size()),
                                        static_cast<sqlite3_int64>(image.size()),
                                        SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (taken != SQLITE_OK)
    fail("{}: cannot open as SQLite database: {}", display.string(), sqlite3_errstr(taken));
  out.state_->read_only = true;
  out.harden(image.size());
  return out;
}

void Database::harden(std::uintmax_t extra_bytes) {
  // Nothing the file's author wrote runs: no views, no triggers, no functions from the schema that are not
  // innocuous, no writes to the schema, no other databases.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db_, SQLITE_LIMIT_SQL_LENGTH, 64 << 10);
  sqlite3_limit(db_, SQLITE_LIMIT_COLUMN, 500);
  sqlite3_limit(db_, SQLITE_LIMIT_EXPR_DEPTH, 100);
  sqlite3_limit(db_, SQLITE_LIMIT_COMPOUND_SELECT, 16);
  sqlite3_limit(db_, SQLITE_LIMIT_VDBE_OP, 50'000);
  sqlite3_limit(db_, SQLITE_LIMIT_FUNCTION_ARG, 8);
  sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db_, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000);
  sqlite3_limit(db_, SQLITE_LIMIT_TRIGGER_DEPTH, 1);
  sqlite3_limit(db_, SQLITE_LIMIT_WORKER_THREADS, 0);
  // Reading a file needs work in proportion to its size; a damaged or hostile one that needs more is given
  // up.
  std::error_code error;
  const char* file = sqlite3_db_filename(db_, "main");
  std::uint64_t bytes = 0;
  if (file && *file) {  // "" for a database in memory
    bytes = std::filesystem::file_size(file, error);
    if (error) bytes = 0;
    const std::uint64_t wal = std::filesystem::file_size(std::string(file) + "-wal", error);
    if (!error) bytes += wal;
  }
  bytes += std::min<std::uintmax_t>(extra_bytes, std::uint64_t{1} << 40);
  const std::int64_t steps = kBaseWork + kWorkPerFileByte * static_cast<std::int64_t>(std::min<std::uint64_t>(
                                                                bytes, std::uint64_t{1} << 40));
  state_->budget = steps / kStepsPerCallback + 1;
  state_->used = 0;
  sqlite3_progress_handler(db_, kStepsPerCallback, on_progress, state_.get());
}

Database::Database() = default;

Database::~Database() {
  close();
}

void Database::close() {
  if (db_) sqlite3_close_v2(db_);
  db_ = nullptr;
}

const std::filesystem::path& Database::path() const {
  static const std::filesystem::path none;
  return state_ ? state_->path : none;
}

Database::Database(Database&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), state_(std::move(other.state_)) {}

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    close();
    db_ = std::exchange(other.db_, nullptr);
    state_ = std::move(other.state_);
  }
  return *this;
}

void Database::exec(std::string_view sql) {
  char* message = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string error = message ? message : "unknown error";
    sqlite3_free(message);
    fail("{}: {}", path().string(), error);
  }
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK) {
    const int code = sqlite3_errcode(db_);
    if ((code & 0xff) == SQLITE_INTERRUPT && state_ && state_->exhausted) {
      fail(
          "{}: reading it took more work than a file of its size can need (damaged or hostile file); gave up",
          path().string());
    }
    fail("{}: {}", path().string(), sqlite3_errmsg(db_));
  }
  return Statement(db_, stmt, state_.get());
}

bool Database::has_table(std::string_view name) {
  Statement s = prepare("SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE");
  s.bind_text(1, name);
  if (!s.step()) return false;
  return s.column_text(0) == "table" && upper(s.column_text(1)).rfind("CREATE VIRTUAL", 0) != 0;
}

std::optional<std::map<std::string, std::string>> Database::table_columns(std::string_view name) {
  if (!state_ || !state_->read_only) return read_table_columns(name);
  if (const auto known = state_->columns.find(name); known != state_->columns.end()) return known->second;
  auto columns = read_table_columns(name);
  state_->columns.emplace(std::string(name), columns);
  return columns;
}

std::optional<std::map<std::string, std::string>> Database::read_table_columns(std::string_view name) {
  {
    Statement s = prepare("SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE");
    s.bind_text(1, name);
    if (!s.step()) return std::nullopt;
    const std::string type = s.column_text(0);
    if (type != "table") {
      fail("{}: {} is a {}, not a table (meshscope reads only tables; a damaged or hostile file?)",
           path().string(), name, type);
    }
    if (upper(s.column_text(1)).rfind("CREATE VIRTUAL", 0) == 0) {
      fail("{}: {} is a virtual table (meshscope reads only ordinary tables)", path().string(), name);
    }
  }
  std::map<std::string, std::string> columns;
  Statement s = prepare(fmt::format("PRAGMA table_xinfo(\"{}\")", name));
  while (s.step()) {
    const std::string column = s.column_text(1);
    const std::int64_t hidden = s.column_int_or(6, 0);
    columns[column] = hidden == 1 || hidden == 2 ? std::string(kComputedColumn) : upper(s.column_text(2));
  }
  return columns;
}

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), state_(other.state_), row_(other.row_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    state_ = other.state_;
    row_ = other.row_;
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
  } else if (value.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    fail("{}: a text of {} bytes is too long to store",
         state_ ? state_->path.string() : std::string("sqlite"), value.size());
  } else if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                               SQLITE_TRANSIENT) != SQLITE_OK) {
    fail("{}: cannot store a text of {} bytes: {}", state_ ? state_->path.string() : std::string("sqlite"),
         value.size(), sqlite3_errmsg(db_));
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
  if (rc == SQLITE_ROW) {
    ++row_;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  const std::string message = sqlite3_errmsg(db_);
  sqlite3_reset(stmt_);
  const std::string name = state_ ? state_->path.string() : std::string("sqlite");
  if ((rc & 0xff) == SQLITE_INTERRUPT && state_ && state_->exhausted) {
    fail("{}: reading it took more work than a file of its size can need (damaged or hostile file); gave up",
         name);
  }
  if ((rc & 0xff) == SQLITE_TOOBIG) {
    fail("{}: a stored value is longer than the {} MiB meshscope reads (damaged or hostile file)", name,
         kMaxValueBytes >> 20);
  }
  fail("{}: {}", name, message);
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  row_ = 0;
}

std::optional<std::int64_t> Statement::integer_value(int index) const {
  sqlite3_value* v = sqlite3_column_value(stmt_, index);
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      return sqlite3_value_int64(v);
    case SQLITE_NULL:
      return std::nullopt;
    case SQLITE_FLOAT: {
      // A whole number stored as REAL reads as that integer; anything else is no integer.
      const double d = sqlite3_value_double(v);
      if (d >= -9.2e18 && d <= 9.2e18 && d == static_cast<double>(static_cast<std::int64_t>(d)))
        return static_cast<std::int64_t>(d);
      break;
    }
    default:
      break;
  }
  // Was read as 0: a kernel of "soon" ns, a stream "abc". The file is someone's: its types are checked.
  const char* table = sqlite3_column_table_name(stmt_, index);
  const char* column = sqlite3_column_name(stmt_, index);
  const char* type = sqlite3_value_type(v) == SQLITE_TEXT   ? "text"
                     : sqlite3_value_type(v) == SQLITE_BLOB ? "a blob"
                                                            : "a fraction";
  fail("{}: {}{}{} row {}: holds {} where an integer belongs (a damaged file?)",
       state_ ? state_->path.string() : std::string("sqlite"), table ? table : "", table ? "." : "",
       column ? column : "?", row_, type);
}

std::int64_t Statement::column_int(int index) const {
  return integer_value(index).value_or(kNull);
}

std::int64_t Statement::column_int_raw(int index) const {
  return sqlite3_column_int64(stmt_, index);
}

std::int64_t Statement::column_int_or(int index, std::int64_t fallback) const {
  return integer_value(index).value_or(fallback);
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
