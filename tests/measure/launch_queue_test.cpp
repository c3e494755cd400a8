// Launch latency, queue length per stream and host-bound launches on a profile worked out by hand, and on
// real traces checked against the measured analysis' own idle breakdown.
#include "analysis/measure/launch_queue.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/measure/measure.hpp"

#include "tests/measure/profile_builder.hpp"

namespace meshscope::measure {
namespace {

using test::ProfileBuilder;
using ::testing::HasSubstr;

TEST(LaunchQueue, LatencyQueueAndHostBoundLaunches) {
  ProfileBuilder b("launch_queue");
  b.rank(0);
  b.range(0, 1, RangeKind::kCpuOp, 0, 45, "aten::mm");
  b.range(0, 1, RangeKind::kCpuOp, 190, 220, "aten::relu");
  b.launch(0, 1, 0, 10, 7, 20, 100, "k1");      // stream empty: launch latency 10
  b.launch(0, 1, 30, 40, 7, 100, 150, "k2");    // queued behind k1: latency 60
  b.launch(0, 1, 200, 210, 7, 215, 250, "k3");  // launched after the stream ran dry at 150
  b.activity(0, 7, 300, 310, "unlinked");       // no launch in the profile
  const Profile p = b.finish();
  const Rank& r = p.ranks()[0];
  const LaunchIndex index = index_launches(r);
  const RankLaunches rl = analyze_rank_launches(r, index);
  EXPECT_EQ(rl.activities, 4);
  EXPECT_EQ(rl.linked, 3);
  EXPECT_EQ(rl.latency.count, 3);
  EXPECT_EQ(rl.latency.min_ns, 5);
  EXPECT_EQ(rl.latency.max_ns, 60);
  EXPECT_EQ(rl.latency.p50_ns, 10);
  EXPECT_EQ(rl.latency.mean_ns, 25);
  EXPECT_EQ(rl.latency.histogram[1], 3) << "all under 1 µs";
  EXPECT_EQ(rl.dry_latency.count, 2);  // k1 and k3
  EXPECT_EQ(rl.dry_latency.max_ns, 10);

  ASSERT_EQ(rl.host_bound.size(), 1u);
  const HostBoundLaunch& h = rl.host_bound[0];
  EXPECT_EQ(p.str(r.activities[h.activity].name), "k3");
  EXPECT_EQ(h.gap_ns, 65);
  EXPECT_EQ(h.launched_after_dry_ns, 50);
  EXPECT_EQ(h.device_idle_ns, 65) << "no other stream: the whole GPU waited";
  ASSERT_NE(h.op, kNoIndex);
  EXPECT_EQ(p.str(r.ranges[h.op].name), "aten::relu");
  EXPECT_EQ(rl.host_bound_ns, 65);
  ASSERT_EQ(rl.host_bound_ops.size(), 1u);
  EXPECT_EQ(p.str(rl.host_bound_ops[0].name), "aten::relu");

  ASSERT_EQ(rl.streams.size(), 1u);
  const StreamQueue& q = rl.streams[0];
  EXPECT_EQ(q.launches, 3);
  EXPECT_EQ(q.max_length, 2);
  EXPECT_EQ(q.span_ns, 250);
  EXPECT_EQ(q.empty_ns, 50);
  EXPECT_DOUBLE_EQ(q.mean_length, 270.0 / 250.0);

  const std::vector<QueuePoint> points = queue_length(r, index, 0);
  const std::vector<std::pair<TimeNs, std::int32_t>> expected = {{0, 1},   {30, 2},  {100, 1},
                                                                 {150, 0}, {200, 1}, {250, 0}};
  ASSERT_EQ(points.size(), expected.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].time_ns, expected[i].first) << i;
    EXPECT_EQ(points[i].length, expected[i].second) << i;
  }

  const LaunchAnalysis all = analyze_launches(p, 1);
  EXPECT_EQ(all.latency.count, 3);
  ASSERT_EQ(all.notes.size(), 1u);
  EXPECT_THAT(all.notes[0], HasSubstr("1 of 4 GPU activities have no launch call"));
}

