// Replay and what-if edits (analysis/measure/replay.hpp): small profiles whose replay is worked out by hand
// (times in µs, written as ns × 1000), and every shared trace with GPU work replayed within 2 % of its
// measured steps.
#include "analysis/measure/replay.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "profiler/error.hpp"
#include "tests/measure/cli_test_util.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::measure {
namespace {

namespace fs = std::filesystem;
using test::ProfileBuilder;
using ::testing::HasSubstr;

constexpr TimeNs us = 1000;

ReplayEdits scaled(const std::string& text) {
  ReplayEdits edits;
  ScaleEdit e;
  std::string error;
  EXPECT_TRUE(parse_scale_edit(text, e, error)) << error;
  edits.scales.push_back(e);
  return edits;
}

TimeNs part(const ReplayedStep& s, PathKind p) {
  return s.critical_path[static_cast<std::size_t>(p)];
}

ReplayOptions with_times() {
  ReplayOptions o;
  o.keep_times = true;
  return o;
}

// Three GEMMs queued on one stream, a device synchronisation that waits for the last, 60 µs of host work.
Profile gpu_bound_step() {
  ProfileBuilder b("replay_gpu");
  b.rank(0);
  b.step(0, 1, 0, 1000 * us, 1);
  b.launch(0, 1, 10 * us, 20 * us, 7, 30 * us, 330 * us, "ampere_sgemm_128x64_nn");
  b.launch(0, 1, 30 * us, 40 * us, 7, 330 * us, 630 * us, "ampere_sgemm_128x64_nn");
  b.launch(0, 1, 50 * us, 60 * us, 7, 630 * us, 930 * us, "ampere_sgemm_128x64_nn");
  b.api(0, 1, 70 * us, 940 * us, "cudaDeviceSynchronize");
  return b.finish();
}

TEST(Replay, ReproducesTheMeasuredStep) {
  const Profile p = gpu_bound_step();
  const Replay r = replay(p, analyze(p));
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].step, 1);
  EXPECT_EQ(r.steps[0].measured_ns, 1000 * us);
  EXPECT_EQ(r.steps[0].replayed_ns, 1000 * us);
  EXPECT_EQ(r.mean_abs_error_pct, 0);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.ranks[0].span_ns, 900 * us);
  EXPECT_EQ(r.ranks[0].busy_ns, 900 * us);
}

TEST(Replay, FasterGemmsShortenAGpuBoundStep) {
  const Profile p = gpu_bound_step();
  const Replay r = replay(p, analyze(p), scaled("gemm=0.5"), with_times());
  EXPECT_EQ(r.edited_activities, 3);
  // The first GEMM waits for its launch (10 + its 20 µs delay); the others queue behind it, each 150 µs.
  ASSERT_EQ(r.times.size(), 1u);
  EXPECT_THAT(r.times[0].start, ::testing::ElementsAre(30 * us, 180 * us, 330 * us));
  EXPECT_THAT(r.times[0].end, ::testing::ElementsAre(180 * us, 330 * us, 480 * us));
  // The synchronisation returns 10 µs after the last GEMM, as measured; the 60 µs of host work follow.
  EXPECT_EQ(r.steps[0].replayed_ns, 550 * us);
  EXPECT_EQ(r.ranks[0].span_ns, 450 * us);
}

TEST(Replay, TheReplayedProfileHoldsTheReplayedTimes) {
  const Profile p = gpu_bound_step();
  const Replay r = replay(p, analyze(p), scaled("gemm=0.5"), with_times());
  const Profile replayed = replayed_profile(p, r);
  const Rank& rank = replayed.ranks()[0];
  ASSERT_EQ(rank.activities.size(), 3u);
  EXPECT_EQ(rank.activities[2].start_ns, 330 * us);
  EXPECT_EQ(rank.activities[2].end_ns, 480 * us);
  // The synchronisation returns at 490 µs; the step ends 60 µs of host work later.
  EXPECT_EQ(rank.api_calls.back().end_ns, 490 * us);
  ASSERT_EQ(rank.steps.size(), 1u);
  EXPECT_EQ(rank.steps[0].end_ns, 550 * us);
  EXPECT_EQ(rank.gpu_last_ns, 480 * us);
  // The measured profile is untouched (the replay shares nothing it changes).
  EXPECT_EQ(p.ranks()[0].activities[2].end_ns, 930 * us);
  EXPECT_THROW(replayed_profile(p, replay(p, analyze(p))), Error);
}

