// Launch links (CPU operator -> API call -> GPU activity) and range totals, on small profiles written with
// ProfileWriter.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "analysis/measure/launches.hpp"
#include "analysis/measure/range_totals.hpp"
#include "collectors/import/import.hpp"
#include "profiler/profile_writer.hpp"

namespace meshscope::measure {
namespace {

class Writer {
 public:
  explicit Writer(const std::string& name)
      : path_(std::filesystem::path(MESHSCOPE_TEST_TMP) /
              ("launches_" + name + "-" + std::to_string(::getpid()) + ".msdb")) {
    std::filesystem::create_directories(MESHSCOPE_TEST_TMP);
    std::filesystem::remove(path_);
    writer_ = std::make_unique<ProfileWriter>(path_, WriterOptions::synchronous());
    RankInfo info;
    info.rank = 0;
    info.source_file = "test";
    info.rank_source = "test";
    writer_->set_rank(info);
  }
  std::int64_t kernel(std::int64_t stream, TimeNs start, TimeNs end, std::string_view name,
                      std::int64_t correlation = kNull, ActivityKind kind = ActivityKind::kKernel) {
    ActivityRecord a;
    a.kind = kind;
    a.stream = stream;
    a.start_ns = start;
    a.end_ns = end;
    a.name = writer_->intern(name);
    a.correlation = correlation;
    return writer_->add_activity(a);
  }
  void api(std::int64_t tid, TimeNs start, TimeNs end, std::int64_t correlation,
           std::int64_t external_id = kNull) {
    ApiCallRecord c;
    c.pid = 1;
    c.tid = tid;
    c.start_ns = start;
    c.end_ns = end;
    c.name = writer_->intern("cudaLaunchKernel");
    c.correlation = correlation;
    c.external_id = external_id;
    writer_->add_api_call(c);
  }
  void range(std::int64_t tid, TimeNs start, TimeNs end, std::string_view name,
             RangeKind kind = RangeKind::kCpuOp, std::int64_t external_id = kNull) {
    RangeRecord r;
    r.kind = kind;
    r.pid = 1;
    r.tid = tid;
    r.start_ns = start;
    r.end_ns = end;
    r.name = writer_->intern(name);
    r.external_id = external_id;
    writer_->add_range(r);
  }
  void collective(std::int64_t activity_id, TimeNs start, TimeNs end) {
    CollectiveRecord c;
    c.activity_id = activity_id;
    c.communicator = writer_->intern("comm");
    c.seq = 1;
    c.op = writer_->intern("allreduce");
    c.group_size = 1;
    c.start_ns = start;
    c.end_ns = end;
    writer_->add_collective(c);
  }
  Profile finish() {
    writer_->commit();
    writer_.reset();
    return Profile::load(path_);
  }

