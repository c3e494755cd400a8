// Link and data-parallel edits of `whatif` (analysis/compare/link_edits.hpp): collectives re-timed from the
// α-β fit of the profile's own collectives, then replayed (analysis/measure/replay.hpp). Times in µs, written
// as ns × 1000.
#include "analysis/compare/link_edits.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/compare/whatif_request.hpp"
#include "analysis/measure/launch_ranges.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/predict.hpp"
#include "analysis/model/presets.hpp"
#include "profiler/error.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::compare {
namespace {

constexpr TimeNs us = 1000;
const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

// Two ranks on one host, all-reduces of 10 MB and 20 MB that both reach at once. Two ranks make a ring of two
// steps with a bus-bandwidth factor of 1 (nccl-tests, doc/PERFORMANCE.md): with α = 5 µs per step and 10 GB/s
// a 10 MB all-reduce takes 2 × 5 + 1e7 / 1e10 s = 1010 µs, a 20 MB one 2010 µs.
Profile two_sizes() {
  test::ProfileBuilder b("link_edits");
  for (std::int32_t r = 0; r < 2; ++r) {
    b.rank(r, 2);
    const std::int64_t k1 = b.launch(r, 1, 0, 5 * us, 20, 10 * us, 1020 * us, kNccl);
    b.collective(r, k1, 10 * us, 1020 * us, "allreduce", "c0", 1, 2, 10'000'000);
    const std::int64_t k2 = b.launch(r, 1, 6 * us, 9 * us, 20, 1020 * us, 3030 * us, kNccl);
    b.collective(r, k2, 1020 * us, 3030 * us, "allreduce", "c0", 2, 2, 20'000'000);
  }
  return b.finish();
}

TEST(LinkEdits, CollectivesAreRetimedFromTheProfilesOwnFit) {
  const Profile p = two_sizes();
  const measure::Analysis a = measure::analyze(p);
  LinkEdit e;
  std::string error;
  ASSERT_TRUE(parse_link_edit("nvlink=20", false, e, error)) << error;
  const LinkRetiming r = retime_links(p, a, std::span<const LinkEdit>(&e, 1), 8);
  EXPECT_EQ(r.retimed, 4);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_THAT(r.notes[0], ::testing::HasSubstr("α 5.00 µs per step, bus bandwidth 10.0 GB/s"));
  // At 20 GB/s: 10 + 500 µs of 1010, 10 + 1000 µs of 2010.
  EXPECT_NEAR(r.factor[0][0], 510.0 / 1010.0, 1e-6);
  EXPECT_NEAR(r.factor[1][1], 1010.0 / 2010.0, 1e-6);
  measure::ReplayEdits edits;
  edits.transfer_factor = r.factor;
  measure::ReplayOptions options;
  options.keep_times = true;
  const measure::Replay w = measure::replay(p, a, edits, options);
  EXPECT_EQ(w.times[0].end[0], 520 * us);
  EXPECT_EQ(w.times[1].end[1], 520 * us + 1010 * us);
}

// The GUI's What-if line and `whatif`'s flags are one request (compare::parse_whatif_line, whatif_edits).
TEST(WhatifRequest, OneLineReadsAsWhatifsFlags) {
  WhatifRequest r;
  std::string error;
  ASSERT_TRUE(
      parse_whatif_line("gemm=0.5, comm=2 fix-straggler --tp 4 --dp=8 --link inter_node=50 "
                        "--latency=nvlink=3 --hardware b200",
                        r, error))
      << error;
  ASSERT_EQ(r.scales.size(), 2u);
  EXPECT_EQ(r.scales[1].text, "comm=2");
  EXPECT_EQ(r.scales[1].target, measure::ScaleEdit::Target::kComm);
  EXPECT_TRUE(r.fix_straggler);
  EXPECT_EQ(r.tp, 4);
  EXPECT_EQ(r.dp, 8);
  ASSERT_EQ(r.links.size(), 2u);
  EXPECT_DOUBLE_EQ(r.links[0].bandwidth_Bps, 50e9);
  EXPECT_DOUBLE_EQ(r.links[1].latency_s, 3e-6);
  EXPECT_EQ(r.hardware, "b200");
  EXPECT_TRUE(r.needs_workload());
  ASSERT_TRUE(parse_whatif_line("replay", r, error));
  EXPECT_TRUE(r.scales.empty() && !r.needs_workload() && !r.fix_straggler);
  // A degree is a whole number of GPUs; an unknown flag or a bad value is named.
  EXPECT_FALSE(parse_whatif_line("--tp four", r, error));
  EXPECT_EQ(error, "--tp four: expected a whole number of GPUs, 1 or more");
  EXPECT_FALSE(parse_whatif_line("--dp 0", r, error));
  EXPECT_FALSE(parse_whatif_line("--cp 2", r, error));
  EXPECT_EQ(
      error,
      "--cp: expected --tp N, --dp N, --pp N, --micro-batches K, --keep-global-batch, --batch F, --link "
      "DOMAIN=GB/s, --latency DOMAIN=us or --hardware GPU");
  EXPECT_FALSE(parse_whatif_line("--micro-batches 4", r, error));
  EXPECT_THAT(error, ::testing::HasSubstr("give the stages too (--pp N)"));
  ASSERT_TRUE(parse_whatif_line("--pp 4", r, error)) << error;
  EXPECT_EQ(r.pp, 4);
  EXPECT_TRUE(r.needs_workload());
  ASSERT_TRUE(parse_whatif_line("--dp 8 --keep-global-batch", r, error)) << error;
  EXPECT_TRUE(r.keep_global_batch && r.needs_workload());
  ASSERT_TRUE(parse_whatif_line("--batch=0.5", r, error)) << error;
  EXPECT_DOUBLE_EQ(r.batch, 0.5);
  // --keep-global-batch keeps the global batch over --dp's replicas: without --dp, or with --batch (even 1),
  // it is refused before any profile is read.
  EXPECT_FALSE(parse_whatif_line("--keep-global-batch", r, error));
  EXPECT_EQ(error,
            "--keep-global-batch: give the data-parallel degree it keeps the global batch over (--dp M)");
  EXPECT_FALSE(parse_whatif_line("--dp 8 --keep-global-batch --batch 1", r, error));
  EXPECT_EQ(
      error,
      "--keep-global-batch and --batch 1: the one keeps the global batch, the other changes it: give one");
  EXPECT_FALSE(parse_whatif_line("--batch 0", r, error));
  EXPECT_EQ(error, "--batch 0: expected a positive factor on each rank's batch (0.5, 2, ...)");
  EXPECT_FALSE(parse_whatif_line("--link pcie=16", r, error));
  EXPECT_EQ(error, "--link pcie=16: expected intra_node (nvlink) or inter_node (network) =GB/s");
  EXPECT_FALSE(parse_whatif_line("gemm=0.5 faster", r, error));
  EXPECT_EQ(error, "faster: expected CLASS=F, PATTERN=F, fix-straggler or a flag of whatif (--tp N, ...)");
}

TEST(WhatifRequest, TheEditsAreThoseOfEachRetiming) {
  const Profile p = two_sizes();
  const measure::Analysis a = measure::analyze(p);
  WhatifRequest r;
  std::string error;
  ASSERT_TRUE(parse_whatif_line("gemm=0.5 --link nvlink=20 --latency nvlink=55", r, error)) << error;
  const WhatifEdits e = whatif_edits(p, a, {}, {}, r, nullptr, "link_edits");
  EXPECT_EQ(e.names, (std::vector<std::string>{"scale gemm=0.5", "link nvlink=20", "latency nvlink=55"}));
  ASSERT_EQ(e.edits.scales.size(), 1u);
  const LinkRetiming both = retime_links(p, a, r.links, 8);
  EXPECT_EQ(e.edits.transfer_factor, both.factor);
  EXPECT_THAT(e.notes.back(), ::testing::HasSubstr("no hardware known"));
  // A layout edit needs the degree the job ran: none is known here.
  ASSERT_TRUE(parse_whatif_line("--tp 4", r, error));
  try {
    whatif_edits(p, a, {}, {}, r, nullptr, "link_edits");
    FAIL() << "no tensor-parallel degree is known";
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), ::testing::HasSubstr("link_edits: --tp needs the tensor-parallel degree"));
  }
}