TEST(Replay, ACpuBoundStepDoesNotMoveWithItsKernels) {
  ProfileBuilder b("replay_cpu");
  b.rank(0);
  b.step(0, 1, 0, 200 * us, 1);
  b.launch(0, 1, 0, 10 * us, 7, 15 * us, 20 * us, "ampere_sgemm_128x64_nn");
  b.launch(0, 1, 100 * us, 110 * us, 7, 115 * us, 120 * us, "ampere_sgemm_128x64_nn");
  const Profile p = b.finish();
  const Replay r = replay(p, analyze(p), scaled("gemm=0.1"));
  EXPECT_EQ(r.steps[0].replayed_ns, 200 * us);
  EXPECT_EQ(r.ranks[0].busy_ns, 1 * us);  // 0.5 + 0.5 µs
}

TEST(Replay, AWaitOnAnotherStreamMovesWithTheWorkWaitedFor) {
  ProfileBuilder b("replay_event");
  b.rank(0);
  b.step(0, 1, 0, 20 * us, 1);
  b.launch(0, 1, 0, 5 * us, 7, 10 * us, 100 * us, "producer");
  b.launch(0, 1, 6 * us, 8 * us, 20, 100 * us, 150 * us, "consumer");
  const Profile p = b.finish();
  const Replay r = replay(p, analyze(p), scaled("producer=0.5"), with_times());
  EXPECT_THAT(r.times[0].start, ::testing::ElementsAre(10 * us, 55 * us));
  EXPECT_THAT(r.times[0].end, ::testing::ElementsAre(55 * us, 105 * us));
  bool said = false;
  for (const auto& a : r.assumptions) said |= a.find("event waits") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Replay, AnUnexplainedWaitIsKeptOrDropped) {
  ProfileBuilder b("replay_unexplained");
  b.rank(0);
  b.step(0, 1, 0, 20 * us, 1);
  b.launch(0, 1, 0, 2 * us, 7, 10 * us, 20 * us, "a");  // 10 µs launch delay: the usual one
  b.launch(0, 1, 30 * us, 32 * us, 7, 40 * us, 50 * us, "b");
  b.launch(0, 1, 60 * us, 62 * us, 7, 570 * us, 580 * us, "c");  // 510 µs, nothing to wait for
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const Replay kept = replay(p, a, {}, with_times());
  EXPECT_EQ(kept.times[0].start[2], 570 * us);
  EXPECT_EQ(kept.unexplained_ns, 500 * us);
  ReplayOptions drop = with_times();
  drop.keep_unexplained = false;
  const Replay dropped = replay(p, a, {}, drop);
  EXPECT_EQ(dropped.times[0].start[2], 70 * us);
  bool said = false;
  for (const auto& s : dropped.assumptions) said |= s.find("dropped") != std::string::npos;
  EXPECT_TRUE(said);
}

// Work the profile does not hold, added to gpu_bound_step: a 20 µs copy queued after the first GEMM (the
// second waits for it), an 800 µs all-reduce on a stream of its own after the copy, and a 100 µs copy back
// after the last GEMM that waits for the all-reduce.
ReplayEdits added_to_gpu_bound_step() {
  ReplayEdits edits;
  std::vector<AddedActivity> added(3);
  added[0].place = AddedActivity::Place::kAfterOnStream;
  added[0].after = 0, added[0].before = 1, added[0].duration_ns = 20 * us;
  added[0].cls = ActivityClass::kCompute, added[0].name = "copy into the bucket";
  added[1].after = 0, added[1].after_added = 0, added[1].duration_ns = 800 * us;
  added[1].bytes = 1e6, added[1].group_size = 4, added[1].name = "ncclDevKernel_AllReduce_Sum (added)";
  added[2].place = AddedActivity::Place::kAfterOnStream;
  added[2].after = 2, added[2].after_added = 1, added[2].duration_ns = 100 * us;
  added[2].cls = ActivityClass::kCompute, added[2].name = "copy back";
  edits.added.push_back(added);
  return edits;
}

