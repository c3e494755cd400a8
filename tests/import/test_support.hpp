// Helpers shared by the importer tests: running the meshscope binary, temporary folders, SQL snapshots.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace meshscope::testing {

inline std::filesystem::path traces_dir() {
  return std::filesystem::path(MESHSCOPE_SHARED_DIR) / "traces";
}

// A fresh, empty folder under the build tree, removed when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    path_ = std::filesystem::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    return names;
  }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code;
  std::string out, err;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Runs the meshscope binary with ARGS (already shell-quoted where needed).
inline CommandResult run_meshscope(const std::string& args, const std::filesystem::path& scratch) {
  const auto out = scratch / "stdout.txt", err = scratch / "stderr.txt";
  const std::string command =
      std::string("'") + MESHSCOPE_BINARY + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  CommandResult result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(out), read_text(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return result;
}

// Every row of QUERY as text lines "a|b|c", in the query's order.
inline std::vector<std::string> query_rows(const std::filesystem::path& db_path, const std::string& query) {
  sqlite3* db = nullptr;
  std::vector<std::string> rows;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return {"<cannot open " + db_path.string() + ">"};
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, query.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    rows.push_back(std::string("<sql error: ") + sqlite3_errmsg(db) + ">");
    sqlite3_close(db);
    return rows;
  }
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      if (i) row += '|';
      const auto* text = sqlite3_column_text(stmt, i);
      row += text ? reinterpret_cast<const char*>(text) : "NULL";
    }
    rows.push_back(std::move(row));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

inline std::string query_one(const std::filesystem::path& db_path, const std::string& query) {
  const auto rows = query_rows(db_path, query);
  return rows.empty() ? std::string("<no rows>") : rows.front();
}

// Starts meshscope with ARGS (its output to /dev/null); once READY() holds (at most 60 s), waits DELAY and
// sends SIG. Returns how it ended: the signal, or 128 + its exit code when it exited first.
inline int signal_meshscope_when(const std::vector<std::string>& args, const std::function<bool()>& ready,
                                 int sig, std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(MESHSCOPE_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!ready() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  std::this_thread::sleep_for(delay);
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 128 + WEXITSTATUS(status);
}

}  // namespace meshscope::testing
