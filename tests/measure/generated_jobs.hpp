// Jobs the generator (tools/gen_job) writes, for the tests of reading a profile's ranks in parts.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "analysis/measure/summary.hpp"
#include "collectors/import/import.hpp"
#include "job/summaries.hpp"

namespace meshscope::test {

// A scratch path of this test process: MESHSCOPE_TEST_TMP/NAME-PID.
inline std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
}

// A generated job of RANKS ranks as gzipped Kineto traces, imported and summarised as `meshscope import`
// does: each rank's rows together. An empty path when the generator failed.
inline std::filesystem::path import_generated_job(const std::string& name, int ranks, int events_per_rank) {
  namespace fs = std::filesystem;
  const fs::path traces = scratch(name + "-traces");
  const fs::path p = scratch(name) += ".msdb";
  fs::remove_all(traces);
  fs::remove(p);
  const std::string command =
      fmt::format("'{}' --ranks {} --events-per-rank {} --format kineto-gz -q -o '{}' > /dev/null",
                  MESHSCOPE_GEN_JOB, ranks, events_per_rank, traces.string());
  if (std::system(command.c_str()) != 0) return fs::path();
  import_traces({traces}, p);
  add_summaries(p);
  return p;
}

}  // namespace meshscope::test