TEST(LinkEdits, LatencyReplacesTheFittedOne) {
  const Profile p = two_sizes();
  LinkEdit e;
  std::string error;
  ASSERT_TRUE(parse_link_edit("intra_node=55", true, e, error)) << error;
  const LinkRetiming r = retime_links(p, measure::analyze(p), std::span<const LinkEdit>(&e, 1), 8);
  EXPECT_NEAR(r.factor[0][0], 1110.0 / 1010.0, 1e-6);  // 2 × 55 + 1000 µs
}

TEST(LinkEdits, AnEditIsReadOrRefusedInOneLine) {
  LinkEdit e;
  std::string error;
  ASSERT_TRUE(parse_link_edit("network=50", false, e, error));
  EXPECT_EQ(e.link, LinkClass::kInterNode);
  EXPECT_DOUBLE_EQ(e.bandwidth_Bps, 50e9);
  ASSERT_TRUE(parse_link_edit("inter_node=2.5", true, e, error));
  EXPECT_DOUBLE_EQ(e.latency_s, 2.5e-6);
  EXPECT_FALSE(parse_link_edit("pcie=16", false, e, error));
  EXPECT_EQ(error, "--link pcie=16: expected intra_node (nvlink) or inter_node (network) =GB/s");
  EXPECT_FALSE(parse_link_edit("nvlink=0", false, e, error));
  EXPECT_FALSE(parse_link_edit("nvlink=-1", true, e, error));
}

