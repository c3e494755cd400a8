// ProfileWriter and Profile: atomic writes, nesting, CPU-side collective resolution, rank rewrites, loading.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"

namespace meshscope {
namespace {

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::size_t entries(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(
      std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()));
}

ActivityRecord kernel(std::int32_t rank, std::int64_t stream, TimeNs start, TimeNs end, StringId name,
                      std::int64_t correlation = kNull) {
  ActivityRecord a;
  a.rank = rank;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  a.name = name;
  a.correlation = correlation;
  return a;
}

RangeRecord range(TimeNs start, TimeNs end, StringId name, std::int64_t tid = 1) {
  RangeRecord r;
  r.pid = 1;
  r.tid = tid;
  r.start_ns = start;
  r.end_ns = end;
  r.name = name;
  return r;
}

TEST(ProfileWriter, NothingAppearsUntilCommitAndAbandonedWritesLeaveNothing) {
  const auto dir = temp_dir("writer-atomic");
  const auto target = dir / "p.msdb";
  {
    ProfileWriter writer(target);
    writer.add_activity(kernel(0, 7, 10, 20, writer.intern("k")));
    EXPECT_FALSE(std::filesystem::exists(target));
    EXPECT_TRUE(std::filesystem::exists(writer.temp_path()));
  }  // destroyed without commit
  EXPECT_EQ(entries(dir), 0u);
  {
    ProfileWriter writer(target);
    writer.set_rank({});
    writer.add_activity(kernel(0, 7, 10, 20, writer.intern("k")));
    writer.commit();
  }
  EXPECT_TRUE(std::filesystem::exists(target));
  EXPECT_EQ(entries(dir), 1u);
}

// Nesting is computed before the ranges are written, in whatever order a track's ranges arrive (PyTorch lists
// a parent after its children), and rebuilt in SQL at commit when a range arrives for a closed track with an
// earlier start; all must agree.
enum class Arrival { kInOrder, kReversed, kAcrossClose };
class ProfileWriterNesting : public ::testing::TestWithParam<Arrival> {};

TEST_P(ProfileWriterNesting, PerTrackWithTiesAndPartialOverlap) {
  const Arrival arrival = GetParam();
  const char* names[] = {"in-order", "reversed", "across-close"};
  const auto dir = temp_dir(std::string("writer-nesting-") + names[static_cast<int>(arrival)]);
  const auto target = dir / "p.msdb";
  {
    WriterOptions options;
    options.batch_records = 2;
    options.background = false;
    ProfileWriter writer(target, options);
    writer.set_rank({});
    const auto outer = writer.intern("outer"), inner = writer.intern("inner"),
               same = writer.intern("same-start"), later = writer.intern("later"),
               overlap = writer.intern("overlap"), other = writer.intern("other");
    // "same-start" shares its start with "outer" and arrives first, but is shorter, so it nests inside it.
    std::vector<RangeRecord> ranges = {
        range(10, 20, same),     range(10, 100, outer),   range(12, 15, inner),
        range(50, 60, later),    range(90, 120, overlap),  // ends after "outer": one level deeper
        range(10, 100, other, 2)};                         // another thread: depth 0
    if (arrival != Arrival::kInOrder) std::reverse(ranges.begin(), ranges.end());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      writer.add_range(ranges[i]);
      // Closing after "later" (50) leaves "inner" (12) and the others to arrive with earlier starts.
      if (arrival == Arrival::kAcrossClose && i == 2) writer.close_tracks();
    }
    writer.commit();
  }
  const auto profile = Profile::load(target);
  ASSERT_EQ(profile.ranks().size(), 1u);
  const auto& rank = profile.ranks()[0];
  ASSERT_EQ(rank.tracks.size(), 2u);
  std::map<std::string, std::int32_t> depth;
  for (const auto& r : rank.ranges) depth[profile.str(r.name)] = r.depth;
  EXPECT_EQ(depth["outer"], 0);
  EXPECT_EQ(depth["same-start"], 1);
  EXPECT_EQ(depth["inner"], 2);
  EXPECT_EQ(depth["later"], 1);
  EXPECT_EQ(depth["overlap"], 1);
  EXPECT_EQ(depth["other"], 0);
  EXPECT_EQ(rank.tracks[0].max_depth, 2);
  // Within a track, ranges come sorted by start.
  const auto track = rank.track_ranges(0);
  EXPECT_TRUE(std::is_sorted(track.begin(), track.end(),
                             [](const CpuRange& a, const CpuRange& b) { return a.start_ns < b.start_ns; }));
}

