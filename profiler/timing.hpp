// Phase timing for performance work: with MESHSCOPE_TIMING=1 in the environment, phases print their wall time
// to stderr. Costs one getenv per process otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace meshscope {

inline bool timing_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("MESHSCOPE_TIMING");
    return value && *value && *value != '0';
  }();
  return enabled;
}

class PhaseTimer {
 public:
  explicit PhaseTimer(const char* name) : name_(name), start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    if (!timing_enabled()) return;
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    std::fprintf(stderr, "[timing] %-28s %9.3f ms\n", name_,
                 std::chrono::duration<double, std::milli>(elapsed).count());
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  const char* name_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace meshscope