// A host-bound launch while another stream of the device kept running: its stream waited 65 ns, but the GPU
// ran dry only from the end of stream 9's kernel [160, 180) to k3's start at 215: 35 ns.
TEST(LaunchQueue, GpuRanDryOnlyWhereNoStreamOfTheDeviceRan) {
  ProfileBuilder b("launch_device_dry");
  b.rank(0);
  b.range(0, 1, RangeKind::kCpuOp, 190, 220, "aten::relu");
  b.launch(0, 1, 0, 10, 7, 20, 150, "k1");
  b.launch(0, 1, 200, 210, 7, 215, 250, "k3");  // stream 7 idle [150, 215)
  b.launch(0, 2, 100, 110, 9, 160, 180, "other");
  const Profile p = b.finish();
  const RankLaunches rl = analyze_rank_launches(p.ranks()[0], index_launches(p.ranks()[0]));
  ASSERT_EQ(rl.host_bound.size(), 1u);  // a stream's first activity has no earlier work to run dry
  const HostBoundLaunch* k3 = nullptr;
  for (const auto& h : rl.host_bound) {
    if (p.str(p.ranks()[0].activities[h.activity].name) == "k3") k3 = &h;
  }
  ASSERT_NE(k3, nullptr);
  EXPECT_EQ(k3->gap_ns, 65);
  EXPECT_EQ(k3->device_idle_ns, 35);
  EXPECT_EQ(rl.device_idle_ns, 35);
  EXPECT_EQ(rl.device_dry_launches, 1);
  ASSERT_FALSE(rl.host_bound_ops.empty());
  EXPECT_EQ(rl.host_bound_ops[0].device_idle_ns, 35);
}

// What the launching thread did while its stream sat dry, worked by hand: the stream ran dry at 20 and the
// next launch call started at 100 (a window of 80 ns). Thread 1 was in OS calls poll [30, 70), read [75, 90)
// and futex [95, 140) (5 ns of it in the window): 60 ns, the longest poll's 40; it ran on a core over
// [0, 35) and [60, 200): 15 + 40 = 55 ns of the window, so it was off its core 25 ns. Thread 2's launch has
// no OS record: its off-core time is unknown, not zero.
TEST(LaunchQueue, WhatTheLaunchingThreadDidWhileItsStreamSatDry) {
  ProfileBuilder b("launch_os");
  b.rank(0);
  b.launch(0, 1, 0, 5, 7, 10, 20, "a");
  b.launch(0, 1, 100, 105, 7, 110, 120, "b");
  b.range(0, 1, RangeKind::kOsRuntime, 30, 70, "poll");
  b.range(0, 1, RangeKind::kOsRuntime, 75, 90, "read");
  b.range(0, 1, RangeKind::kOsRuntime, 95, 140, "futex");
  b.thread_activity(0, 1, ThreadActivityKind::kOnCpu, 0, 35);
  b.thread_activity(0, 1, ThreadActivityKind::kOnCpu, 60, 200);
  b.thread_activity(0, 1, ThreadActivityKind::kSample, 80, 80);
  b.launch(0, 2, 0, 5, 8, 10, 20, "c");
  b.launch(0, 2, 100, 105, 8, 110, 115, "d");
  const Profile p = b.finish();
  const Rank& rank = p.ranks()[0];
  EXPECT_EQ(p.counts().os_runtime, 3);
  const RankLaunches l = analyze_rank_launches(rank, index_launches(rank));
  ASSERT_EQ(l.host_bound.size(), 2u);
  auto launch_of = [&](std::string_view kernel) -> const HostBoundLaunch& {
    return p.str(rank.activities[l.host_bound[0].activity].name) == kernel ? l.host_bound[0]
                                                                           : l.host_bound[1];
  };
  const HostBoundLaunch& on_1 = launch_of("b");
  const HostBoundLaunch& on_2 = launch_of("d");
  ASSERT_EQ(p.str(rank.activities[on_1.activity].name), "b");
  EXPECT_EQ(on_1.launched_after_dry_ns, 80);
  ASSERT_NE(on_1.os_call, kNoIndex);
  EXPECT_EQ(p.str(rank.ranges[on_1.os_call].name), "poll");
  EXPECT_EQ(on_1.os_call_ns, 40);
  EXPECT_EQ(on_1.os_calls_total_ns, 60);
  EXPECT_EQ(on_1.off_cpu_ns, 25);
  EXPECT_EQ(on_2.os_call, kNoIndex);
  EXPECT_EQ(on_2.off_cpu_ns, -1);
  EXPECT_EQ(l.host_bound_in_os_calls_ns, 60);
  EXPECT_EQ(l.host_bound_off_cpu_ns, 25);
  EXPECT_EQ(l.host_bound_scheduled, 1);
  const auto rows = longest_host_bound(rank, l, 10);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    if (p.str(row.kernel) != "b") continue;
    EXPECT_EQ(p.str(row.os_call), "poll");
    EXPECT_EQ(row.off_cpu_ns, 25);
  }
}

TEST(LaunchQueue, HistogramBuckets) {
  EXPECT_EQ(LatencyStats::bucket_start_ns(1), 0);
  EXPECT_EQ(LatencyStats::bucket_start_ns(2), 1000);
  EXPECT_EQ(LatencyStats::bucket_start_ns(3), 2000);
  EXPECT_EQ(LatencyStats::bucket_start_ns(4), 4000);
  ProfileBuilder b("launch_buckets");
  b.rank(0);
  b.launch(0, 1, 0, 10, 7, 5, 20, "early");             // started before its call returned: negative
  b.launch(0, 1, 100, 110, 7, 1'610, 1'700, "late");    // 1.5 µs
  b.launch(0, 1, 2'000, 2'010, 7, 5'010, 5'100, "lt");  // 3 µs
  const Profile p = b.finish();
  const RankLaunches rl = analyze_rank_launches(p.ranks()[0], index_launches(p.ranks()[0]));
  EXPECT_EQ(rl.latency.histogram[0], 1);
  EXPECT_EQ(rl.latency.histogram[2], 1);
  EXPECT_EQ(rl.latency.histogram[3], 1);
}

