// A benchmark's input profile loaded and analysed once per process, on every core the benchmark may use: what
// the analyses that start from a measured profile (critical paths, launches, replay) are timed on.
#pragma once

#include <filesystem>
#include <optional>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "tests/bench/bench_main.hpp"

namespace meshscope::bench {

struct Analysed {
  Profile profile;
  measure::Analysis analysis;
};

// PATH loaded with LOAD and analysed, the first time; the same object after (a benchmark reads one input).
inline const Analysed& analysed(const std::filesystem::path& path, const LoadOptions& load = {}) {
  static std::optional<Analysed> held;
  if (!held) {
    held.emplace(Analysed{Profile::load(path, load), {}});
    measure::Options options;
    options.threads = cores();
    held->analysis = measure::analyze(held->profile, options);
  }
  return *held;
}

}  // namespace meshscope::bench