// Once one track came out of order, the other tracks' ranges are held back until their file is done and
// nested in memory, in any order; the track that came out of order is nested in SQL at commit.
TEST(ProfileWriter, TracksHeldBackAfterOneCameOutOfOrderAreNestedInMemory) {
  const auto dir = temp_dir("writer-held-back");
  const auto target = dir / "p.msdb";
  {
    WriterOptions options;
    options.background = false;
    ProfileWriter writer(target, options);
    writer.set_rank({});
    const auto child = writer.intern("child"), parent = writer.intern("parent"),
               b_child = writer.intern("b-child"), b_parent = writer.intern("b-parent"),
               b_grandchild = writer.intern("b-grandchild");
    writer.add_range(range(20, 30, child));            // thread 1: the child first,
    writer.add_range(range(10, 40, parent));           // then its parent: out of order
    writer.add_range(range(25, 27, b_grandchild, 2));  // thread 2, now held back, in reverse
    writer.add_range(range(22, 35, b_child, 2));
    writer.add_range(range(21, 50, b_parent, 2));
    writer.close_tracks();
    writer.commit();
  }
  const auto profile = Profile::load(target);
  std::map<std::string, std::int32_t> depth;
  for (const auto& r : profile.ranks()[0].ranges) depth[profile.str(r.name)] = r.depth;
  EXPECT_EQ(depth["parent"], 0);
  EXPECT_EQ(depth["child"], 1);
  EXPECT_EQ(depth["b-parent"], 0);
  EXPECT_EQ(depth["b-child"], 1);
  EXPECT_EQ(depth["b-grandchild"], 2);
  EXPECT_EQ(depth["step"], 0);
  const auto& ranges = profile.ranks()[0].ranges;
  const auto parent_row = std::find_if(ranges.begin(), ranges.end(),
                                       [&](const CpuRange& r) { return profile.str(r.name) == "parent"; });
  const auto child_row = std::find_if(ranges.begin(), ranges.end(),
                                      [&](const CpuRange& r) { return profile.str(r.name) == "child"; });
  ASSERT_NE(parent_row, ranges.end());
  ASSERT_NE(child_row, ranges.end());
  const Rank& rank = profile.ranks()[0];
  const std::int64_t parent = rank.parent_range(static_cast<std::uint32_t>(child_row - ranges.begin()));
  ASSERT_GE(parent, 0);
  EXPECT_EQ(ranges[static_cast<std::size_t>(parent)].id, parent_row->id);
}

INSTANTIATE_TEST_SUITE_P(OnlineAndInSql, ProfileWriterNesting,
                         ::testing::Values(Arrival::kInOrder, Arrival::kReversed, Arrival::kAcrossClose));

TEST(ProfileWriter, CpuCollectiveAttachesToTheKernelItLaunched) {
  const auto dir = temp_dir("writer-cpu-collective");
  const auto target = dir / "p.msdb";
  {
    ProfileWriter writer(target);
    writer.set_rank({});
    const auto launch = writer.intern("cudaLaunchKernel");
    // The launch at t=105 on thread 1 lies inside the CPU op [100, 200]; its kernel runs on the GPU at [300,
    // 400].
    ApiCallRecord call;
    call.pid = 1;
    call.tid = 1;
    call.start_ns = 105;
    call.end_ns = 110;
    call.name = launch;
    call.correlation = 42;
    writer.add_api_call(call);
    writer.add_activity(kernel(0, 13, 300, 400, writer.intern("ncclDevKernel_Generic"), 42));
    CollectiveRecord op;
    op.op = writer.intern("allreduce");
    op.group_size = 8;
    op.in_bytes = 1024;
    op.start_ns = 100;
    op.end_ns = 200;
    op.source = "cpu_op";
    writer.add_cpu_collective(op, 1, 1);
    // A CPU-only collective (gloo): no kernel, kept with its CPU times.
    CollectiveRecord gloo = op;
    gloo.start_ns = 500;
    gloo.end_ns = 600;
    writer.add_cpu_collective(gloo, 1, 1);
    writer.commit();
  }
  const auto profile = Profile::load(target);
  const auto& rank = profile.ranks()[0];
  ASSERT_EQ(rank.collectives.size(), 2u);
  const auto& on_gpu = rank.collectives[0];
  EXPECT_EQ(on_gpu.start_ns, 300);
  EXPECT_EQ(on_gpu.end_ns, 400);
  EXPECT_EQ(on_gpu.group_size, 8);
  ASSERT_GE(on_gpu.stream_index, 0);
  EXPECT_EQ(rank.activities[on_gpu.activity].collective, 0);
  const auto& cpu_only = rank.collectives[1];
  EXPECT_EQ(cpu_only.activity_id, kNull);
  EXPECT_EQ(cpu_only.start_ns, 500);
}

