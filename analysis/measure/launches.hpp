// Launch links of one rank: which CUDA API call launched each GPU activity (by correlation id), which CPU
// operator issued each API call (by External id, else the innermost operator open on the calling thread),
// and the API calls grouped by thread, so that a view can draw CPU op -> API call -> kernel flows and put
// API calls on their thread's row.
//
// Built once per rank after loading (linear in the rank's events, plus one sort of the correlation ids).
// Every index points into the rank's vectors in profiler/profile.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope::measure {

inline constexpr std::uint32_t kNoIndex = 0xffffffffu;

struct LaunchIndex {
  // Per Rank::activities: the API call (index into Rank::api_calls) whose correlation id it carries.
  std::vector<std::uint32_t> api_of_activity;
  // Per Rank::api_calls: the CPU range (index into Rank::ranges) that issued it: the CPU operator with
  // the same External id, else the innermost CPU operator open on its thread when it started, else the
  // innermost range of any kind open then.
  std::vector<std::uint32_t> op_of_api;
  // Per Rank::api_calls: the activities it launched, as [launched_first[i], launched_first[i + 1]) into
  // `launched` (a graph launch runs many kernels under one correlation id).
  std::vector<std::uint32_t> launched_first;
  std::vector<std::uint32_t> launched;

  // The API calls of one thread, in start order.
  struct Thread {
    std::int64_t pid = 0, tid = 0;
    std::uint32_t track = kNoIndex;    // index into Rank::tracks of the same (pid, tid), if any
    std::vector<std::uint32_t> calls;  // indices into Rank::api_calls
  };
  std::vector<Thread> threads;               // by (pid, tid)
  std::vector<std::uint32_t> thread_of_api;  // per Rank::api_calls: index into threads

  std::span<const std::uint32_t> activities_of(std::uint32_t api) const {
    return {launched.data() + launched_first[api], launched_first[api + 1] - launched_first[api]};
  }
};

// OPERATORS false leaves op_of_api empty (what only follows calls to activities needs no operators).
LaunchIndex index_launches(const Rank& rank, bool operators = true);

// Whether a CUDA/HIP call named NAME blocks its thread until GPU work is done: the stream, device and event
// synchronisations, and the blocking copies.
bool synchronising_call(std::string_view name);

// The API calls issued from inside CPU range RANGE (index into Rank::ranges) or any range nested in it on
// the same thread, in start order, appended to OUT.
void api_calls_inside(const Rank& rank, const LaunchIndex& index, std::uint32_t range,
                      std::vector<std::uint32_t>& out);

}  // namespace meshscope::measure