// Real traces: every linked activity has a latency, the queue never goes negative and ends empty, and the GPU
// idle of the host-bound launches on each stream is the "host-bound" idle of the stream in measure::analyze
// (the same rule, computed apart).
TEST(LaunchQueue, RealTracesAgreeWithTheIdleBreakdown) {
  const auto dir = std::filesystem::path(MESHSCOPE_TEST_TMP) / "launch_queue_real";
  std::filesystem::create_directories(dir);
  for (const std::string input : {"kineto/resnet50_num_workers_0", "hta/negative_queue_length_values_check",
                                  "hta/trace_filter", "hta/critical_path/alexnet"}) {
    SCOPED_TRACE(input);
    std::string name = input;
    for (char& c : name) c = c == '/' ? '_' : c;
    const auto out = dir / (name + "-" + std::to_string(::getpid()) + ".msdb");
    const auto log = dir / (name + "-" + std::to_string(::getpid()) + ".log");
    const std::string command =
        fmt::format("\"{}\" import \"{}\" -o \"{}\" > \"{}\" 2>&1", MESHSCOPE_BINARY,
                    (std::filesystem::path(MESHSCOPE_SHARED_DIR) / "traces" / input).string(), out.string(),
                    log.string());
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const Profile p = Profile::load(out);
    const Analysis a = analyze(p);
    const LaunchAnalysis l = analyze_launches(p, 1);
    ASSERT_EQ(l.ranks.size(), p.ranks().size());
    std::int64_t linked = 0, host_bound = 0;
    for (const RankLaunches& rl : l.ranks) {
      const Rank& r = p.ranks()[rl.rank_index];
      const LaunchIndex index = index_launches(r);
      EXPECT_EQ(rl.latency.count, rl.linked);
      EXPECT_LE(rl.linked, rl.activities);
      EXPECT_LE(rl.latency.min_ns, rl.latency.p50_ns);
      EXPECT_LE(rl.latency.p50_ns, rl.latency.p90_ns);
      EXPECT_LE(rl.latency.p90_ns, rl.latency.p99_ns);
      EXPECT_LE(rl.latency.p99_ns, rl.latency.max_ns);
      std::int64_t in_histogram = 0;
      for (const std::int64_t n : rl.latency.histogram) in_histogram += n;
      EXPECT_EQ(in_histogram, rl.latency.count);
      linked += rl.linked;
      std::vector<TimeNs> gap_by_stream(r.streams.size(), 0);
      for (const HostBoundLaunch& h : rl.host_bound) {
        for (std::size_t s = 0; s < r.streams.size(); ++s) {
          if (h.activity >= r.streams[s].first && h.activity < r.streams[s].first + r.streams[s].count)
            gap_by_stream[s] += h.gap_ns;
        }
        EXPECT_GT(h.gap_ns, 0);
        EXPECT_GT(h.launched_after_dry_ns, 0);
        EXPECT_GE(h.device_idle_ns, 0);
        EXPECT_LE(h.device_idle_ns, h.gap_ns);
        EXPECT_EQ(index.api_of_activity[h.activity], h.api);
      }
      host_bound += static_cast<std::int64_t>(rl.host_bound.size());
      const RankResult& rr = a.ranks[rl.rank_index];
      // Each period with the whole GPU idle is counted once, so together they fit in the rank's idle time.
      EXPECT_LE(rl.device_idle_ns, rr.total.idle_ns);
      for (std::uint32_t s = 0; s < r.streams.size(); ++s) {
        EXPECT_EQ(gap_by_stream[s], rr.streams[s].host_bound_ns) << "rank " << r.rank << " stream " << s;
        const std::vector<QueuePoint> points = queue_length(r, index, s);
        for (const QueuePoint& q : points) EXPECT_GE(q.length, 0);
        if (!points.empty()) {
          EXPECT_EQ(points.back().length, 0);
        }
        std::int32_t most = 0;
        for (const QueuePoint& q : points) most = std::max(most, q.length);
        EXPECT_EQ(most, rl.streams[s].max_length);
        EXPECT_LE(rl.streams[s].empty_ns, rl.streams[s].span_ns);
      }
    }
    EXPECT_GT(linked, 0);
    EXPECT_EQ(l.latency.count, linked);
    if (input == "kineto/resnet50_num_workers_0") {
      EXPECT_GT(host_bound, 0) << "a data-loading ResNet step leaves the GPU waiting for the CPU";
    }
  }
}

}  // namespace
}  // namespace meshscope::measure