// GEMM 0 [30, 330]; the copy [330, 350] holds GEMM 1 to [350, 650]; the all-reduce [350, 1150] beside it;
// GEMM 2 [650, 950]; the copy back waits for the all-reduce, [1150, 1250], and ends the step (the
// synchronisation waited for GEMM 2: it returns at 960, its host work ends at 1020). The all-reduce is
// exposed from 950 to 1150. The step's critical path: the copy back, the all-reduce, the copy, GEMM 0, its
// launch.
TEST(Replay, AddedWorkQueuesGatesAndIsDrawn) {
  const Profile p = gpu_bound_step();
  const ReplayEdits edits = added_to_gpu_bound_step();
  const Replay r = replay(p, analyze(p), edits, with_times());
  EXPECT_EQ(r.added_activities, 3);
  ASSERT_EQ(r.times.size(), 1u);
  EXPECT_THAT(r.times[0].added_start, ::testing::ElementsAre(330 * us, 350 * us, 1150 * us));
  EXPECT_THAT(r.times[0].added_end, ::testing::ElementsAre(350 * us, 1150 * us, 1250 * us));
  EXPECT_THAT(r.times[0].start, ::testing::ElementsAre(30 * us, 350 * us, 650 * us));
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].replayed_ns, 1250 * us);
  EXPECT_EQ(r.ranks[0].exposed_comm_ns, 200 * us);
  EXPECT_EQ(r.ranks[0].busy_ns, 1220 * us);
  EXPECT_EQ(part(r.steps[0], PathKind::kCompute), 420 * us);
  EXPECT_EQ(part(r.steps[0], PathKind::kComm), 800 * us);
  EXPECT_EQ(part(r.steps[0], PathKind::kLaunchDelay), 20 * us);
  EXPECT_EQ(part(r.steps[0], PathKind::kCpu), 10 * us);

  const Profile drawn = replayed_profile(p, r, edits);
  const Rank& rank = drawn.ranks()[0];
  ASSERT_EQ(rank.streams.size(), 2u);
  ASSERT_EQ(rank.activities.size(), 6u);
  EXPECT_EQ(rank.streams[0].count, 5u);  // the copies on the GEMMs' stream, in start order
  EXPECT_EQ(drawn.str(rank.activities[1].name), "copy into the bucket");
  EXPECT_EQ(rank.activities[4].start_ns, 1150 * us);
  EXPECT_EQ(rank.streams[1].device, rank.streams[0].device);
  EXPECT_GT(rank.streams[1].stream, rank.streams[0].stream);
  ASSERT_EQ(rank.collectives.size(), 1u);
  EXPECT_EQ(drawn.str(rank.collectives[0].op), "allreduce");
  EXPECT_EQ(rank.collectives[0].in_bytes, 1'000'000);
  EXPECT_EQ(rank.collectives[0].group_size, 4);
  EXPECT_EQ(rank.activities[rank.collectives[0].activity].end_ns, 1150 * us);
  EXPECT_EQ(rank.activities[rank.collectives[0].activity].collective, 0);
  EXPECT_EQ(rank.gpu_last_ns, 1250 * us);
  EXPECT_EQ(p.strings()->size() + 5, drawn.strings()->size());  // three names, the op, the source "what-if"
}

// An added activity that names work the rank does not hold is the planner's bug: one line, not a crash.
TEST(Replay, AddedWorkMustFollowSomethingTheRankHolds) {
  const Profile p = gpu_bound_step();
  ReplayEdits edits = added_to_gpu_bound_step();
  edits.added[0][1].after = 7;
  EXPECT_THROW(replay(p, analyze(p), edits), Error);
  edits = added_to_gpu_bound_step();
  edits.added[0][0].after_added = 2;  // a later one
  EXPECT_THROW(replay(p, analyze(p), edits), Error);
}

// Rank 0 arrives at 100 µs, rank 1 at 300; both end at 400: 100 µs of transfer after the last arrival.
Profile late_rank() {
  ProfileBuilder b("replay_coll");
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  for (std::int32_t r = 0; r < 2; ++r) {
    b.rank(r, 2);
    b.step(r, 1, 0, 200 * us, 1);
  }
  const std::int64_t k0 = b.launch(0, 1, 90 * us, 95 * us, 20, 100 * us, 400 * us, nccl);
  b.collective(0, k0, 100 * us, 400 * us, "allreduce", "0", 1, 2, 1 << 20);
  const std::int64_t k1 = b.launch(1, 1, 290 * us, 295 * us, 20, 300 * us, 400 * us, nccl);
  b.collective(1, k1, 300 * us, 400 * us, "allreduce", "0", 1, 2, 1 << 20);
  return b.finish();
}

TEST(Replay, CollectivesEndTogetherAfterTheLastArrival) {
  const Profile p = late_rank();
  const Analysis a = analyze(p);
  const Replay faster = replay(p, a, scaled("comm=0.5"), with_times());
  // Each ends 50 µs (half the transfer) after rank 1 arrived.
  EXPECT_EQ(faster.times[0].end[0], 350 * us);
  EXPECT_EQ(faster.times[1].end[0], 350 * us);
  ReplayEdits fix;
  fix.fix_straggler = true;
  const Replay fixed = replay(p, a, fix, with_times());
  EXPECT_EQ(fixed.straggler, 1);
  // Rank 0 no longer waits for rank 1: its transfer follows its own arrival.
  EXPECT_EQ(fixed.times[0].end[0], 200 * us);
  EXPECT_EQ(fixed.times[1].end[0], 400 * us);
  EXPECT_EQ(fixed.ranks[0].span_ns, 100 * us);
}

// Each rank's replayed times with THREADS threads.
std::vector<ReplayedTimes> times_with(const Profile& p, const Analysis& a, const ReplayEdits& edits,
                                      unsigned threads) {
  ReplayOptions o = with_times();
  o.threads = threads;
  return replay(p, a, edits, o).times;
}

