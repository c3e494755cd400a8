// The main() of the benchmarks that read a large input they do not make themselves (a generated profile or
// job): a clear message saying how to make it when it is missing, then Google Benchmark as usual.
#pragma once

#include <benchmark/benchmark.h>
#include <sched.h>

#include <cstdio>
#include <filesystem>

namespace meshscope::bench {

// The cores this process may run on (what `taskset -c 0,1` leaves it): the threads a benchmark gives its
// pass.
inline unsigned cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return static_cast<unsigned>(CPU_COUNT(&set));
}

// Google Benchmark's own main(): runs the registered benchmarks.
inline int run_benchmarks(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// Runs the registered benchmarks when INPUT exists; otherwise prints "NAME: INPUT does not exist; generate it
// with\n  GENERATE INPUT\nor point ENV_VAR at WHAT" and returns 1.
inline int run_on_input(int argc, char** argv, const char* name, const std::filesystem::path& input,
                        const char* generate, const char* env_var, const char* what) {
  std::error_code error;
  if (!std::filesystem::exists(input, error)) {
    std::fprintf(stderr, "%s: %s does not exist; generate it with\n  %s %s\nor point %s at %s\n", name,
                 input.c_str(), generate, input.c_str(), env_var, what);
    return 1;
  }
  return run_benchmarks(argc, argv);
}

}  // namespace meshscope::bench
