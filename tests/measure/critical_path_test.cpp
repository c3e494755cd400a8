// Critical path on small profiles whose path can be worked out by hand (times in µs, written as ns × 1000).
#include "analysis/measure/critical_path.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "tests/measure/profile_builder.hpp"

namespace meshscope::measure {
namespace {

using test::ProfileBuilder;
using ::testing::HasSubstr;

constexpr TimeNs us = 1000;

TimeNs kind_ns(const StepPath& p, PathKind k) {
  return p.by_kind[static_cast<std::size_t>(k)];
}

TimeNs total(const StepPath& p) {
  return std::accumulate(p.by_kind.begin(), p.by_kind.end(), TimeNs{0});
}

// The segments tile the window: contiguous, in time order, from start to end.
void expect_tiles(const StepPath& p) {
  ASSERT_FALSE(p.segments.empty());
  EXPECT_EQ(p.segments.front().start_ns, p.start_ns);
  EXPECT_EQ(p.segments.back().end_ns, p.end_ns);
  for (std::size_t i = 1; i < p.segments.size(); ++i)
    EXPECT_EQ(p.segments[i].start_ns, p.segments[i - 1].end_ns);
  EXPECT_EQ(total(p), p.length_ns());
}

const StepPath& only_step(const CriticalPaths& cp, std::size_t rank = 0) {
  EXPECT_EQ(cp.ranks.at(rank).steps.size(), 1u);
  return cp.ranks.at(rank).steps.at(0);
}

TEST(CriticalPath, GpuBoundStepIsItsKernelsAfterTheFirstLaunch) {
  ProfileBuilder b("cp_gpu");
  b.rank(0);
  b.step(0, 1, 0, 100 * us, 1);
  b.range(0, 1, RangeKind::kCpuOp, 5 * us, 70 * us, "aten::forward");
  b.launch(0, 1, 10 * us, 20 * us, 7, 30 * us, 300 * us, "k1");
  b.launch(0, 1, 30 * us, 40 * us, 7, 300 * us, 600 * us, "k2");
  b.launch(0, 1, 50 * us, 60 * us, 7, 600 * us, 900 * us, "k3");
  const Profile p = b.finish();
  const CriticalPaths cp = critical_paths(p, analyze(p));
  const StepPath& s = only_step(cp);
  EXPECT_EQ(s.start_ns, 0);
  EXPECT_EQ(s.end_ns, 900 * us);
  expect_tiles(s);
  EXPECT_EQ(kind_ns(s, PathKind::kCompute), 870 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kLaunchDelay), 10 * us);  // k1's call ended at 20, k1 started at 30
  EXPECT_EQ(kind_ns(s, PathKind::kRuntime), 10 * us);      // k1's launch call
  EXPECT_EQ(kind_ns(s, PathKind::kCpu), 10 * us);          // before the first call
  EXPECT_EQ(kind_ns(s, PathKind::kQueue), 0);
  ASSERT_FALSE(s.top.empty());
  EXPECT_EQ(s.top[0].kind, PathKind::kCompute);
  EXPECT_EQ(s.top[0].ns, 300 * us);
  EXPECT_FALSE(cp.ranks[0].per_stream);
}

TEST(CriticalPath, CpuBoundStepIsTheThread) {
  ProfileBuilder b("cp_cpu");
  b.rank(0);
  b.step(0, 1, 0, 200 * us, 1);
  b.range(0, 1, RangeKind::kCpuOp, 20 * us, 90 * us, "aten::slow_python_thing");
  b.launch(0, 1, 0, 10 * us, 7, 15 * us, 20 * us, "k1");
  b.launch(0, 1, 100 * us, 110 * us, 7, 115 * us, 120 * us, "k2");
  const Profile p = b.finish();
  const CriticalPaths cp = critical_paths(p, analyze(p));
  const StepPath& s = only_step(cp);
  EXPECT_EQ(s.end_ns, 200 * us);
  expect_tiles(s);
  EXPECT_EQ(kind_ns(s, PathKind::kCpu), 180 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kRuntime), 20 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kCompute), 0);
  // The CPU time between the calls is attributed to the operator open then (its end is 90: [90, 100) is the
  // step itself, reported without a name).
  bool found = false;
  for (const auto& c : s.top) {
    if (c.kind == PathKind::kCpu && p.str(c.name) == "aten::slow_python_thing") {
      found = true;
      EXPECT_EQ(c.ns, 70 * us);
    }
  }
  EXPECT_TRUE(found);
}

TEST(CriticalPath, SynchronisationHandsThePathToTheGpuAndBack) {
  ProfileBuilder b("cp_sync");
  b.rank(0);
  b.step(0, 1, 0, 550 * us, 1);
  b.launch(0, 1, 0, 10 * us, 7, 20 * us, 500 * us, "k1");
  b.api(0, 1, 30 * us, 510 * us, "cudaStreamSynchronize");
  b.launch(0, 1, 520 * us, 530 * us, 7, 540 * us, 600 * us, "k2");
  const Profile p = b.finish();
  const CriticalPaths cp = critical_paths(p, analyze(p));
  const StepPath& s = only_step(cp);
  EXPECT_EQ(s.end_ns, 600 * us);
  expect_tiles(s);
  EXPECT_EQ(kind_ns(s, PathKind::kCompute), 540 * us);     // k1 480 + k2 60
  EXPECT_EQ(kind_ns(s, PathKind::kLaunchDelay), 20 * us);  // k1 10 + k2 10
  EXPECT_EQ(kind_ns(s, PathKind::kRuntime), 20 * us);      // both launch calls
  EXPECT_EQ(kind_ns(s, PathKind::kSync), 10 * us);         // k1 ended at 500, the sync returned at 510
  EXPECT_EQ(kind_ns(s, PathKind::kCpu), 10 * us);          // 510 .. 520
}

