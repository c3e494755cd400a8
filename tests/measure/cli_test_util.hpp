// Running the meshscope executable from the measure tests: its exit status, standard output and standard
// error, each test in a scratch folder of its own.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace meshscope::test {

inline std::string slurp(const std::filesystem::path& path) {
  std::string text;
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) text.append(buffer.data(), n);
    std::fclose(f);
  }
  return text;
}

struct CliResult {
  int status = -1;  // the exit status (-1: killed by a signal)
  std::string out, err;
};

// Runs `meshscope ARGUMENTS` with its output in DIR, with ENVIRONMENT ("NAME=value ...") set.
inline CliResult run_cli(const std::string& arguments, const std::filesystem::path& dir,
                         const std::string& environment = "") {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string command = environment + " " + std::string(MESHSCOPE_BINARY) + " " + arguments + " >'" +
                              out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  CliResult r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// Runs it expecting success (a test failure naming the arguments and standard error otherwise); its standard
// output.
inline std::string run_cli_ok(const std::string& arguments, const std::filesystem::path& dir,
                              const std::string& environment = "") {
  const CliResult r = run_cli(arguments, dir, environment);
  EXPECT_EQ(r.status, 0) << arguments << ": " << r.err;
  return r.out;
}

}  // namespace meshscope::test