 private:
  std::filesystem::path path_;
  std::unique_ptr<ProfileWriter> writer_;
};

std::uint32_t range_named(const Profile& p, const Rank& rank, std::string_view name) {
  for (std::uint32_t i = 0; i < rank.ranges.size(); ++i) {
    if (p.str(rank.ranges[i].name) == name) return i;
  }
  return kNoIndex;
}

std::uint32_t api_at(const Rank& rank, TimeNs start) {
  for (std::uint32_t i = 0; i < rank.api_calls.size(); ++i) {
    if (rank.api_calls[i].start_ns == start) return i;
  }
  return kNoIndex;
}

std::uint32_t activity_at(const Rank& rank, TimeNs start) {
  for (std::uint32_t i = 0; i < rank.activities.size(); ++i) {
    if (rank.activities[i].start_ns == start) return i;
  }
  return kNoIndex;
}

TEST(Launches, LinksOperatorsApiCallsAndKernels) {
  Writer w("links");
  // Thread 1: a step annotation over two operators; mm has a nested child op.
  w.range(1, 0, 1000, "ProfilerStep#1", RangeKind::kStep);
  w.range(1, 10, 400, "aten::mm", RangeKind::kCpuOp, 5);
  w.range(1, 20, 300, "aten::addmm_impl", RangeKind::kCpuOp);
  w.range(1, 500, 900, "aten::add", RangeKind::kCpuOp, 7);
  w.api(1, 30, 40, 1001, 5);  // External id 5: aten::mm, although addmm_impl is the innermost op
  w.api(1, 600, 610, 1002);   // no External id: innermost op open then, aten::add
  w.api(1, 950, 960, 1003);   // inside the step only: innermost range (the step)
  w.api(2, 100, 110, 1004);   // a thread with no CPU ranges
  w.api(1, 920, 930, 1005);   // a graph launch: two kernels share its correlation id
  w.kernel(7, 1000, 1100, "gemm", 1001);
  w.kernel(7, 1200, 1300, "add", 1002);
  w.kernel(7, 1400, 1450, "k3", 1003);
  w.kernel(8, 1100, 1200, "k4", 1004);
  w.kernel(8, 1500, 1510, "graph_a", 1005);
  w.kernel(8, 1520, 1530, "graph_b", 1005);
  w.kernel(8, 1600, 1610, "unlinked", 4242);
  const Profile p = w.finish();
  const Rank& rank = p.ranks().at(0);
  const LaunchIndex x = index_launches(rank);

  ASSERT_EQ(x.api_of_activity.size(), rank.activities.size());
  EXPECT_EQ(x.api_of_activity[activity_at(rank, 1000)], api_at(rank, 30));
  EXPECT_EQ(x.api_of_activity[activity_at(rank, 1100)], api_at(rank, 100));
  EXPECT_EQ(x.api_of_activity[activity_at(rank, 1600)], kNoIndex);
  const auto graph = x.activities_of(api_at(rank, 920));
  ASSERT_EQ(graph.size(), 2u);
  EXPECT_EQ(p.str(rank.activities[graph[0]].name), "graph_a");
  EXPECT_EQ(p.str(rank.activities[graph[1]].name), "graph_b");

  EXPECT_EQ(x.op_of_api[api_at(rank, 30)], range_named(p, rank, "aten::mm"));
  EXPECT_EQ(x.op_of_api[api_at(rank, 600)], range_named(p, rank, "aten::add"));
  EXPECT_EQ(x.op_of_api[api_at(rank, 950)], range_named(p, rank, "ProfilerStep#1"));
  EXPECT_EQ(x.op_of_api[api_at(rank, 100)], kNoIndex);

  ASSERT_EQ(x.threads.size(), 2u);
  EXPECT_EQ(x.threads[0].tid, 1);
  EXPECT_NE(x.threads[0].track, kNoIndex);
  EXPECT_EQ(x.threads[0].calls.size(), 4u);
  EXPECT_EQ(x.threads[1].tid, 2);
  EXPECT_EQ(x.threads[1].track, kNoIndex);
  EXPECT_EQ(x.thread_of_api[api_at(rank, 100)], 1u);

  std::vector<std::uint32_t> inside;
  api_calls_inside(rank, x, range_named(p, rank, "aten::mm"), inside);
  EXPECT_EQ(inside, (std::vector<std::uint32_t>{api_at(rank, 30)}));
  inside.clear();
  api_calls_inside(rank, x, range_named(p, rank, "ProfilerStep#1"), inside);
  EXPECT_EQ(inside.size(), 4u) << "every call of thread 1 lies inside the step";
}

TEST(RangeTotals, ClipsToTheRangeAndFollowsTheDefinitions) {
  Writer w("range");
  w.kernel(7, 0, 100, "gemm");
  w.kernel(7, 150, 250, "gemm");
  const auto comm = w.kernel(20, 50, 200, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  w.collective(comm, 50, 200);
  w.kernel(7, 300, 320, "Memcpy DtoD (Device -> Device)", kNull, ActivityKind::kMemcpy);
  w.kernel(9, 10, 5000, "long_kernel_before_the_range");  // reaches into the range from far before
  const Profile p = w.finish();
  const Analysis a = analyze(p);
  const RangeIndex index = index_ranges(p);

  // [80, 310): gemm 80..100 and 150..250, long kernel 80..310, comm 80..200, memcpy 300..310.
  const RangeTotals t = range_totals(p, a, index, 80, 310);
  ASSERT_EQ(t.ranks.size(), 1u);
  const RangeRankTotal& r = t.ranks[0];
  EXPECT_EQ(r.compute_ns, 230);  // the long kernel covers the whole range
  EXPECT_EQ(r.comm_ns, 120);
  EXPECT_EQ(r.memory_ns, 10);
  EXPECT_EQ(r.overlap_ns, 120);
  EXPECT_EQ(r.exposed_comm_ns, 0);
  EXPECT_EQ(r.busy_ns, 230);
  EXPECT_EQ(r.window_ns, 230);
  EXPECT_EQ(r.idle_ns, 0);
  EXPECT_EQ(r.events, 5);
  const auto& compute = t.classes[static_cast<std::size_t>(ActivityClass::kCompute)];
  EXPECT_EQ(compute.events, 3);
  EXPECT_EQ(compute.sum_ns, 20 + 100 + 230);
  EXPECT_EQ(compute.busy_ns, 230);
  ASSERT_FALSE(t.kernels.empty());
  EXPECT_EQ(p.str(t.kernels[0].name), "long_kernel_before_the_range");
  EXPECT_EQ(t.kernels[0].total_ns, 230);
  for (const auto& k : t.kernels) {
    if (p.str(k.name) != "gemm") continue;
    EXPECT_EQ(k.count, 2);
    EXPECT_EQ(k.total_ns, 120);
    EXPECT_EQ(k.max_ns, 100);
  }

  // Before the long kernel starts, only the first gemm runs; after the last event, nothing.
  const RangeTotals early = range_totals(p, a, index, 0, 9);
  EXPECT_EQ(early.ranks[0].compute_ns, 9);
  const RangeTotals none = range_totals(p, a, index, 6000, 7000);
  EXPECT_EQ(none.events, 0);
  EXPECT_EQ(none.ranks[0].window_ns, 0);
}

TEST(RangeTotals, TheWholeProfileMatchesTheAnalysis) {
  Writer w("whole");
  w.kernel(7, 0, 100, "gemm");
  w.kernel(7, 150, 250, "gemm");
  const auto c1 = w.kernel(20, 50, 200, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  w.collective(c1, 50, 200);
  const auto c2 = w.kernel(20, 260, 400, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  w.collective(c2, 260, 400);
  w.kernel(7, 420, 470, "Memcpy DtoD (Device -> Device)", kNull, ActivityKind::kMemcpy);
  const Profile p = w.finish();
  const Analysis a = analyze(p);
  const RangeTotals t = range_totals(p, a, index_ranges(p), p.first_ns(), p.last_ns() + 1);
  const Breakdown& b = a.ranks[0].total;
  EXPECT_EQ(t.ranks[0].compute_ns, b.compute_ns);
  EXPECT_EQ(t.ranks[0].comm_ns, b.comm_ns);
  EXPECT_EQ(t.ranks[0].overlap_ns, b.overlap_ns);
  EXPECT_EQ(t.ranks[0].exposed_comm_ns, b.exposed_comm_ns);
  EXPECT_EQ(t.ranks[0].busy_ns, b.busy_ns);
  EXPECT_EQ(t.ranks[0].idle_ns, b.idle_ns);
  EXPECT_EQ(t.exposed_comm_ns, total_length(a.ranks[0].exposed_comm));

  std::atomic<bool> cancel{true};
  EXPECT_TRUE(range_totals(p, a, index_ranges(p), 0, 100, &cancel).cancelled);
}

// ResNet-50 (Kineto, PyTorch profiler): the whole profile's GPU work by launching operator counts every
// activity once, as the kernels table does, and each activity's row is the operator its launch index names.
TEST(RangeTotals, ByOperatorCountsEveryActivityOnceUnderItsLaunchingOperator) {
  const auto path = std::filesystem::path(MESHSCOPE_TEST_TMP) / "range-by-operator.msdb";
  std::filesystem::remove(path);
  import_traces({std::filesystem::path(MESHSCOPE_SHARED_DIR) / "traces/kineto/resnet50_num_workers_0"}, path);
  const Profile p = Profile::load(path);
  const Analysis a = analyze(p);
  std::vector<LaunchIndex> indexes;
  for (const Rank& r : p.ranks()) indexes.push_back(index_launches(r));
  std::vector<const LaunchIndex*> launches;
  for (const LaunchIndex& l : indexes) launches.push_back(&l);
  const RangeTotals t =
      range_totals(p, a, index_ranges(p), p.first_ns(), p.last_ns() + 1, nullptr, &launches);
  std::int64_t kernels = 0, operators = 0;
  for (const auto& k : t.kernels) kernels += k.count;
  for (const auto& o : t.operators) operators += o.count;
  EXPECT_EQ(operators, kernels);
  EXPECT_EQ(operators, t.events);
  // Counted by hand from the launch index: the activities each operator name launched (those of no duration
  // overlap no range, in this table as in the others).
  std::map<StringId, std::int64_t> expected;
  for (std::size_t r = 0; r < p.ranks().size(); ++r) {
    const Rank& rank = p.ranks()[r];
    for (std::size_t i = 0; i < rank.activities.size(); ++i) {
      if (rank.activities[i].duration() <= 0) continue;
      const std::uint32_t api = indexes[r].api_of_activity[i];
      const std::uint32_t op = api == kNoIndex ? kNoIndex : indexes[r].op_of_api[api];
      ++expected[op == kNoIndex ? kNoString : rank.ranges[op].name];
    }
  }
  ASSERT_EQ(t.operators.size(), expected.size());
  for (const auto& o : t.operators) EXPECT_EQ(o.count, expected[o.name]) << p.str(o.name);
  // Most of this trace's GPU work has its launching operator recorded.
  const auto none = expected.find(kNoString);
  EXPECT_LT(none == expected.end() ? 0 : none->second, kernels / 10);
  // Without launch indexes, no operator rows.
  EXPECT_TRUE(range_totals(p, a, index_ranges(p), p.first_ns(), p.last_ns() + 1).operators.empty());
}

}  // namespace
}  // namespace meshscope::measure