model::ParallelConfig data_parallel(int dp, int tp = 1) {
  model::ParallelConfig c;
  c.tp = tp;
  c.pp = c.cp = c.ep = 1;
  c.dp = dp;
  c.gpus = tp * dp;
  return c;
}

// The two ranks' all-reduces are their data-parallel group's. With four replicas on one node the ring has
// 2(n − 1) = 6 steps and moves 2(n − 1)/n = 1.5 × the buffer (nccl-tests' bus-bandwidth factor,
// doc/PERFORMANCE.md): 6 × 5 + 1.5 × 1000 = 1530 µs of the 10 MB all-reduce's 1010, 30 + 3000 of the
// 20 MB one's 2010, from the profile's own fit (α 5 µs per step, 10 GB/s).
TEST(DataParallelEdit, TheGroupsCollectivesAreRetimedForTheNewReplicas) {
  const Profile p = two_sizes();
  const measure::Analysis a = measure::analyze(p);
  const LinkRetiming r = retime_data_parallel(p, a, data_parallel(2), 4, std::nullopt, "two_sizes");
  EXPECT_EQ(r.retimed, 4);
  EXPECT_NEAR(r.factor[0][0], 1530.0 / 1010.0, 1e-6);
  EXPECT_NEAR(r.factor[1][1], 3030.0 / 2010.0, 1e-6);
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_THAT(r.notes[0], ::testing::HasSubstr("dp 2 -> 4"));
  EXPECT_THAT(r.notes[1], ::testing::HasSubstr("4 data-parallel collectives re-timed for 4 ranks on the "
                                               "intra_node link"));
  // The two ranks arrive together: no spread, so four replicas wait no longer for their last member.
  EXPECT_THAT(r.notes[2], ::testing::HasSubstr("spread of σ 0.0 µs; the last of 4 arrives 0.0 µs later"));
  measure::ReplayEdits edits;
  edits.transfer_factor = r.factor;
  measure::ReplayOptions options;
  options.keep_times = true;
  const measure::Replay w = measure::replay(p, a, edits, options);
  EXPECT_EQ(w.times[0].end[0], 10 * us + 1530 * us);
  EXPECT_EQ(w.times[1].end[1], 10 * us + 1530 * us + 3030 * us);
}

// Two replicas whose members arrive 20 µs apart in each all-reduce: a pooled arrival spread of σ = √(2 × 10²)
// = 14.14 µs. Eight replicas wait for the last of eight draws instead of two: σ × (1.42360 − 0.56419) =
// 12.15 µs later (Harter 1961's expected maxima of 8 and 2 standard normals), added to each member's transfer
// on top of the all-reduce re-timed for eight (a ring over 8 moves 1.75 × the buffer, 2(n − 1)/n, against 1 ×
// over 2, each collective at its own measured bus bandwidth: no α-β fit of one message size).
TEST(DataParallelEdit, ALargerGroupWaitsForALaterLastMember) {
  test::ProfileBuilder b("skewed_pair");
  for (std::int32_t r = 0; r < 2; ++r) {
    b.rank(r, 2);
    for (std::int64_t seq = 1; seq <= 2; ++seq) {
      const TimeNs base = (seq - 1) * 2000 * us;
      const TimeNs arrive = base + (r == 0 ? 10 : 30) * us;
      const std::int64_t k = b.launch(r, 1, base, base + 5 * us, 20, arrive, base + 1040 * us, kNccl);
      b.collective(r, k, arrive, base + 1040 * us, "allreduce", "dp0", seq, 2, 10'000'000, "[0, 1]");
    }
  }
  const Profile p = b.finish();
  const measure::Analysis a = measure::analyze(p);
  const LinkRetiming r = retime_data_parallel(p, a, data_parallel(2), 8, std::nullopt, "skewed_pair");
  ASSERT_EQ(r.notes.size(), 3u);
  EXPECT_THAT(r.notes[2],
              ::testing::HasSubstr("spread of σ 14.1 µs; the last of 8 arrives 12.2 µs later than "
                                   "the last of 2"));
  EXPECT_THAT(r.notes[2], ::testing::HasSubstr("added to 4 of their transfers"));
  const double later_us = std::sqrt(200.0) * (1.42360 - 0.56419);
  // The last to arrive (rank 1) transfers for its whole 1010 µs kernel.
  const std::uint32_t last = p.ranks()[1].collectives[0].activity;
  EXPECT_NEAR(r.factor[1][last], 1.75 + later_us / 1010.0, 1e-4);
}