// Two ranks whose collectives on communicators A and B ran in opposite orders (their clocks disagree with
// the order of the collectives): each waits for the other, and the first rank's collective end goes ahead on
// an estimate of the other's arrival, said in the assumptions, whatever the number of threads.
TEST(Replay, RanksWaitingForEachOtherGoAheadOnEstimates) {
  ProfileBuilder b("replay_crossed");
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  for (std::int32_t r = 0; r < 2; ++r) {
    b.rank(r, 2);
    b.step(r, 1, 0, 500 * us, 1);
    const char* first = r == 0 ? "A" : "B";
    const char* second = r == 0 ? "B" : "A";
    const std::int64_t k0 = b.launch(r, 1, 90 * us, 95 * us, 20, 100 * us, 200 * us, nccl);
    b.collective(r, k0, 100 * us, 200 * us, "allreduce", first, 1, 2, 1 << 20);
    const std::int64_t k1 = b.launch(r, 1, 290 * us, 295 * us, 20, 300 * us, 400 * us, nccl);
    b.collective(r, k1, 300 * us, 400 * us, "allreduce", second, 1, 2, 1 << 20);
  }
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const Replay r = replay(p, a, {}, with_times());
  EXPECT_THAT(::testing::PrintToString(r.assumptions), HasSubstr("computed before every member's arrival"));
  for (const unsigned threads : {1u, 2u, 4u}) {
    const std::vector<ReplayedTimes> t = times_with(p, a, {}, threads);
    ASSERT_EQ(t.size(), r.times.size());
    for (std::size_t k = 0; k < t.size(); ++k) {
      EXPECT_EQ(t[k].start, r.times[k].start) << threads << " threads, rank " << k;
      EXPECT_EQ(t[k].end, r.times[k].end) << threads << " threads, rank " << k;
    }
  }
}

// Sixteen ranks in two groups of eight, each group's ranks running eight collectives of their own and then
// one of all sixteen, with launch times spread differently on every rank: every number of threads gives
// the same replayed times (the simulation's result does not depend on which rank ran first).
TEST(Replay, TheResultDoesNotDependOnTheNumberOfThreads) {
  ProfileBuilder b("replay_groups");
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  constexpr std::int32_t kRanks = 16;
  for (std::int32_t r = 0; r < kRanks; ++r) {
    b.rank(r, kRanks);
    b.step(r, 1, 0, 2000 * us, 1);
    const std::string group = r < 8 ? "tp0" : "tp1";
    TimeNs t = (r * 7 % 5) * us;
    for (std::int64_t c = 0; c < 8; ++c) {
      t += (10 + (r * 13 + c * 5) % 17) * us;
      b.launch(r, 1, t, t + 5 * us, 7, t + 10 * us, t + 60 * us, "ampere_sgemm_128x64_nn");
      const std::int64_t k = b.launch(r, 1, t + 6 * us, t + 9 * us, 20, t + 60 * us, t + 100 * us, nccl);
      b.collective(r, k, t + 60 * us, t + 100 * us, "allreduce", group, c + 1, 8, 1 << 20);
      t += 100 * us;
    }
    const std::int64_t k = b.launch(r, 1, t, t + 4 * us, 20, t + 10 * us, t + 200 * us, nccl);
    b.collective(r, k, t + 10 * us, t + 200 * us, "allreduce", "dp", 1, kRanks, 1 << 24);
  }
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  for (const ReplayEdits& edits : {ReplayEdits{}, scaled("gemm=0.5"), scaled("comm=3")}) {
    const std::vector<ReplayedTimes> one = times_with(p, a, edits, 1);
    ASSERT_EQ(one.size(), static_cast<std::size_t>(kRanks));
    for (const unsigned threads : {2u, 3u, 8u}) {
      const std::vector<ReplayedTimes> many = times_with(p, a, edits, threads);
      for (std::size_t k = 0; k < one.size(); ++k) {
        EXPECT_EQ(many[k].start, one[k].start) << threads << " threads, rank " << k;
        EXPECT_EQ(many[k].end, one[k].end) << threads << " threads, rank " << k;
        EXPECT_EQ(many[k].call_end, one[k].call_end) << threads << " threads, rank " << k;
      }
    }
  }
}