TEST(ProfileWriter, RankRewriteMovesAndShiftsEveryRow) {
  const auto dir = temp_dir("writer-rewrite");
  const auto target = dir / "p.msdb";
  {
    ProfileWriter writer(target);
    RankInfo info;
    info.rank = 99;
    writer.set_rank(info);
    writer.add_activity(kernel(99, 7, 10, 20, writer.intern("k")));
    RangeRecord r = range(5, 25, writer.intern("op"));
    r.rank = 99;
    writer.add_range(r);
    FlowRecord flow;
    flow.rank = 99;
    flow.category = writer.intern("fwdbwd");
    flow.src_ns = 12;
    flow.dst_ns = 18;
    writer.add_flow(flow);
    OpWorkRecord op;
    op.rank = 99;
    op.start_ns = 5;
    op.name = writer.intern("aten::mm");
    const std::int64_t op_id = writer.add_op_work(op);
    writer.add_kernel_work({.activity_id = 7, .rank = 99, .op_id = op_id, .flops = 1, .bytes = 1});
    ThreadActivityRecord on_cpu;
    on_cpu.rank = 99;
    on_cpu.kind = ThreadActivityKind::kOnCpu;
    on_cpu.start_ns = 1;
    on_cpu.end_ns = 30;
    writer.add_thread_activity(on_cpu);
    writer.add_stream({.rank = 99, .device = 0, .stream = 7, .name = "stream 7"});
    writer.add_diagnostic(99, "info", "rewritten");
    writer.rewrite_rank(99, 3, 1000);
    writer.commit();
  }
  const auto profile = Profile::load(target);
  ASSERT_EQ(profile.ranks().size(), 1u);
  const auto& rank = profile.ranks()[0];
  EXPECT_EQ(rank.rank, 3);
  EXPECT_EQ(rank.activities.at(0).start_ns, 1010);
  EXPECT_EQ(rank.first_ns, 1005);
  EXPECT_EQ(rank.last_ns, 1025);
  // Every table of a rank's description and events, as schema.sql declares them, moved; its clock times
  // shifted.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(target.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto number = [&](const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sql;
    std::int64_t value = -1;
    if (s && sqlite3_step(s) == SQLITE_ROW) value = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return value;
  };
  for (const char* table : {"activities", "ranges", "flows", "op_work", "kernel_work", "thread_activity",
                            "ranks", "streams", "diagnostics"}) {
    EXPECT_EQ(number(std::string("SELECT count(*) FROM ") + table + " WHERE rank = 99"), 0) << table;
    EXPECT_EQ(number(std::string("SELECT count(*) FROM ") + table + " WHERE rank = 3"), 1) << table;
  }
  EXPECT_EQ(number("SELECT src_ns FROM flows"), 1012);
  EXPECT_EQ(number("SELECT dst_ns FROM flows"), 1018);
  EXPECT_EQ(number("SELECT start_ns FROM op_work"), 1005);
  EXPECT_EQ(number("SELECT end_ns FROM thread_activity"), 1030);
  EXPECT_EQ(number("SELECT start_ns FROM ranges"), 1005);
  sqlite3_close(db);
}

TEST(Profile, StreamsAreTimeSortedAndCountsMatch) {
  const auto dir = temp_dir("profile-sorted");
  const auto target = dir / "p.msdb";
  {
    ProfileWriter writer(target);
    writer.set_rank({});
    const auto k = writer.intern("k");
    for (int i = 9; i >= 0; --i) writer.add_activity(kernel(0, 7, i * 10, i * 10 + 5, k));
    writer.add_activity(kernel(0, 8, 0, 100, k));
    ActivityRecord copy = kernel(0, 8, 100, 110, writer.intern("Memcpy HtoD"));
    copy.kind = ActivityKind::kMemcpy;
    copy.bytes = 4096;
    writer.add_activity(copy);
    writer.commit();
  }
  const auto profile = Profile::load(target);
  const auto& rank = profile.ranks()[0];
  ASSERT_EQ(rank.streams.size(), 2u);
  EXPECT_EQ(rank.streams[0].stream, 7);
  EXPECT_EQ(rank.streams[0].count, 10u);
  const auto s7 = rank.stream_activities(0);
  EXPECT_TRUE(std::is_sorted(s7.begin(), s7.end(),
                             [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; }));
  EXPECT_EQ(profile.counts().kernel, 11);
  EXPECT_EQ(profile.counts().memcpy, 1);
  const auto s8 = rank.stream_activities(1);
  ASSERT_EQ(s8.size(), 2u);
  EXPECT_EQ(rank.copies.at(s8[1].detail).bytes, 4096);
  EXPECT_EQ(rank.gpu_first_ns, 0);
  EXPECT_EQ(rank.gpu_last_ns, 110);
}