// Sixteen replicas no longer fit on a node of eight: the group moves to the network. No collective of the
// profile ran there, so each keeps the efficiency it reached on NVLink and takes the GPU's network / NVLink
// ratio; without a GPU known, the edit is refused in one line naming the profile.
TEST(DataParallelEdit, AGroupThatLeavesTheNodeTakesTheNetworksRatio) {
  const Profile p = two_sizes();
  const measure::Analysis a = measure::analyze(p);
  model::HardwareSpec hw;
  hw.name = "test-gpu";
  hw.gpus_per_node = 8;
  hw.intra_node_gbps = 400;
  hw.inter_node_gbps = 50;
  const LinkRetiming r = retime_data_parallel(p, a, data_parallel(2), 16, hw, "two_sizes");
  const model::Efficiencies eff = model::defaults_for(hw);
  const model::Link nvlink = model::intra_node_link(eff), network = model::inter_node_link(eff);
  const model::Link after{5e-6 * network.alpha_s / nvlink.alpha_s,
                          10e9 * network.bandwidth_Bps / nvlink.bandwidth_Bps};
  const double expected = model::collective_time(model::Collective::kAllReduce, 1e7, 16, after) / 1010e-6;
  EXPECT_NEAR(r.factor[0][0], expected, 1e-6 * expected);
  EXPECT_GT(r.factor[0][0], 8.0);  // an eighth of the bandwidth, 1.875 × the bytes, 15 steps
  EXPECT_THAT(r.notes[1],
              ::testing::HasSubstr("on the inter_node link from their own intra_node link scaled by "
                                   "test-gpu's inter_node / intra_node ratio"));
  try {
    retime_data_parallel(p, a, data_parallel(2), 16, std::nullopt, "two_sizes");
    ADD_FAILURE() << "a group moved to the network with no GPU known was re-timed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("two_sizes: --dp 16 puts the data-parallel group on the "
                                                "inter_node link"));
  }
  EXPECT_THROW(retime_data_parallel(p, a, data_parallel(2), 1, hw, "two_sizes"), Error);
}

// Under tp 2 the same all-reduces are tensor-parallel: a data-parallel edit leaves them as they were. A job
// of dp 1 holds no data-parallel collective to re-time: refused in one line.
TEST(DataParallelEdit, OtherGroupsKeepTheirTimes) {
  const Profile p = two_sizes();
  EXPECT_THROW(
      retime_data_parallel(p, measure::analyze(p), data_parallel(1, 2), 4, std::nullopt, "two_sizes"), Error);
  const LinkRetiming r =
      retime_data_parallel(p, measure::analyze(p), data_parallel(2, 2), 4, std::nullopt, "two_sizes");
  EXPECT_EQ(r.retimed, 0);
  EXPECT_THAT(r.notes.back(), ::testing::HasSubstr("no collective of the profile is data-parallel"));
}