// Walked back from the step's end: 60 µs of host work after the synchronisation, its 10 µs return after the
// last GEMM, the three GEMMs one after another, the first's 20 µs launch delay, the 10 µs before the first
// launch (measure::critical_path's kinds).
TEST(Replay, TheCriticalPathIsWhatTheStepsEndWaitedFor) {
  const Profile p = gpu_bound_step();
  const Analysis a = analyze(p);
  const Replay measured = replay(p, a);
  ASSERT_EQ(measured.steps.size(), 1u);
  EXPECT_EQ(part(measured.steps[0], PathKind::kCpu), 70 * us);
  EXPECT_EQ(part(measured.steps[0], PathKind::kSync), 10 * us);
  EXPECT_EQ(part(measured.steps[0], PathKind::kCompute), 900 * us);
  EXPECT_EQ(part(measured.steps[0], PathKind::kLaunchDelay), 20 * us);
  EXPECT_EQ(critical_path_text(measured.steps[0]), "compute 90 %, cpu 7 %, launch_delay 2 %, sync 1 %");
  const Replay faster = replay(p, a, scaled("gemm=0.5"));
  EXPECT_EQ(part(faster.steps[0], PathKind::kCompute), 450 * us);
  EXPECT_EQ(part(faster.steps[0], PathKind::kCpu), 70 * us);
  EXPECT_EQ(critical_path_text(faster.steps[0], 5), "compute 82 %, cpu 13 %");
  // Rank 0's collective: 200 µs waiting for rank 1, then 100 µs of transfer; its launch, 10 µs; the host
  // before.
  const Profile coll = late_rank();
  const Replay r = replay(coll, analyze(coll));
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(part(r.steps[0], PathKind::kCollectiveWait), 200 * us);
  EXPECT_EQ(part(r.steps[0], PathKind::kComm), 100 * us);
  EXPECT_EQ(part(r.steps[0], PathKind::kLaunchDelay), 10 * us);
  EXPECT_EQ(part(r.steps[0], PathKind::kCpu), 90 * us);
  // Rank 1 launches its collective after its step's range: the step is its host work.
  EXPECT_EQ(part(r.steps[1], PathKind::kCpu), 200 * us);
}

// A graph kept for several edits gives each what a replay of its own gives: nothing of one run stays in the
// next.
TEST(Replay, AKeptGraphRunsEachEditAsAFreshReplay) {
  const Profile p = late_rank();
  const Analysis a = analyze(p);
  ReplayGraph graph(p, a);
  ReplayEdits fix;
  fix.fix_straggler = true;
  for (const ReplayEdits& edits : {scaled("comm=0.5"), fix, ReplayEdits{}, scaled("comm=0.5")}) {
    const Replay kept = graph.run(edits, true);
    const Replay fresh = replay(p, a, edits, with_times());
    ASSERT_EQ(kept.times.size(), fresh.times.size());
    for (std::size_t r = 0; r < kept.times.size(); ++r) {
      EXPECT_EQ(kept.times[r].start, fresh.times[r].start);
      EXPECT_EQ(kept.times[r].end, fresh.times[r].end);
      EXPECT_EQ(kept.times[r].call_end, fresh.times[r].call_end);
    }
    EXPECT_EQ(kept.straggler, fresh.straggler);
    EXPECT_EQ(kept.edited_activities, fresh.edited_activities);
    EXPECT_EQ(kept.assumptions, fresh.assumptions);
  }
  EXPECT_EQ(graph.run(fix, true).times[0].end[0], 200 * us);
  EXPECT_EQ(graph.run({}, true).times[0].end[0], 400 * us);
}

TEST(Replay, ScaleEditsNameAClassOrAPattern) {
  ScaleEdit e;
  std::string error;
  ASSERT_TRUE(parse_scale_edit("attention=0.8", e, error));
  EXPECT_EQ(e.target, ScaleEdit::Target::kCategory);
  EXPECT_EQ(e.category, WorkCategory::kAttention);
  ASSERT_TRUE(parse_scale_edit("comm=2", e, error));
  EXPECT_EQ(e.target, ScaleEdit::Target::kComm);
  ASSERT_TRUE(parse_scale_edit("memcpy=1.5", e, error));
  EXPECT_EQ(e.target, ScaleEdit::Target::kMemory);
  ASSERT_TRUE(parse_scale_edit("Volta_SGEMM=0.5", e, error));
  EXPECT_EQ(e.target, ScaleEdit::Target::kPattern);
  EXPECT_EQ(e.pattern, "volta_sgemm");
  EXPECT_FALSE(parse_scale_edit("gemm", e, error));
  EXPECT_THAT(error, HasSubstr("CLASS=FACTOR"));
  EXPECT_FALSE(parse_scale_edit("gemm=-1", e, error));
  EXPECT_FALSE(parse_scale_edit("gemm=nan", e, error));
  EXPECT_FALSE(parse_scale_edit("gemm=2x", e, error));
}