TEST(Profile, LoadsWithoutKernelDetailsWhenAskedAndKeepsEverythingElse) {
  const auto dir = temp_dir("profile-lean");
  const auto target = dir / "p.msdb";
  {
    ProfileWriter writer(target);
    writer.set_rank({});
    ActivityRecord k = kernel(0, 7, 10, 20, writer.intern("k"));
    k.grid[0] = 128;
    k.block[0] = 256;
    k.registers = 96;
    writer.add_activity(k);
    ActivityRecord copy = kernel(0, 7, 30, 40, writer.intern("Memcpy HtoD"));
    copy.kind = ActivityKind::kMemcpy;
    copy.bytes = 4096;
    writer.add_activity(copy);
    writer.commit();
  }
  const auto full = Profile::load(target);
  const auto lean = Profile::load(target, LoadOptions{.kernel_details = false});
  const auto& f = full.ranks()[0];
  const auto& l = lean.ranks()[0];
  ASSERT_EQ(f.kernels.size(), 1u);
  EXPECT_EQ(f.kernels[0].grid[0], 128);
  EXPECT_EQ(f.kernels[0].registers, 96);
  EXPECT_TRUE(l.kernels.empty());
  ASSERT_EQ(l.activities.size(), f.activities.size());
  EXPECT_EQ(l.activities[0].detail, kNoDetail);
  EXPECT_EQ(l.activities[0].start_ns, 10);
  EXPECT_EQ(l.copies.at(l.activities[1].detail).bytes, 4096);  // copies keep their bytes
  EXPECT_EQ(lean.counts().kernel, full.counts().kernel);
}

TEST(Profile, LoadsWithoutLinksWhenAskedAndKeepsTheRanges) {
  const auto dir = temp_dir("profile-links");
  const auto target = dir / "p.msdb";
  {
    ProfileWriter writer(target);
    writer.set_rank({});
    RangeRecord op;
    op.kind = RangeKind::kCpuOp;
    op.pid = op.tid = 1;
    op.start_ns = 10;
    op.end_ns = 50;
    op.name = writer.intern("aten::mm");
    op.category = writer.intern("cpu_op");
    op.external_id = 42;
    writer.add_range(op);
    writer.commit();
  }
  const auto full = Profile::load(target);
  const auto lean = Profile::load(target, LoadOptions{.links = false});
  const CpuRange& f = full.ranks()[0].ranges.at(0);
  const CpuRange& l = lean.ranks()[0].ranges.at(0);
  EXPECT_EQ(f.external_id, 42);
  EXPECT_EQ(full.str(f.category), "cpu_op");
  EXPECT_EQ(l.external_id, kNull);
  EXPECT_EQ(l.category, kNoString);
  EXPECT_EQ(lean.str(l.name), "aten::mm");
  EXPECT_EQ(l.start_ns, 10);
  EXPECT_EQ(l.end_ns, 50);
}

TEST(Profile, RefusesFilesThatAreNotProfilesAndReadsOtherSchemaVersions) {
  const auto dir = temp_dir("profile-bad");
  EXPECT_THROW(Profile::load(dir / "missing.msdb"), Error);
  {
    std::FILE* f = std::fopen((dir / "text.msdb").c_str(), "w");
    std::fputs("hello", f);
    std::fclose(f);
  }
  try {
    Profile::load(dir / "text.msdb");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("text.msdb"), std::string::npos);
  }
  const auto target = dir / "future.msdb";
  {
    ProfileWriter writer(target);
    writer.set_rank({});
    writer.set_meta("schema_version", "99");
    writer.commit();
  }
  EXPECT_EQ(Profile::load(target).schema_version(), 99);
}

}  // namespace
}  // namespace meshscope