// Two ranks of one tensor-parallel pair: per rank a GEMM of 400 µs, an element-wise kernel of 100 µs, then
// the pair's exchanges of 10 MB and 20 MB (all-reduces, or with sequence parallelism a reduce-scatter and an
// all-gather of the same sizes: their ring of two moves the same bytes, 1010 and 2010 µs at α 5 µs, 10 GB/s).
// Two ranks of one group, each step a GEMM of 400 µs, an element-wise kernel of 100 µs, the group's exchanges
// FIRST and SECOND (10 MB and 20 MB, 1010 and 2010 µs) and, with OPTIMIZER, an optimizer kernel of 50 µs
// launched inside "Optimizer.step#AdamW.step".
Profile pair_of_ranks(const std::string& name, const char* first, const char* second, bool optimizer) {
  test::ProfileBuilder b(name);
  for (std::int32_t r = 0; r < 2; ++r) {
    b.rank(r, 2);
    b.launch(r, 1, 0, 4 * us, 7, 10 * us, 410 * us, "ampere_sgemm_128x64_nn");
    b.launch(r, 1, 5 * us, 8 * us, 7, 410 * us, 510 * us,
             "void at::native::vectorized_elementwise_kernel<4>");
    const std::int64_t k1 = b.launch(r, 1, 9 * us, 12 * us, 20, 510 * us, 1520 * us, kNccl);
    b.collective(r, k1, 510 * us, 1520 * us, first, "c0", 1, 2, 10'000'000);
    const std::int64_t k2 = b.launch(r, 1, 13 * us, 16 * us, 20, 1520 * us, 3530 * us, kNccl);
    b.collective(r, k2, 1520 * us, 3530 * us, second, "c0", 2, 2, 20'000'000);
    if (!optimizer) continue;
    b.range(r, 1, RangeKind::kCpuOp, 17 * us, 25 * us, "Optimizer.step#AdamW.step");
    b.launch(r, 1, 18 * us, 21 * us, 7, 3530 * us, 3580 * us,
             "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<4>");
  }
  return b.finish();
}

Profile tensor_pair(bool sequence_parallel) {
  return sequence_parallel ? pair_of_ranks("tp_pair_sp", "reducescatter", "allgather", false)
                           : pair_of_ranks("tp_pair", "allreduce", "allreduce", false);
}

// tp 2 -> 4: the GEMM takes half its time; the element-wise kernel keeps its own (replicated without sequence
// parallelism); the exchanges are re-timed for four members on NVLink, 6 × 5 + 1.5 × 1000 = 1530 µs of 1010
// (nccl-tests' ring all-reduce, doc/PERFORMANCE.md). With sequence parallelism the element-wise kernel is
// split too. A ring reduce-scatter or all-gather of n takes (n − 1) α + (n − 1)/n × S / B (nccl-tests' size
// is the gathered buffer): the pair's 1010 and 2010 µs fit α 10 µs per step and 5 GB/s, and four members take
// 3 × 10 + 0.75 × 2000 = 1530 µs of the 10 MB one's 1010.
TEST(TensorParallelEdit, KernelsAreSplitAndTheGroupsCollectivesRetimed) {
  const Profile p = tensor_pair(false);
  const measure::Analysis a = measure::analyze(p);
  const LinkRetiming r = retime_tensor_parallel(p, a, data_parallel(1, 2), 4, std::nullopt, "tp_pair");
  const Rank& rank = p.ranks()[0];
  for (std::uint32_t i = 0; i < rank.activities.size(); ++i) {
    const std::string name(p.str(rank.activities[i].name));
    if (name == "ampere_sgemm_128x64_nn") {
      EXPECT_DOUBLE_EQ(r.factor[0][i], 0.5);
    } else if (name.find("elementwise") != std::string::npos) {
      EXPECT_DOUBLE_EQ(r.factor[0][i], 1.0);
    }
  }
  const std::uint32_t all_reduce = rank.collectives[0].activity;
  EXPECT_NEAR(r.factor[0][all_reduce], 1530.0 / 1010.0, 1e-6);
  EXPECT_THAT(r.notes[0], ::testing::HasSubstr("tp 2 -> 4"));
  EXPECT_THAT(r.notes[1], ::testing::HasSubstr("4 tensor-parallel collectives re-timed for 4 ranks"));

  const Profile sp = tensor_pair(true);
  const LinkRetiming s =
      retime_tensor_parallel(sp, measure::analyze(sp), data_parallel(1, 2), 4, std::nullopt, "tp_pair_sp");
  const Rank& sp_rank = sp.ranks()[0];
  for (std::uint32_t i = 0; i < sp_rank.activities.size(); ++i) {
    if (std::string(sp.str(sp_rank.activities[i].name)).find("elementwise") != std::string::npos) {
      EXPECT_DOUBLE_EQ(s.factor[0][i], 0.5);
    }
  }
  EXPECT_THAT(s.notes[0], ::testing::HasSubstr("element-wise and norm kernels (sequence parallelism)"));
  EXPECT_NEAR(s.factor[0][sp_rank.collectives[0].activity], 1530.0 / 1010.0, 1e-6);
  EXPECT_THAT(s.notes[1], ::testing::HasSubstr("α 10.00 µs per step, bus bandwidth 5.0 GB/s"));
}