TEST(Replay, KernelsAreReadAsTheirKindOfWork) {
  EXPECT_EQ(kernel_work_category("ampere_sgemm_128x64_nn"), WorkCategory::kGemm);
  EXPECT_EQ(kernel_work_category("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"), WorkCategory::kGemm);
  EXPECT_EQ(kernel_work_category("Cijk_Alik_Bljk_HHS_BH_MT128x128x32"), WorkCategory::kGemm);
  EXPECT_EQ(kernel_work_category("sm80_xmma_fprop_implicit_gemm_indexed_f16f16"), WorkCategory::kConv);
  EXPECT_EQ(kernel_work_category("void pytorch_flash::flash_fwd_kernel<...>"), WorkCategory::kAttention);
  EXPECT_EQ(kernel_work_category("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"),
            WorkCategory::kNorm);
  EXPECT_EQ(kernel_work_category("void at::native::vectorized_elementwise_kernel<4, ...>"),
            WorkCategory::kElementwise);
  EXPECT_EQ(kernel_work_category("void at::native::embedding_backward_kernel"), WorkCategory::kOther);
}

// Every shared trace with GPU work: its steps (or its whole profile) replayed within 2 %.
TEST(Replay, EverySharedTraceReplaysWithinTwoPercent) {
  const fs::path traces = fs::path(MESHSCOPE_SHARED_DIR) / "traces";
  const char* inputs[] = {
      "hta/amd_trace",
      "hta/call_stack",
      "hta/critical_path/alexnet",
      "hta/critical_path/cuda_event_sync",
      "hta/critical_path/cuda_event_sync_multi_stream",
      "hta/cupti_profiler",
      "hta/nccl_parser_config",
      "hta/negative_queue_length_values_check",
      "hta/ns_resolution_trace",
      "hta/trace_compare/base",
      "hta/trace_compare/test",
      "hta/trace_diff",
      "hta/trace_filter",
      "kineto/resnet50_num_workers_0",
      "kineto/resnet50_num_workers_4",
      "param/linear_kineto.json.gz",
      "param/resnet_kineto.json.gz",
      "tracelens/h100_qwen1.5_0.5b_inference.json.gz",
      "tracelens/mi210_gpu_only.json.gz",
      "tracelens/mi300_resnet_act_checkpoint.json.gz",
      "nsys/saxpy_mpi_cuda_a100.sqlite",
      "nsys_nccl/mfu_2gpu_after.sqlite",
  };
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("replay-traces-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* input : inputs) {
    SCOPED_TRACE(input);
    const fs::path profile = dir / (std::string(fs::path(input).filename()) + ".msdb");
    test::run_cli_ok("import '" + (traces / input).string() + "' -o '" + profile.string() + "' -q", dir);
    const Profile p = Profile::load(profile);
    const Analysis a = analyze(p);
    for (const bool keep : {true, false}) {
      ReplayOptions options;
      options.keep_unexplained = keep;
      const Replay r = replay(p, a, {}, options);
      ASSERT_FALSE(r.steps.empty());
      for (const ReplayedStep& s : r.steps) {
        TimeNs sum = 0;
        for (const TimeNs t : s.critical_path) {
          EXPECT_GE(t, 0);
          sum += t;
        }
        EXPECT_EQ(sum, s.replayed_ns) << "rank " << s.rank << " step " << s.step;
      }
      EXPECT_LE(r.mean_abs_error_pct, 2.0);
      if (keep) {
        EXPECT_LE(r.max_abs_error_pct, 0.1);
      }
    }
  }
  fs::remove_all(dir);
}

// The command: JSON with the keys docs/CLI.md fixes; a bad edit refused in one line before anything is read.
TEST(Replay, WhatifCommandPrintsTheReplayAndTheEditedRun) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("replay-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = fs::path(MESHSCOPE_SHARED_DIR) / "traces/kineto/resnet50_num_workers_0";
  const std::string json =
      test::run_cli_ok("whatif '" + trace.string() + "' --scale gemm=0.5 --scale comm=2 --json", dir);
  for (const char* key : {"\"replay\"", "\"steps\"", "\"measured_ns\"", "\"replayed_ns\"",
                          "\"mean_abs_error_pct\"", "\"max_abs_error_pct\"", "\"assumptions\"", "\"whatif\"",
                          "\"edits\"", "\"predicted_ns\"", "\"ranks\"", "\"span_ns\"", "\"busy_ns\"",
                          "\"exposed_comm_ns\"", "\"scale gemm=0.5\"", "\"critical_path\"", "\"compute\""})
    EXPECT_THAT(json, HasSubstr(key));
  const std::string text = test::run_cli_ok("whatif '" + trace.string() + "' --scale conv=0.5", dir);
  EXPECT_THAT(text, HasSubstr("replay   6 steps on 1 rank"));
  EXPECT_THAT(text, HasSubstr("edits    scale conv=0.5"));
  EXPECT_THAT(text, HasSubstr("critical path      replayed   share    predicted    change"));
  const test::CliResult bad = test::run_cli("whatif '" + trace.string() + "' --scale gemm=fast", dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.err, HasSubstr("--scale gemm=fast: the factor must be a positive number"));
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
  fs::remove_all(dir);
}

