// Helpers shared by the collector tests: running a helper process with a changed environment, fresh scratch
// folders, finding the per-rank profiles a collector wrote, and one-value SQL queries.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "profiler/sqlite_util.hpp"

namespace meshscope::test {

namespace fs = std::filesystem;

struct ProcessResult {
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  std::string output;  // stdout and stderr
};

// Runs ARGV with ENV set on top of this process's environment (an empty value unsets the variable).
// WHILE_RUNNING, when given, is called with the child's pid and the path of its output file before waiting
// for it.
inline ProcessResult run_process(const std::vector<std::string>& argv,
                                 const std::map<std::string, std::string>& env,
                                 const std::function<void(pid_t, const fs::path&)>& while_running = {}) {
  static int counter = 0;
  const fs::path out = fs::path(MESHSCOPE_TEST_TMP) /
                       ("process-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".out");
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (const auto& [name, value] : env) {
      if (value.empty()) {
        ::unsetenv(name.c_str());
      } else {
        ::setenv(name.c_str(), value.c_str(), 1);
      }
    }
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (while_running) while_running(pid, out);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ProcessResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  result.output = text.str();
  return result;
}

// Waits until the file at PATH contains TEXT (or TIMEOUT passes).
inline bool wait_for_text(const fs::path& path, const std::string& text,
                          std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(path);
    std::stringstream content;
    content << in.rdbuf();
    if (content.str().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// An environment with no launcher's rank identity and no collector set: a test adds what it needs.
inline std::map<std::string, std::string> clean_env() {
  return {{"MESHSCOPE_FLUSH_MS", "100"},
          {"RANK", ""},
          {"LOCAL_RANK", ""},
          {"WORLD_SIZE", ""},
          {"SLURM_PROCID", ""},
          {"OMPI_COMM_WORLD_RANK", ""},
          {"MESHSCOPE_RANK", ""},
          {"NCCL_PROFILER_PLUGIN", ""},
          {"CUDA_INJECTION64_PATH", ""},
          {"NVTX_INJECTION64_PATH", ""},
          {"MESHSCOPE_OUTPUT_DIR", ""},
          {"MESHSCOPE_HOSTNAME", ""}};
}

inline fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::path(MESHSCOPE_TEST_TMP) / "collectors" / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Files in DIR whose names start with PREFIX and contain PART, leaving out SQLite's -wal and -shm files.
inline std::vector<fs::path> files_in(const fs::path& dir, const std::string& prefix,
                                      const std::string& part = "") {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.find(part) == std::string::npos) continue;
    if (name.size() > 4 && (name.ends_with("-wal") || name.ends_with("-shm"))) continue;
    found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

inline std::int64_t query_int(const fs::path& db, const std::string& sql) {
  meshscope::sql::Database d(db, true);
  auto s = d.prepare(sql);
  return s.step() ? s.column_int(0) : -1;
}

inline std::string query_text(const fs::path& db, const std::string& sql) {
  meshscope::sql::Database d(db, true);
  auto s = d.prepare(sql);
  return s.step() ? s.column_text(0) : std::string("<no row>");
}

// Every row of SQL, columns joined by '|', rows by '\n'.
inline std::string query_rows(const fs::path& db, const std::string& sql) {
  meshscope::sql::Database d(db, true);
  auto s = d.prepare(sql);
  std::string out;
  while (s.step()) {
    for (int i = 0; i < s.column_count(); ++i) {
      if (i) out += '|';
      out += s.column_is_null(i) ? std::string("NULL") : s.column_text(i);
    }
    out += '\n';
  }
  return out;
}

}  // namespace meshscope::test