// A GEMM keeps its fixed cost per kernel when its work is split: on a GPU of 6 µs per GEMM kernel (the H100
// preset's, fitted to the Azure cuBLASLt size sweep), a GEMM of t µs split from tp 2 to 4 takes
// (t - 6) / 2 + 6 µs; element-wise kernels without sequence parallelism stay as measured.
TEST(TensorParallelEdit, AGemmKeepsItsFixedCostPerKernel) {
  const Profile p = tensor_pair(false);
  model::HardwareSpec hw = model::load_hardware("h100-sxm");
  ASSERT_DOUBLE_EQ(hw.gemm_overhead_us, 6.0);
  const LinkRetiming r =
      retime_tensor_parallel(p, measure::analyze(p), data_parallel(1, 2), 4, hw, "tp_pair");
  const Rank& rank = p.ranks()[0];
  int gemms = 0;
  for (std::uint32_t i = 0; i < rank.activities.size(); ++i) {
    const Activity& a = rank.activities[i];
    if (std::string(p.str(a.name)) != "ampere_sgemm_128x64_nn") continue;
    const double t = static_cast<double>(a.duration());
    EXPECT_NEAR(r.factor[0][i] * t, (t - 6000.0) / 2 + 6000.0, 1e-6);
    ++gemms;
  }
  EXPECT_GT(gemms, 0);
  EXPECT_THAT(r.notes[0], ::testing::HasSubstr("GEMMs keep their fixed 6 us per kernel (h100-sxm's)"));
}

// Four ranks, tp 2 × dp 2 (Megatron-LM order: tensor-parallel pairs [0, 1] and [2, 3], data-parallel pairs
// [0, 2] and [1, 3]), each pair exchanging 10 MB and 20 MB in 1010 and 2010 µs (α 5 µs, 10 GB/s, as above).
// Widening tp to 4 re-times the tensor-parallel all-reduces for four (1530 of 1010 µs) and the gradients'
// for a shard half as large over the same two replicas, now 4 ranks apart on one node of 8: 2 × 5 + 500 =
// 510 µs of 1010.
TEST(TensorParallelEdit, TheGradientsShrinkWithTheShard) {
  test::ProfileBuilder b("tp2_dp2");
  for (std::int32_t r = 0; r < 4; ++r) {
    b.rank(r, 4);
    const std::string tp_group = r < 2 ? "[0, 1]" : "[2, 3]";
    const std::string dp_group = r % 2 == 0 ? "[0, 2]" : "[1, 3]";
    TimeNs t = 0;
    std::int64_t seq = 1;
    for (const auto& [comm, members] :
         {std::pair{"tp" + tp_group, tp_group}, std::pair{"dp" + dp_group, dp_group}}) {
      for (const std::int64_t bytes : {10'000'000, 20'000'000}) {
        const TimeNs d = bytes == 10'000'000 ? 1010 * us : 2010 * us;
        const std::int64_t k = b.launch(r, 1, t, t + 3 * us, 20, t + 10 * us, t + 10 * us + d, kNccl);
        b.collective(r, k, t + 10 * us, t + 10 * us + d, "allreduce", comm, seq++, 2, bytes, members);
        t += 10 * us + d;
      }
    }
  }
  const Profile p = b.finish();
  model::HardwareSpec hw;
  hw.name = "test-gpu";
  hw.gpus_per_node = 8;
  hw.intra_node_gbps = 400;
  hw.inter_node_gbps = 50;
  const LinkRetiming r =
      retime_layout(p, measure::analyze(p), data_parallel(2, 2), LayoutEdit{.tp = 4, .dp = 0}, hw, "tp2_dp2");
  const Rank& rank = p.ranks()[0];
  ASSERT_EQ(rank.collectives.size(), 4u);
  EXPECT_NEAR(r.factor[0][rank.collectives[0].activity], 1530.0 / 1010.0, 1e-6);  // tensor-parallel, 10 MB
  EXPECT_NEAR(r.factor[0][rank.collectives[2].activity], 510.0 / 1010.0, 1e-6);   // gradients, 10 MB
  EXPECT_NEAR(r.factor[0][rank.collectives[3].activity], 1010.0 / 2010.0, 1e-6);  // gradients, 20 MB
  EXPECT_THAT(::testing::PrintToString(r.notes), ::testing::HasSubstr("gradients of a 1/4 shard"));
}

// A profile of tp 1 holds no tensor-parallel collective to re-time: refused in one line that names it and
// says what predicts that layout.
TEST(TensorParallelEdit, AProfileWithoutTensorParallelismIsRefused) {
  const Profile p = two_sizes();
  try {
    retime_tensor_parallel(p, measure::analyze(p), data_parallel(2), 2, std::nullopt, "two_sizes");
    ADD_FAILURE() << "tp 1 re-timed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("two_sizes: --tp 2: the profile ran tp 1"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("meshscope compare PROFILE --tp 2"));
  }
}

