// What the compare tests share: running the meshscope binary and importing a trace once per test process.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace meshscope::compare::test {

struct Result {
  int status = -1;
  std::string out;
};

// Runs the meshscope binary with ARGS; stdout (and stderr when MERGE) captured.
inline Result run(const std::string& args, bool merge = false) {
  const std::string command =
      std::string("\"") + MESHSCOPE_BINARY + "\" " + args + (merge ? " 2>&1" : " 2>/dev/null");
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Imports INPUT once per test process into a profile named after NAME (the file name carries the pid: ctest
// may run tests in parallel).
inline std::filesystem::path imported(const std::string& name, const std::filesystem::path& input) {
  static std::map<std::string, std::filesystem::path> cache;  // by input
  auto it = cache.find(input.string());
  if (it != cache.end()) return it->second;
  const std::filesystem::path dir = std::filesystem::path(MESHSCOPE_TEST_TMP) / "compare";
  std::filesystem::create_directories(dir);
  // The input's hash keeps two inputs given the same NAME apart.
  const std::filesystem::path out =
      dir / (name + "-" + std::to_string(std::hash<std::string>{}(input.string())) + "-" +
             std::to_string(getpid()) + ".msdb");
  const Result r = run("import \"" + input.string() + "\" -o \"" + out.string() + "\"", true);
  EXPECT_EQ(r.status, 0) << r.out;
  return cache.emplace(input.string(), out).first->second;
}

// A trace of ../shared/traces (RELATIVE), imported once.
inline std::filesystem::path shared_trace(const std::string& name, const std::string& relative) {
  return imported(name, std::filesystem::path(MESHSCOPE_SHARED_DIR) / "traces" / relative);
}

}  // namespace meshscope::compare::test
