// Running the meshscope executable from a test: exit status, standard output and standard error, with
// XDG_CACHE_HOME pointed at a folder of the test's own (where traces given to a command are imported).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace meshscope::test {

struct CommandRun {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `meshscope ARGS` (ARGS quoted as a shell would need) with XDG_CACHE_HOME=CACHE; the captured output
// goes to files beside CACHE.
inline CommandRun meshscope(const std::string& args, const std::filesystem::path& cache) {
  const std::filesystem::path out = cache.parent_path() / "stdout.txt",
                              err = cache.parent_path() / "stderr.txt";
  const std::string command = "XDG_CACHE_HOME='" + cache.string() + "' '" + std::string(MESHSCOPE_BINARY) +
                              "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

}  // namespace meshscope::test