TEST(CriticalPath, CollectiveWaitIsAttributedToTheLastRank) {
  ProfileBuilder b("cp_coll");
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  for (std::int32_t r = 0; r < 2; ++r) {
    b.rank(r, 2);
    b.step(r, 1, 0, 200 * us, 1);
  }
  const std::int64_t k0 = b.launch(0, 1, 90 * us, 95 * us, 20, 100 * us, 400 * us, nccl);
  b.collective(0, k0, 100 * us, 400 * us, "allreduce", "0", 1, 2, 1 << 20);
  const std::int64_t k1 = b.launch(1, 1, 290 * us, 295 * us, 20, 300 * us, 400 * us, nccl);
  b.collective(1, k1, 300 * us, 400 * us, "allreduce", "0", 1, 2, 1 << 20);
  const Profile p = b.finish();
  const CriticalPaths cp = critical_paths(p, analyze(p));
  const StepPath& s = only_step(cp, 0);
  expect_tiles(s);
  EXPECT_EQ(kind_ns(s, PathKind::kComm), 100 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kCollectiveWait), 200 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kLaunchDelay), 5 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kRuntime), 5 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kCpu), 90 * us);
  bool waited_for_rank_1 = false;
  for (const auto& seg : s.segments) {
    if (seg.kind == PathKind::kCollectiveWait) waited_for_rank_1 = seg.peer_rank == 1;
  }
  EXPECT_TRUE(waited_for_rank_1);
  // Rank 1 arrived last: no wait on its path.
  EXPECT_EQ(kind_ns(only_step(cp, 1), PathKind::kCollectiveWait), 0);
}

TEST(CriticalPath, EventWaitCrossesStreams) {
  ProfileBuilder b("cp_streams");
  b.rank(0);
  b.step(0, 1, 0, 20 * us, 1);
  b.launch(0, 1, 0, 5 * us, 7, 10 * us, 100 * us, "producer");
  b.launch(0, 1, 6 * us, 8 * us, 20, 100 * us, 150 * us, "consumer");  // waits for producer (an event)
  const Profile p = b.finish();
  const CriticalPaths cp = critical_paths(p, analyze(p));
  const StepPath& s = only_step(cp);
  expect_tiles(s);
  EXPECT_EQ(kind_ns(s, PathKind::kCompute), 140 * us);  // consumer 50 + producer 90
  EXPECT_EQ(kind_ns(s, PathKind::kLaunchDelay), 5 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kRuntime), 5 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kStreamWait), 0);  // no gap: the consumer started when the producer ended
}

TEST(CriticalPath, IdleThreadWaitsForTheThreadThatWorked) {
  // The main thread launches, then blocks while the autograd thread launches the backward, then launches the
  // optimizer; the step ends on the CPU.
  ProfileBuilder b("cp_threads");
  b.rank(0);
  b.step(0, 1, 0, 1000 * us, 1);
  b.launch(0, 1, 0, 10 * us, 7, 20 * us, 100 * us, "forward");
  b.launch(0, 2, 200 * us, 210 * us, 7, 220 * us, 300 * us, "backward");
  b.launch(0, 1, 900 * us, 910 * us, 7, 920 * us, 990 * us, "optimizer");
  const Profile p = b.finish();
  const CriticalPaths cp = critical_paths(p, analyze(p));
  const StepPath& s = only_step(cp);
  expect_tiles(s);
  EXPECT_EQ(kind_ns(s, PathKind::kRuntime), 30 * us);  // the three launch calls
  EXPECT_EQ(kind_ns(s, PathKind::kCpu), 970 * us);     // everything else was the CPU
  EXPECT_EQ(kind_ns(s, PathKind::kCompute), 0);
  // The walk went through the autograd thread's call.
  bool through_backward_call = false;
  for (const auto& seg : s.segments) {
    if (seg.kind == PathKind::kRuntime && seg.start_ns == 200 * us) through_backward_call = true;
  }
  EXPECT_TRUE(through_backward_call);
}

TEST(CriticalPath, WithoutCorrelationIdsThePathFollowsStreamsAndSaysSo) {
  ProfileBuilder b("cp_nocorr");
  b.rank(0);
  b.step(0, 1, 0, 1000 * us, 1);
  b.activity(0, 7, 100 * us, 200 * us, "a");
  b.activity(0, 7, 210 * us, 400 * us, "b");
  b.activity(0, 20, 450 * us, 500 * us, "c");  // waits for b on the other stream
  const Profile p = b.finish();
  const CriticalPaths cp = critical_paths(p, analyze(p));
  EXPECT_TRUE(cp.ranks[0].per_stream);
  ASSERT_FALSE(cp.notes.empty());
  EXPECT_THAT(cp.notes[0], HasSubstr("GPU streams only"));
  const StepPath& s = only_step(cp);
  expect_tiles(s);
  EXPECT_EQ(s.end_ns, 1000 * us);  // the step's CPU range
  EXPECT_EQ(kind_ns(s, PathKind::kCompute), 340 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kStreamWait), 50 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kQueue), 10 * us);
  EXPECT_EQ(kind_ns(s, PathKind::kOther), 100 * us + 500 * us);  // before a, and after c to the step's end
}

}  // namespace
}  // namespace meshscope::measure
