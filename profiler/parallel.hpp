// parallel_for: the one way the project spreads independent per-rank work over the cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace meshscope {

// Runs BODY(state, i) for every i in [0, COUNT), each exactly once, on THREADS threads (0: one per hardware
// thread), never more than COUNT, the calling thread among them. Each thread makes its own STATE with
// MAKE_STATE() once (scratch buffers reused from item to item). The first exception a BODY throws is rethrown
// here once every thread has stopped taking items.
template <typename MakeState, typename Body>
void parallel_for_with(std::size_t count, unsigned threads, MakeState make_state, Body body) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const auto n = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(count, 1)));
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      auto state = make_state();
      for (std::size_t i = next++; i < count; i = next++) body(state, i);
    } catch (...) {
      next = count;  // the others stop at their next item
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// parallel_for_with without per-thread state: BODY(i).
template <typename Body>
void parallel_for(std::size_t count, unsigned threads, Body body) {
  parallel_for_with(
      count, threads, [] { return 0; }, [&](int&, std::size_t i) { body(i); });
}

}  // namespace meshscope