// Two data-parallel ranks, each step a GEMM of 400 µs and an element-wise kernel of 100 µs, the gradients'
// exchange (all-reduces of 10 MB and 20 MB, or with a sharded optimizer a reduce-scatter and an all-gather of
// the same sizes), then an optimizer kernel of 50 µs launched inside "Optimizer.step#AdamW.step".
Profile data_parallel_pair(bool sharded) {
  return sharded ? pair_of_ranks("dp_pair_sharded", "reducescatter", "allgather", true)
                 : pair_of_ranks("dp_pair", "allreduce", "allreduce", true);
}

// The factor on each activity of rank 0 named NAME (all of them equal), -1 when none is.
double factor_of(const Profile& p, const LinkRetiming& r, std::string_view name) {
  const Rank& rank = p.ranks()[0];
  double f = -1;
  for (std::uint32_t i = 0; i < rank.activities.size(); ++i)
    if (p.str(rank.activities[i].name) == name) f = r.factor[0][i];
  return f;
}

// dp 2 -> 4 with the global batch kept: each rank runs half its sequences, so its GEMM takes half its work
// beyond the fixed 6 µs per kernel (h100-sxm's), (400 - 6) / 2 + 6 = 203 µs, and the element-wise kernel
// half its time; the optimizer kernel updates the same parameters (all-reduced gradients: every rank holds
// them all) and stays; the gradients' all-reduces carry the same bytes over four ranks, 6 × 5 + 1.5 × 1000 =
// 1530 µs of 1010 (the profile's own fit, α 5 µs per step, 10 GB/s). With a sharded optimizer (the
// gradients reduce-scattered) each rank updates half as many parameters: the optimizer kernel halves too.
TEST(DataParallelEdit, AFixedGlobalBatchSplitsEachRanksWorkOverTheNewReplicas) {
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  const char* kGemm = "ampere_sgemm_128x64_nn";
  const char* kElementwise = "void at::native::vectorized_elementwise_kernel<4>";
  const char* kOptimizer = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<4>";
  const Profile p = data_parallel_pair(false);
  const measure::Analysis a = measure::analyze(p);
  const LinkRetiming r =
      retime_layout(p, a, data_parallel(2), LayoutEdit{.dp = 4, .batch_scale = 0.5}, hw, "dp_pair");
  EXPECT_NEAR(factor_of(p, r, kGemm), 203.0 / 400.0, 1e-9);
  EXPECT_DOUBLE_EQ(factor_of(p, r, kElementwise), 0.5);
  EXPECT_DOUBLE_EQ(factor_of(p, r, kOptimizer), 1.0);
  EXPECT_NEAR(r.factor[0][p.ranks()[0].collectives[0].activity], 1530.0 / 1010.0, 1e-6);
  EXPECT_THAT(r.notes[0], ::testing::HasSubstr("4 compute kernels outside the optimizer x 0.5"));
  EXPECT_THAT(r.notes[0], ::testing::HasSubstr("2 kernels launched inside the optimizer's ranges x 1"));
  EXPECT_THAT(r.notes[1], ::testing::HasSubstr("dp 2 -> 4: each rank's batch x 0.5, so the global batch 1x"));

  const Profile sharded = data_parallel_pair(true);
  const LinkRetiming s = retime_layout(sharded, measure::analyze(sharded), data_parallel(2),
                                       LayoutEdit{.dp = 4, .batch_scale = 0.5}, hw, "dp_pair_sharded");
  EXPECT_DOUBLE_EQ(factor_of(sharded, s, kOptimizer), 0.5);
  EXPECT_THAT(s.notes[0], ::testing::HasSubstr("the optimizer sharded over data parallelism"));
  // Weak scaling (each rank's batch as measured) leaves the compute alone but for the sharded optimizer's.
  const LinkRetiming weak =
      retime_data_parallel(sharded, measure::analyze(sharded), data_parallel(2), 4, hw, "dp_pair_sharded");
  EXPECT_DOUBLE_EQ(factor_of(sharded, weak, kGemm), 1.0);
  EXPECT_DOUBLE_EQ(factor_of(sharded, weak, kOptimizer), 0.5);

  // The replay: the step's compute shrinks, its exchange grows.
  measure::ReplayEdits edits;
  edits.transfer_factor = r.factor;
  const measure::Replay before = measure::replay(p, a, {}, {});
  const measure::Replay after = measure::replay(p, a, edits, {});
  ASSERT_FALSE(after.steps.empty());
  EXPECT_EQ(before.steps[0].replayed_ns, 3580 * us);
  // 10 + 203 + 50 + 1530 + 3030 + 50 µs: the kernels follow each other on their streams.
  EXPECT_EQ(after.steps[0].replayed_ns, (10 + 203 + 50 + 1530 + 3030 + 50) * us);
}

