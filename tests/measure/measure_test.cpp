// Measured analysis on small profiles written with ProfileWriter: breakdown definitions, classification,
// steps by correlation id, idle breakdown, collectives across ranks, and the plain notes for bad input.
#include "analysis/measure/measure.hpp"

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "profiler/error.hpp"
#include "profiler/profile_writer.hpp"

namespace meshscope::measure {
namespace {

using ::testing::HasSubstr;
using V = std::vector<Interval>;

std::filesystem::path temp_profile(const std::string& name) {
  std::filesystem::create_directories(MESHSCOPE_TEST_TMP);
  auto path = std::filesystem::path(MESHSCOPE_TEST_TMP) /
              ("measure_" + name + "-" + std::to_string(::getpid()) + ".msdb");
  std::filesystem::remove(path);
  return path;
}

// Writes a tiny profile: GPU work is launched by an API call (correlation ids assigned here).
class Builder {
 public:
  explicit Builder(const std::filesystem::path& path)
      : path_(path),
        owned_(std::make_unique<ProfileWriter>(path, WriterOptions::synchronous())),
        writer_(*owned_) {}

  void rank(std::int32_t rank, std::int64_t world_size = kNull, std::int64_t clock_base_ns = 0) {
    RankInfo info;
    info.rank = rank;
    info.world_size = world_size;
    info.source_file = "test";
    info.rank_source = "test";
    info.clock_base_ns = clock_base_ns;
    writer_.set_rank(info);
  }

  // A kernel on STREAM over [start, end), launched at LAUNCH (no launch recorded when LAUNCH is kNull).
  std::int64_t kernel(std::int32_t rank, std::int64_t stream, TimeNs start, TimeNs end, std::string_view name,
                      TimeNs launch = kNull, ActivityKind kind = ActivityKind::kKernel) {
    ActivityRecord a;
    a.rank = rank;
    a.kind = kind;
    a.stream = stream;
    a.start_ns = start;
    a.end_ns = end;
    a.name = writer_.intern(name);
    if (launch != kNull) {
      a.correlation = ++correlation_;
      ApiCallRecord api;
      api.rank = rank;
      api.pid = 1;
      api.tid = 1;
      api.start_ns = launch;
      api.end_ns = launch + 1;
      api.name = writer_.intern("cudaLaunchKernel");
      api.correlation = a.correlation;
      writer_.add_api_call(api);
    }
    return writer_.add_activity(a);
  }

  void collective(std::int32_t rank, std::int64_t activity_id, TimeNs start, TimeNs end, std::string_view op,
                  std::string_view communicator, std::int64_t seq, std::int64_t group_size,
                  std::int64_t bytes) {
    CollectiveRecord c;
    c.rank = rank;
    c.activity_id = activity_id;
    c.communicator = writer_.intern(communicator);
    c.seq = seq;
    c.op = writer_.intern(op);
    c.in_bytes = bytes;
    c.out_bytes = bytes;
    c.group_size = group_size;
    c.start_ns = start;
    c.end_ns = end;
    writer_.add_collective(c);
  }

  // A collectives row an importer made from the kernel's name alone (no communicator, sizes or group).
  void name_collective(std::int32_t rank, std::int64_t activity_id, TimeNs start, TimeNs end,
                       std::string_view op) {
    CollectiveRecord c;
    c.rank = rank;
    c.activity_id = activity_id;
    c.op = writer_.intern(op);
    c.start_ns = start;
    c.end_ns = end;
    c.source = "kernel_name";
    writer_.add_collective(c);
  }

  void range(std::int32_t rank, RangeKind kind, TimeNs start, TimeNs end, std::string_view name,
             std::int64_t step = kNull) {
    RangeRecord r;
    r.rank = rank;
    r.kind = kind;
    r.pid = 1;
    r.tid = 1;
    r.start_ns = start;
    r.end_ns = end;
    r.name = writer_.intern(name);
    r.step = step;
    writer_.add_range(r);
  }

  // Commits and closes the writer (it holds the file until destroyed), then loads the profile.
  Profile finish() {
    writer_.commit();
    owned_.reset();
    return Profile::load(path_);
  }