// `whatif --dp` and `--tp` on a real trace with collectives: refused in one line while the job's degrees are
// not known (and `--tp` on a job of tp 1), then, once stated, its collectives re-timed for the new replicas.
TEST(Replay, WhatifDataParallelNeedsTheMeasuredDegree) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("replay-dp-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = fs::path(MESHSCOPE_SHARED_DIR) / "traces/hta/nccl_parser_config";
  const fs::path profile = dir / "npc.msdb";
  test::run_cli_ok("import '" + trace.string() + "' -o '" + profile.string() + "'", dir);
  const test::CliResult unknown = test::run_cli("whatif '" + profile.string() + "' --dp 4", dir);
  EXPECT_NE(unknown.status, 0);
  EXPECT_THAT(unknown.err, HasSubstr("npc.msdb: --dp needs the data-parallel degree the job ran"));
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1);
  const test::CliResult no_tp = test::run_cli("whatif '" + profile.string() + "' --tp 2", dir);
  EXPECT_NE(no_tp.status, 0);
  EXPECT_THAT(no_tp.err, HasSubstr("npc.msdb: --tp needs the tensor-parallel degree the job ran"));
  test::run_cli_ok("annotate '" + profile.string() + "' --layout dp=2,tp=1", dir);
  // Stated as tp 1: the tensor-parallel all-reduces would be added, sized by a model its shapes do not show.
  const test::CliResult tp1 = test::run_cli("whatif '" + profile.string() + "' --tp 2", dir);
  EXPECT_THAT(
      tp1.err,
      HasSubstr("npc.msdb: --tp 2 sizes the collectives it adds by the model, and no shapes recorded"));
  EXPECT_EQ(std::count(tp1.err.begin(), tp1.err.end(), '\n'), 1);
  const std::string text = test::run_cli_ok("whatif '" + profile.string() + "' --dp 4", dir);
  EXPECT_THAT(text, HasSubstr("edits    dp 4; 21 activities changed"));
  EXPECT_THAT(text, HasSubstr("21 data-parallel collectives re-timed for 4 ranks on the intra_node link"));
  const std::string json = test::run_cli_ok("whatif '" + profile.string() + "' --dp 4 --json", dir);
  EXPECT_THAT(json, HasSubstr("\"dp 4\""));
  // The same global batch over four replicas: each rank's compute kernels halve (its GEMMs less their fixed
  // cost per kernel, the A100's 9.7 µs), the optimizer's (inside Optimizer.step ranges, gradients
  // all-reduced: not sharded) stay; its CPU-bound steps do not move, its GPU busy time falls.
  const std::string strong =
      test::run_cli_ok("whatif '" + profile.string() + "' --dp 4 --keep-global-batch", dir);
  EXPECT_THAT(strong, HasSubstr("edits    dp 4, batch x0.5;"));
  EXPECT_THAT(strong, HasSubstr("2652 compute kernels outside the optimizer x 0.5 for the batch"));
  EXPECT_THAT(strong, HasSubstr("27 kernels launched inside\n           the optimizer's ranges x 1"));
  EXPECT_THAT(strong, HasSubstr("157.500 ms → 127.436 ms"));
  // A stated global batch of 2 over dp 2 is one sequence per rank: four replicas cannot share it.
  test::run_cli_ok("annotate '" + profile.string() + "' --layout global_batch=2", dir);
  const test::CliResult half =
      test::run_cli("whatif '" + profile.string() + "' --dp 4 --keep-global-batch", dir);
  EXPECT_NE(half.status, 0);
  EXPECT_THAT(half.err,
              HasSubstr("npc.msdb: each rank would run 0.5 sequences per step (the stated global batch 2 "
                        "over dp 2, x 0.5): fewer than one"));
  EXPECT_EQ(std::count(half.err.begin(), half.err.end(), '\n'), 1);
  const test::CliResult odd = test::run_cli("whatif '" + profile.string() + "' --batch 1.5", dir);
  EXPECT_NE(odd.status, 0);
  EXPECT_THAT(odd.err,
              HasSubstr("each rank would run 1.5 sequences per step (the stated global batch 2 over dp 2, "
                        "x 1.5): not a whole number"));
  fs::remove_all(dir);
}

