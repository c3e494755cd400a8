// parallel_for (profiler/parallel.hpp), which the analyses and the view use to spread ranks over the cores:
// every item once, per-thread state reused, a thrown error carried back to the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "profiler/parallel.hpp"

namespace meshscope {
namespace {

TEST(ParallelFor, EveryItemRunsExactlyOnceWhateverTheThreads) {
  for (unsigned threads : {0u, 1u, 2u, 7u, 64u}) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
      std::vector<std::atomic<int>> runs(count);
      parallel_for(count, threads, [&](std::size_t i) { ++runs[i]; });
      for (std::size_t i = 0; i < count; ++i)
        EXPECT_EQ(runs[i].load(), 1) << threads << " threads, item " << i;
    }
  }
}

TEST(ParallelFor, EachThreadMakesItsStateOnce) {
  std::atomic<int> made{0};
  std::atomic<int> items{0};
  parallel_for_with(
      100, 4,
      [&] {
        ++made;
        return std::vector<int>();
      },
      [&](std::vector<int>& scratch, std::size_t i) {
        scratch.push_back(static_cast<int>(i));  // the same vector from item to item on a thread
        ++items;
      });
  EXPECT_EQ(items.load(), 100);
  EXPECT_GE(made.load(), 1);
  EXPECT_LE(made.load(), 4);
}

TEST(ParallelFor, AnErrorReachesTheCallerAndStopsTheRest) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(10'000, 3,
                            [&](std::size_t i) {
                              ++ran;
                              if (i == 5) throw std::runtime_error("rank 5 is damaged");
                              std::this_thread::sleep_for(std::chrono::microseconds(200));
                            }),
               std::runtime_error);
  // The others stopped taking items (all of them would have taken about 0.7 s).
  EXPECT_LT(ran.load(), 1'000);
}

}  // namespace
}  // namespace meshscope