// --batch F alone: the tensor-parallel exchange carries F × the activations, re-timed in its own group on its
// own link (the pair's fit, α 5 µs per step, 10 GB/s: the 10 MB all-reduce at 20 MB takes 2 × 5 + 2000 =
// 2010 µs of 1010); --keep-global-batch needs --dp and the measured data-parallel degree, and not --batch.
TEST(DataParallelEdit, ABatchScaleGrowsTheActivationsExchanges) {
  const Profile p = tensor_pair(false);
  const measure::Analysis a = measure::analyze(p);
  const LinkRetiming r =
      retime_layout(p, a, data_parallel(1, 2), LayoutEdit{.batch_scale = 2}, std::nullopt, "tp_pair");
  EXPECT_NEAR(r.factor[0][p.ranks()[0].collectives[0].activity], 2010.0 / 1010.0, 1e-6);
  EXPECT_DOUBLE_EQ(factor_of(p, r, "ampere_sgemm_128x64_nn"), 2.0);
  EXPECT_THAT(r.notes[0], ::testing::HasSubstr("no kernel was launched inside an optimizer range"));
  // What counts as the optimizer's range: PyTorch's, and names that say so; not a range holding the step.
  EXPECT_TRUE(measure::optimizer_range_name("Optimizer.step#AdamW.step"));
  EXPECT_TRUE(measure::optimizer_range_name("Optimizer.zero_grad#SGD.zero_grad"));
  EXPECT_TRUE(measure::optimizer_range_name("optimizer"));
  EXPECT_TRUE(measure::optimizer_range_name("DistributedOptimizer.step"));
  EXPECT_FALSE(measure::optimizer_range_name("train_step_with_optimizer"));
  EXPECT_THAT(r.notes[1],
              ::testing::HasSubstr("4 tensor-parallel collectives re-timed for 2x their message"));

  // --keep-global-batch needs the measured data-parallel degree.
  WhatifRequest request;
  std::string error;
  Workload workload;
  workload.tp = 2;
  ASSERT_TRUE(parse_whatif_line("--dp 4 --keep-global-batch", request, error));
  EXPECT_THROW(
      {
        try {
          whatif_edits(p, a, {}, workload, request, nullptr, "tp_pair");
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr("--keep-global-batch needs the data-parallel degree"));
          throw;
        }
      },
      Error);
  EXPECT_THROW(retime_layout(p, a, data_parallel(1, 2), LayoutEdit{.batch_scale = -1}, std::nullopt, "x"),
               Error);
}

// Two pipeline stages (pp 2, Megatron-LM order: the stages tp·cp·dp = 1 apart), stage 0 sending its
// activations to stage 1, 10 MB in 1000 µs. With each rank's batch doubled the message doubles: one message
// size fits no α-β line, so the send keeps its own measured bus bandwidth with no latency and takes 2000 µs;
// the tensor-parallel or data-parallel groups it does not belong to leave it alone.
TEST(DataParallelEdit, ABatchScaleGrowsThePipelinesSends) {
  test::ProfileBuilder b("pp_pair");
  const char* kSend = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";
  for (std::int32_t r = 0; r < 2; ++r) {
    b.rank(r, 2);
    const std::int64_t k = b.launch(r, 1, 0, 5 * us, 20, 10 * us, 1010 * us, kSend);
    b.collective(r, k, 10 * us, 1010 * us, r == 0 ? "send" : "recv", "p0", 1, 2, 10'000'000, "[0, 1]");
  }
  const Profile p = b.finish();
  model::ParallelConfig layout = data_parallel(1);
  layout.pp = 2;
  layout.gpus = 2;
  const LinkRetiming r =
      retime_layout(p, measure::analyze(p), layout, LayoutEdit{.batch_scale = 2}, std::nullopt, "pp_pair");
  for (std::size_t rank = 0; rank < 2; ++rank)
    EXPECT_NEAR(r.factor[rank][p.ranks()[rank].collectives[0].activity], 2.0, 1e-9) << rank;
  EXPECT_EQ(r.retimed, 2);
  bool noted = false;
  for (const auto& note : r.notes)
    noted |= note.find("2 pipeline collectives re-timed for 2x") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace meshscope::compare