// A job measured on one GPU (the H200 trace this project recorded: dp 1, FP32 parameters under BF16
// autocast) replayed as eight data-parallel replicas: DDP's work is added, a scaling copy per gradient and
// an all-reduce and a copy back per bucket (14 buckets of 42 gradients) in each of its two steps; its steps
// are bound by their CPU thread and do not move, its GPU is busier and the all-reduces partly exposed. A
// trace that names no GPU is refused in one line.
TEST(Replay, WhatifDataParallelFromOneGpuAddsDdpsWork) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("replay-dp1-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data/known_models/h200_gpt_train.json.gz";
  const std::string text = test::run_cli_ok("whatif '" + trace.string() + "' --dp 8", dir);
  EXPECT_THAT(text, HasSubstr("edits    dp 8; 0 activities changed, 140 activities added"));
  EXPECT_THAT(text,
              HasSubstr("dp 1 -> 8: the gradients' all-reduces added as PyTorch DDP buckets them: 667.0 MB"));
  EXPECT_THAT(text, HasSubstr("in 14 buckets"));
  EXPECT_THAT(text, HasSubstr("FP32 parameters"));
  const std::string json = test::run_cli_ok("whatif '" + trace.string() + "' --dp 8 --json", dir);
  EXPECT_THAT(json, HasSubstr("\"added_activities\": 140"));
  EXPECT_THAT(json, HasSubstr("\"predicted_ns\": 35157167"));
  EXPECT_THAT(json, ::testing::ContainsRegex("\"exposed_comm_ns\": [1-9][0-9]{5}"));
  const fs::path cpu = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data/known_models/bert_train.json.gz";
  const test::CliResult unknown = test::run_cli("whatif '" + cpu.string() + "' --dp 4", dir);
  EXPECT_NE(unknown.status, 0);
  EXPECT_THAT(unknown.err,
              HasSubstr("bert_train.json.gz: --dp 4 times the collectives it adds on the GPU's links"));
  EXPECT_EQ(std::count(unknown.err.begin(), unknown.err.end(), '\n'), 1);
  fs::remove_all(dir);
}

// The same run as tensor-parallel pairs, each pair one of four DDP replicas: Megatron-LM's all-reduces added
// (two per layer and pass, the embedding's and the output layer's: 17 each way for its 8 layers, in both
// steps), its GEMMs and the kernels of sharded tensors split, DDP's buckets of a half shard.
TEST(Replay, WhatifTensorParallelFromOneGpuAddsMegatronsAllReduces) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("replay-tp1-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data/known_models/h200_gpt_train.json.gz";
  const std::string tp = test::run_cli_ok("whatif '" + trace.string() + "' --tp 2", dir);
  EXPECT_THAT(tp, HasSubstr("edits    tp 2; 548 activities changed, 68 activities added"));
  EXPECT_THAT(tp,
              HasSubstr("214 GEMM and attention kernels and 190 other\n           kernels whose operators' "
                        "inputs are sharded"));
  EXPECT_THAT(tp, HasSubstr("Megatron-LM's tensor-parallel all-reduces added, each of 8.39 MB"));
  const std::string both = test::run_cli_ok("whatif '" + trace.string() + "' --tp 2 --dp 4", dir);
  EXPECT_THAT(both, HasSubstr("edits    tp 2, dp 4; 548 activities changed, 184 activities added"));
  EXPECT_THAT(both, HasSubstr("a 1/2 shard"));
  fs::remove_all(dir);
}

// --pp 2 on a generated job of 8 ranks (tp 2 × dp 4), its model, GPU and micro-batch stated: 16 stage ranks,
// stage s of rank r numbered 8 s + r, and the stages 8 ranks apart (Megatron's order, the pipeline outermost)
// on nodes of 8 GPUs, so every send crosses nodes; each send half a micro-batch's activations (tp 2).
TEST(Replay, WhatifPipelinesAGeneratedJob) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("replay-pp-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path job = dir / "job.msdb";
  const std::string generate = "\"" + std::string(MESHSCOPE_GEN_JOB) +
                               "\" --ranks 8 --tp 2 --layers 4 --steps 2 --format msdb -o '" + job.string() +
                               "' > /dev/null 2>&1";
  ASSERT_EQ(std::system(generate.c_str()), 0) << generate;
  test::run_cli_ok(
      "annotate '" + job.string() + "' --model gpt --hardware h100-sxm --layout pp=1,micro_batch=1,seq=2048",
      dir);
  const std::string text = test::run_cli_ok("whatif '" + job.string() + "' --pp 2", dir);
  EXPECT_THAT(text,
              HasSubstr("each send between stages 4.19 MB: 94.2 µs across nodes (stages 8 ranks apart"));
  const std::string json = test::run_cli_ok("whatif '" + job.string() + "' --pp 2 --json", dir);
  EXPECT_THAT(json, HasSubstr("\"rank\": 15,\n"));
  EXPECT_THAT(json, HasSubstr("\"rank\": 13,\n        \"stage\": 1,\n        \"measured_rank\": 5"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace meshscope::measure