 private:
  std::filesystem::path path_;
  std::unique_ptr<ProfileWriter> owned_;
  ProfileWriter& writer_;
  std::int64_t correlation_ = 1000;
};

const RankResult& rank_of(const Analysis& a, std::int32_t rank) {
  for (const auto& r : a.ranks) {
    if (r.rank == rank) return r;
  }
  throw std::runtime_error("no such rank");
}

TEST(Measure, BreakdownFollowsTheDefinitions) {
  Builder b(temp_profile("breakdown"));
  b.rank(0);
  b.kernel(0, 7, 0, 100, "gemm_kernel", 0);
  b.kernel(0, 7, 150, 250, "elementwise_kernel", 0);
  b.kernel(0, 20, 50, 200, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
           0);
  b.kernel(0, 7, 300, 320, "Memcpy DtoD (Device -> Device)", 0, ActivityKind::kMemcpy);
  b.kernel(0, 7, 320, 400, "Event Sync", 0, ActivityKind::kSync);
  b.kernel(0, 9, 60, 60, "zero_length_kernel", 0);
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const Breakdown& t = rank_of(a, 0).total;
  EXPECT_EQ(t.compute_ns, 200);
  EXPECT_EQ(t.comm_ns, 150);
  EXPECT_EQ(t.memory_ns, 20);
  EXPECT_EQ(t.sync_ns, 80);
  EXPECT_EQ(t.busy_ns, 270);
  EXPECT_EQ(t.span_ns, 320) << "sync records do not extend the span";
  EXPECT_EQ(t.idle_ns, 50);
  EXPECT_EQ(t.overlap_ns, 100);
  EXPECT_EQ(t.exposed_comm_ns, 50);
  EXPECT_EQ(rank_of(a, 0).exposed_comm, (V{{100, 150}}));
  EXPECT_EQ(t.activities, 6);

  Options hta;
  hta.hta_compatible = true;
  const Analysis ha = analyze(p, hta);
  const Breakdown& h = rank_of(ha, 0).total;
  EXPECT_EQ(h.span_ns, 0) << "HTA rounds inward to whole µs: everything here is shorter than 1 µs";
}

TEST(Measure, HtaCompatibleRoundsInwardOnTheSourceClock) {
  Builder b(temp_profile("hta_rounding"));
  const TimeNs base = 1'700'000'000'000'000'123;  // a base that is not a whole µs of the profile clock
  b.rank(0, kNull, base);
  b.kernel(0, 7, base + 1'500, base + 3'700, "gemm_kernel", base);
  b.kernel(0, 7, base + 4'000, base + 6'000, "Event Sync", base, ActivityKind::kSync);
  const Profile p = b.finish();
  Options hta;
  hta.hta_compatible = true;
  const Analysis ha = analyze(p, hta);
  const Breakdown& h = rank_of(ha, 0).total;
  EXPECT_EQ(h.start_ns, base + 2'000);
  EXPECT_EQ(h.end_ns, base + 6'000);
  EXPECT_EQ(h.compute_ns, 1'000 + 2'000) << "HTA counts sync records as computation";
  const Analysis na = analyze(p);
  const Breakdown& n = rank_of(na, 0).total;
  EXPECT_EQ(n.compute_ns, 2'200);
  EXPECT_EQ(n.sync_ns, 2'000);
}

TEST(Measure, ClassificationUsesMetadataThenNames) {
  Builder b(temp_profile("classify"));
  b.rank(0);
  const char* comm_names[] = {
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
      "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
      "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)",
      "void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
      "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)",
      "void deep_ep::internode::combine<true, 8, 4>(...)",
      "void pplx::combineKernel<__nv_bfloat16>(...)",
      "nvshmemi_proxy_kernel",
      "void nvshmemi_alltoall_kernel<int>(...)",
      "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 8>(...)",
      "void c10d::symmetric_memory::multimem_all_reduce_kernel<c10::BFloat16, 4>(...)",
      "void mscclpp::allreduce6<float>(...)",
      "void vllm::cross_device_reduce_1stage<half, 8>(...)",
  };
  TimeNs t = 0;
  for (const char* name : comm_names) {
    b.kernel(0, 7, t, t + 10, name, 0);
    t += 20;
  }
  b.kernel(0, 7, t, t + 10, "void at::native::reduce_kernel<512, 1>(...)", 0);  // compute despite "reduce"
  t += 20;
  const auto linked = b.kernel(0, 7, t, t + 10, "fused_collective_kernel", 0);  // comm by metadata only
  b.collective(0, linked, t, t + 10, "allreduce", "0", 1, kNull, 1024);
  t += 20;
  b.kernel(0, 7, t, t + 10, "my_token_shuffle", 0);
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const RankResult& r = rank_of(a, 0);
  const Rank& rank = p.ranks()[0];
  ASSERT_EQ(r.classes.size(), rank.activities.size());
  for (std::size_t i = 0; i < rank.activities.size(); ++i) {
    const std::string& name = p.str(rank.activities[i].name);
    const ActivityClass expected = name.find("at::native") != std::string::npos || name == "my_token_shuffle"
                                       ? ActivityClass::kCompute
                                       : ActivityClass::kComm;
    EXPECT_EQ(r.classes[i], expected) << name;
  }
  Options user;
  user.user_rules.push_back(parse_rule("comm:prefix:my_token_shuffle:mylib"));
  const Analysis ua = analyze(p, user);
  const RankResult& u = rank_of(ua, 0);
  for (std::size_t i = 0; i < rank.activities.size(); ++i) {
    if (p.str(rank.activities[i].name) == "my_token_shuffle") {
      EXPECT_EQ(u.classes[i], ActivityClass::kComm);
    }
  }
  EXPECT_THROW(parse_rule("network:prefix:x"), Error);
  EXPECT_THROW(parse_rule("comm:regex:x"), Error);
  EXPECT_THROW(parse_rule("comm:prefix"), Error);
  EXPECT_EQ(op_from_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)"), "allreduce");
  EXPECT_EQ(op_from_kernel_name("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), "sendrecv");
  EXPECT_EQ(op_from_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), "");
}

TEST(Measure, StepsFollowCorrelationIdsNotGpuTimestamps) {
  Builder b(temp_profile("steps"));
  b.rank(0);
  b.range(0, RangeKind::kStep, 1'000'000, 2'000'000, "ProfilerStep#1", 1);
  b.range(0, RangeKind::kStep, 2'000'000, 3'000'000, "ProfilerStep#2", 2);
  b.range(0, RangeKind::kStep, 3'000'000, 4'000'000, "ProfilerStep#3", 3);
  b.kernel(0, 7, 500'000, 900'000, "warmup_kernel", 100'000);     // launched before any step
  b.kernel(0, 7, 1'500'000, 2'600'000, "step1_gemm", 1'100'000);  // runs into step 2's CPU window
  b.kernel(0, 20, 2'600'000, 2'800'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)",
           1'900'000);  // step 1 too
  b.kernel(0, 7, 2'800'000, 3'500'000, "step2_gemm", 2'100'000);
  b.kernel(0, 7, 3'600'000, 3'700'000, "orphan_kernel");  // no launch in the profile
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const RankResult& r = rank_of(a, 0);
  EXPECT_EQ(r.step_source, "ProfilerStep");
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].number, 1);
  EXPECT_EQ(r.steps[0].gpu.start_ns, 1'500'000);
  EXPECT_EQ(r.steps[0].gpu.end_ns, 2'800'000);
  EXPECT_EQ(r.steps[0].gpu.compute_ns, 1'100'000);
  EXPECT_EQ(r.steps[0].gpu.comm_ns, 200'000);
  EXPECT_EQ(r.steps[0].gpu.exposed_comm_ns, 200'000);
  EXPECT_EQ(r.steps[0].gpu.idle_ns, 0);
  EXPECT_EQ(r.steps[1].gpu.compute_ns, 700'000);
  EXPECT_EQ(r.steps[1].gpu.start_ns, 2'800'000);
  EXPECT_EQ(r.steps[2].gpu.activities, 0);
  EXPECT_EQ(r.outside_steps.activities, 2);
  EXPECT_EQ(r.unlinked_activities, 1);
  bool empty_step_note = false, outside_note = false;
  for (const auto& note : a.notes) {
    empty_step_note |= note.find("1 step(s) launched no GPU work (step 3)") != std::string::npos;
    outside_note |= note.find("were not launched from inside a step") != std::string::npos;
  }
  EXPECT_TRUE(empty_step_note);
  EXPECT_TRUE(outside_note);

  // HTA keeps work launched up to the end of the last step, and drops work without a launch in the trace.
  Options hta;
  hta.hta_compatible = true;
  const Analysis ha = analyze(p, hta);
  const RankResult& h = rank_of(ha, 0);
  EXPECT_TRUE(h.hta_filtered);
  EXPECT_EQ(h.hta_dropped, 1) << "orphan_kernel has no launch in the trace";
  EXPECT_EQ(h.total.activities, 4) << "warmup_kernel, launched in the trace before the first step, stays";
}

TEST(Measure, NvtxStepsWhenThereIsNoProfilerStep) {
  Builder b(temp_profile("nvtx_steps"));
  b.rank(0);
  b.range(0, RangeKind::kNvtx, 1'000, 2'000, "train_step 7");
  b.range(0, RangeKind::kNvtx, 1'100, 1'200, "forward");
  b.range(0, RangeKind::kNvtx, 2'000, 3'000, "train_step 8");
  b.kernel(0, 7, 1'500, 1'600, "k1", 1'100);
  b.kernel(0, 7, 2'500, 2'700, "k2", 2'100);
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const RankResult& r = rank_of(a, 0);
  EXPECT_EQ(r.step_source, "nvtx: train_step 7");
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[0].number, 7);
  EXPECT_EQ(r.steps[1].number, 8);
  EXPECT_EQ(r.steps[1].gpu.compute_ns, 200);
}

TEST(Measure, IdleBreakdownPerStream) {
  Builder b(temp_profile("idle"));
  b.rank(0);
  b.kernel(0, 7, 0, 10'000, "k1", 0);
  b.kernel(0, 7, 60'000, 70'000, "k2", 50'000);   // launched after k1 ended: host-bound gap of 50 µs
  b.kernel(0, 7, 72'000, 80'000, "k3", 5'000);    // queued early, 2 µs gap: kernel gap
  b.kernel(0, 7, 200'000, 210'000, "k4", 6'000);  // queued early, 120 µs gap: other (waited on something)
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const RankResult& r = rank_of(a, 0);
  ASSERT_EQ(r.streams.size(), 1u);
  const StreamIdle& s = r.streams[0];
  EXPECT_EQ(s.host_bound_ns, 50'000);
  EXPECT_EQ(s.kernel_gap_ns, 2'000);
  EXPECT_EQ(s.other_ns, 120'000);
  EXPECT_EQ(s.gaps, 3);
  EXPECT_EQ(s.busy_ns, 38'000);
  EXPECT_EQ(s.span_ns, 210'000);
  EXPECT_EQ(s.idle_ns, r.total.idle_ns);
  ASSERT_FALSE(r.kernels.empty());
  EXPECT_EQ(p.str(r.kernels[0].name), "k1");
}

TEST(Measure, CollectivesAcrossRanks) {
  Builder b(temp_profile("collectives"));
  constexpr std::int64_t kBytes = 1'000'000;
  for (std::int32_t rank = 0; rank < 4; ++rank) {
    b.rank(rank, 4);
    // Instance seq 1: rank 3 arrives 30 µs late; all end together at 130 µs.
    const TimeNs start1 = rank == 3 ? 30'000 : 0;
    auto k1 = b.kernel(rank, 20, start1, 130'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0);
    b.collective(rank, k1, start1, 130'000, "allreduce", "0", 1, 4, kBytes);
    // Instance seq 2: rank 1 arrives 10 µs late.
    const TimeNs start2 = rank == 1 ? 210'000 : 200'000;
    auto k2 = b.kernel(rank, 20, start2, 300'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", 0);
    b.collective(rank, k2, start2, 300'000, "allreduce", "0", 2, 4, kBytes);
    // A communicator without sequence numbers: matched by order.
    auto k3 = b.kernel(rank, 21, 400'000 + rank * 1'000, 450'000, "ncclDevKernel_AllGather_RING_LL(x)", 0);
    b.collective(rank, k3, 400'000 + rank * 1'000, 450'000, "allgather", "1", kNull, 4, 4 * kBytes);
    // A communicator of 8 ranks, only 4 of which are in this profile.
    auto k4 = b.kernel(rank, 21, 500'000, 510'000, "ncclDevKernel_AllGather_RING_LL(x)", 0);
    b.collective(rank, k4, 500'000, 510'000, "allgather", "2", 1, 8, kBytes);
  }
  b.rank(4, 8);  // a rank without GPU activity
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const CollectiveReport& c = a.collectives;
  EXPECT_EQ(c.matched, 3);
  EXPECT_EQ(c.incomplete, 1);
  EXPECT_EQ(c.instances.size(), 4u);
  ASSERT_FALSE(c.stragglers.empty());
  EXPECT_EQ(c.stragglers[0].rank, 3);
  EXPECT_EQ(c.stragglers[0].times_last, 2) << "last in seq 1 and in the order-matched all-gather";
  EXPECT_EQ(c.stragglers[0].late_ns, 30'000 + 1'000);
  EXPECT_EQ(c.stragglers[0].caused_wait_ns, 3 * 30'000 + (3'000 + 2'000 + 1'000));
  EXPECT_EQ(c.stragglers[1].rank, 1);
  EXPECT_EQ(c.stragglers[1].times_last, 1);
  EXPECT_EQ(c.stragglers[1].caused_wait_ns, 3 * 10'000);
  // Rank 0 waited 30 µs (seq 1), 10 µs (seq 2) and 3 µs (all-gather).
  EXPECT_EQ(rank_of(a, 0).collective_wait_ns, 43'000);
  EXPECT_EQ(rank_of(a, 3).collective_wait_ns, 10'000);
  // The first instance in time: skew 30 µs, rank 0's wait 30 µs and transfer 100 µs.
  const CollectiveInstance& first = c.instances[0];
  EXPECT_TRUE(first.by_seq);
  EXPECT_EQ(first.skew_ns, 30'000);
  EXPECT_EQ(first.last_rank, 3);
  ASSERT_EQ(first.member_count, 4u);
  EXPECT_EQ(c.members[first.first_member].wait_ns, 30'000);
  EXPECT_EQ(c.members[first.first_member].transfer_ns, 100'000);
  EXPECT_FALSE(c.instances[2].by_seq);

  // Statistics: allreduce 1 MB over 4 ranks, durations 130, 100 (x3), 100, 90 µs (x1)...
  const CollectiveStats* ar = nullptr;
  for (const auto& s : c.stats) {
    if (s.op == "allreduce") ar = &s;
  }
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->count, 8);
  EXPECT_EQ(ar->group_size, 4);
  EXPECT_EQ(ar->bytes, kBytes);
  EXPECT_EQ(ar->total_ns, 3 * 130'000 + 100'000 + 3 * 100'000 + 90'000);
  EXPECT_EQ(ar->p50_ns, 100'000);
  EXPECT_EQ(ar->p95_ns, 130'000);
  const double mean_s = static_cast<double>(ar->total_ns) / 8 / 1e9;
  EXPECT_NEAR(ar->algbw_gbps, kBytes / mean_s / 1e9, 1e-9);
  EXPECT_NEAR(ar->busbw_gbps, ar->algbw_gbps * 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(busbw_factor("allgather", 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(busbw_factor("broadcast", 8), 1.0);

  bool no_gpu = false, missing = false;
  for (const auto& note : a.notes) {
    no_gpu |= note.find("rank 4 has no GPU activity") != std::string::npos;
    missing |= note.find("peers missing from the profile") != std::string::npos;
  }
  EXPECT_TRUE(no_gpu);
  EXPECT_TRUE(missing);
}

// A 2023-style trace: no communicator, sequence number or size; every rank runs the same NCCL SendRecv
// kernels in the same order on the same stream, launched from PyTorch's nccl:all_to_all. Rank 2 is late
// twice.
TEST(Measure, MatchingWithoutMetadataNamesTheRankOthersWaitedFor) {
  Builder b(temp_profile("no_metadata"));
  const char* kernel = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)";
  for (std::int32_t rank = 0; rank < 4; ++rank) {
    b.rank(rank, 4);
    for (int i = 0; i < 3; ++i) {
      const TimeNs base = 1'000'000 * (i + 1);
      const TimeNs launch = base - 50'000;
      const TimeNs late = rank == 2 && i < 2 ? 40'000 : (rank == 0 && i == 2 ? 5'000 : 0);
      const TimeNs start = base + late;
      const TimeNs end = base + 300'000 + (rank % 2) * 3'000;  // every member ends within 3 µs
      b.range(rank, RangeKind::kCpuOp, launch - 10'000, launch + 10'000, "c10d::alltoall_base_");
      b.range(rank, RangeKind::kCpuOp, launch - 5'000, launch + 5'000, "nccl:all_to_all");
      const auto k = b.kernel(rank, 84, start, end, kernel, launch);
      b.name_collective(rank, k, start, end, "sendrecv");
    }
  }
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const CollectiveReport& c = a.collectives;
  ASSERT_EQ(c.stats.size(), 1u);
  EXPECT_EQ(c.stats[0].op, "alltoall") << "the CPU side says what the generic SendRecv kernel ran";
  EXPECT_EQ(c.stats[0].op_source, OpSource::kCpuOp);
  EXPECT_FALSE(c.stats[0].from_metadata);
  EXPECT_EQ(c.stats[0].group_size, 0) << "unknown";
  EXPECT_EQ(c.stats[0].bytes, 0) << "unknown";
  EXPECT_EQ(c.stats[0].count, 12);
  EXPECT_EQ(c.identity[0][0].op, "alltoall");
  EXPECT_EQ(c.matched, 3);
  EXPECT_EQ(c.matched_by_end_time, 3);
  EXPECT_EQ(c.incomplete, 0);
  EXPECT_EQ(c.unpaired_ops, 0);
  ASSERT_EQ(c.instances.size(), 3u);
  EXPECT_TRUE(c.instances[0].by_end_time);
  EXPECT_TRUE(c.instances[0].complete);
  EXPECT_EQ(c.instances[0].member_count, 4u);
  EXPECT_EQ(c.instances[0].last_rank, 2);
  ASSERT_FALSE(c.stragglers.empty());
  EXPECT_EQ(c.stragglers[0].rank, 2);
  EXPECT_EQ(c.stragglers[0].times_last, 2);
  EXPECT_EQ(c.stragglers[0].late_ns, 2 * 40'000);
  EXPECT_EQ(c.stragglers[0].caused_wait_ns, 2 * 3 * 40'000);
  EXPECT_EQ(rank_of(a, 1).collective_wait_ns, 2 * 40'000 + 5'000);
  EXPECT_EQ(rank_of(a, 2).collective_wait_ns, 5'000);
  // The kernels are communication by their name (the NCCL rule), not by metadata: there is none.
  const auto& comm = a.reasons[static_cast<int>(ActivityClass::kComm)];
  ASSERT_EQ(comm.size(), 1u);
  EXPECT_EQ(comm[0].evidence, Evidence::kRule);
  EXPECT_EQ(a.rules[static_cast<std::size_t>(comm[0].rule)].pattern, "ncclKernel");
}

// Nsight Systems: PyTorch's calls are NVTX ranges carrying their op id, and each process numbers its own
// streams (the 2-GPU export of ../shared/traces/nsys_nccl: rank 0's NCCL stream 24, rank 1's 32). The
// operation comes from the range's operator name, and the streams are paired by the order of first use.
TEST(Measure, MatchingWithoutMetadataAcrossProcessesThatNumberStreamsApart) {
  Builder b(temp_profile("nvtx_streams"));
  const char* kernel = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    b.rank(rank, 2);
    for (int i = 0; i < 3; ++i) {
      const TimeNs base = 1'000'000 * (i + 1);
      const TimeNs launch = base - 50'000;
      const TimeNs start = base + (rank == 1 ? 20'000 : 0);
      const TimeNs end = base + 300'000 + rank * 2'000;
      b.range(rank, RangeKind::kNvtx, launch - 10'000, launch + 10'000,
              "c10d::alltoall_base_, op_id = " + std::to_string(100 + 10 * i));
      b.range(rank, RangeKind::kNvtx, launch - 5'000, launch + 5'000,
              "nccl:all_to_all, op_id = " + std::to_string(102 + 10 * i));
      const auto k = b.kernel(rank, rank == 0 ? 24 : 32, start, end, kernel, launch);
      b.name_collective(rank, k, start, end, "sendrecv");
    }
  }
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const CollectiveReport& c = a.collectives;
  ASSERT_EQ(c.stats.size(), 1u);
  EXPECT_EQ(c.stats[0].op, "alltoall");
  EXPECT_EQ(c.stats[0].op_source, OpSource::kCpuOp);
  EXPECT_EQ(c.matched, 3);
  EXPECT_EQ(c.incomplete, 0);
  ASSERT_EQ(c.instances.size(), 3u);
  EXPECT_EQ(c.instances[0].last_rank, 1);
  EXPECT_EQ(rank_of(a, 0).collective_wait_ns, 3 * 20'000);
}

// Sampled traces drop events: counting in order would pair the wrong operations; end times tell.
TEST(Measure, MatchingWithoutMetadataChecksEndTimes) {
  Builder b(temp_profile("end_times"));
  const char* kernel = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  b.rank(0, 2);
  b.rank(1, 2);
  for (int i = 0; i < 3; ++i) {
    const TimeNs end = 1'000'000 * (i + 1);
    const auto k = b.kernel(0, 7, end - 200'000, end, kernel, end - 250'000);
    b.name_collective(0, k, end - 200'000, end, "allgather");
  }
  for (int i = 1; i < 3; ++i) {  // rank 1's first all-gather is not in the trace
    const TimeNs end = 1'000'000 * (i + 1) + (i == 1 ? 3'000 : -2'000);
    const auto k = b.kernel(1, 7, end - 150'000, end, kernel, end - 250'000);
    b.name_collective(1, k, end - 150'000, end, "allgather");
  }
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  const CollectiveReport& c = a.collectives;
  EXPECT_EQ(c.stats[0].op_source, OpSource::kKernelName);
  EXPECT_EQ(c.matched, 2);
  EXPECT_EQ(c.unpaired_ops, 1);
  EXPECT_EQ(c.incomplete, 1);
  ASSERT_EQ(c.instances.size(), 3u);
  EXPECT_EQ(c.instances[0].member_count, 1u) << "rank 0's first all-gather has no partner";
  EXPECT_EQ(c.instances[1].member_count, 2u);
  EXPECT_EQ(c.instances[1].skew_ns, 53'000);  // starts 1.800 ms and 1.853 ms, ends 3 µs apart
}

TEST(Measure, NameOnlyCommunicationEntersTheStatistics) {
  Builder b(temp_profile("name_only"));
  b.rank(0);
  b.kernel(0, 20, 0, 100,
           "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", 0);
  b.kernel(0, 20, 200, 400,
           "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", 0);
  const Profile p = b.finish();
  const Analysis a = analyze(p);
  ASSERT_EQ(a.collectives.stats.size(), 1u);
  EXPECT_EQ(a.collectives.stats[0].op, "sendrecv");
  EXPECT_FALSE(a.collectives.stats[0].from_metadata);
  EXPECT_EQ(a.collectives.stats[0].count, 2);
  EXPECT_TRUE(std::isnan(a.collectives.stats[0].algbw_gbps));
  EXPECT_THAT(p.str(a.top_kernels[static_cast<int>(ActivityClass::kComm)][0].name), HasSubstr("SendRecv"));
}

TEST(Measure, ThreadedMatchesSingleThreaded) {
  Builder b(temp_profile("threads"));
  for (std::int32_t rank = 0; rank < 5; ++rank) {
    b.rank(rank);
    for (int i = 0; i < 50; ++i) {
      const TimeNs t = i * 1'000 + rank * 7;
      b.kernel(rank, 7 + (i % 3), t, t + 600 + (i * 37) % 500,
               i % 4 == 0 ? "ncclDevKernel_Generic(x)" : "gemm", t);
    }
  }
  const Profile p = b.finish();
  Options one, many;
  one.threads = 1;
  many.threads = 3;
  const Analysis a = analyze(p, one), c = analyze(p, many);
  ASSERT_EQ(a.ranks.size(), c.ranks.size());
  for (std::size_t i = 0; i < a.ranks.size(); ++i) {
    EXPECT_EQ(a.ranks[i].total.busy_ns, c.ranks[i].total.busy_ns);
    EXPECT_EQ(a.ranks[i].total.exposed_comm_ns, c.ranks[i].total.exposed_comm_ns);
    EXPECT_EQ(a.ranks[i].exposed_comm, c.ranks[i].exposed_comm);
  }
}

}  // namespace
}  // namespace meshscope::measure
