// Profile::load on profiles that someone edited with a few SQL statements: ids, kinds, depths, times and
// table shapes that meshscope never writes must be refused with one line naming the file, the table and the
// row, and never size memory or run the file's own SQL.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"

namespace meshscope {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  auto dir = fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A small but complete profile: two ranks, kernels and a memcpy on two streams, a collective on its kernel,
// API calls, nested CPU ranges with a step, a flow.
void write_small_profile(const fs::path& target) {
  ProfileWriter writer(target);
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    RankInfo info;
    info.rank = rank;
    info.world_size = 2;
    info.source_file = "test";
    info.rank_source = "test";
    writer.set_rank(info);
    const StringId gemm = writer.intern("sm90_gemm"), nccl = writer.intern("ncclDevKernel_AllReduce_RING_LL");
    for (int i = 0; i < 4; ++i) {
      ActivityRecord a;
      a.rank = rank;
      a.stream = 7;
      a.start_ns = 1000 + i * 100;
      a.end_ns = a.start_ns + 50;
      a.name = gemm;
      a.correlation = i + 1;
      writer.add_activity(a);
      ApiCallRecord c;
      c.rank = rank;
      c.pid = 1;
      c.tid = 1;
      c.start_ns = 900 + i * 100;
      c.end_ns = c.start_ns + 10;
      c.name = writer.intern("cudaLaunchKernel");
      c.correlation = i + 1;
      writer.add_api_call(c);
    }
    ActivityRecord comm;
    comm.rank = rank;
    comm.stream = 13;
    comm.start_ns = 1100;
    comm.end_ns = 1400;
    comm.name = nccl;
    const std::int64_t comm_id = writer.add_activity(comm);
    CollectiveRecord c;
    c.rank = rank;
    c.activity_id = comm_id;
    c.op = writer.intern("allreduce");
    c.communicator = writer.intern("0");
    c.seq = 1;
    c.in_bytes = 1 << 20;
    c.group_size = 2;
    c.start_ns = comm.start_ns;
    c.end_ns = comm.end_ns;
    c.source = "kernel_args";
    writer.add_collective(c);
    ActivityRecord copy;
    copy.rank = rank;
    copy.kind = ActivityKind::kMemcpy;
    copy.stream = 13;
    copy.start_ns = 1500;
    copy.end_ns = 1600;
    copy.name = writer.intern("Memcpy HtoD");
    copy.copy_kind = writer.intern("HtoD");
    copy.bytes = 4096;
    writer.add_activity(copy);
    RangeRecord step;
    step.rank = rank;
    step.kind = RangeKind::kStep;
    step.pid = 1;
    step.tid = 1;
    step.start_ns = 800;
    step.end_ns = 1700;
    step.step = 3;
    step.name = writer.intern("ProfilerStep#3");
    writer.add_range(step);
    RangeRecord op = step;
    op.kind = RangeKind::kCpuOp;
    op.start_ns = 850;
    op.end_ns = 1300;
    op.step = kNull;
    op.name = writer.intern("aten::mm");
    writer.add_range(op);
    FlowRecord f;
    f.rank = rank;
    f.category = writer.intern("fwdbwd");
    f.flow_id = 1;
    f.src_ns = 850;
    f.src_pid = 1;
    f.src_tid = 1;
    f.dst_ns = 1250;
    f.dst_pid = 1;
    f.dst_tid = 1;
    writer.add_flow(f);
  }
  writer.commit();
}

void run_sql(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string error = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << sql << ": " << error;
}

// A copy of the small profile with SQL applied, loaded: the Error's message ("" when it loads).
std::string load_error_after(const fs::path& dir, const std::string& name, const std::string& sql) {
  const fs::path base = dir / "base.msdb";
  if (!fs::exists(base)) write_small_profile(base);
  const fs::path target = dir / (name + ".msdb");
  fs::copy_file(base, target, fs::copy_options::overwrite_existing);
  run_sql(target, sql);
  try {
    Profile::load(target);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(HostileProfile, TheSmallProfileLoads) {
  const fs::path dir = fresh_dir("hostile-base");
  EXPECT_EQ(load_error_after(dir, "unchanged", "SELECT 1"), "");
  const Profile p = Profile::load(dir / "unchanged.msdb");
  ASSERT_EQ(p.ranks().size(), 2u);
  EXPECT_EQ(p.counts().kernel, 10);
  EXPECT_EQ(p.counts().collective, 2);
  EXPECT_EQ(p.ranks()[0].steps.size(), 1u);
}

TEST(HostileProfile, StringIdsThatWouldSizeMemoryAreRefused) {
  const fs::path dir = fresh_dir("hostile-strings");
  // Was a write to strings_[SIZE_MAX] (resize to id + 1 wrapped to 0).
  const auto minus_one = load_error_after(dir, "minus-one", "UPDATE strings SET id = -1 WHERE id = 1");
  EXPECT_NE(minus_one.find("minus-one.msdb: strings id=-1"), std::string::npos) << minus_one;
  // Was a 10^12-element allocation (bad_alloc, "internal error").
  const auto huge = load_error_after(dir, "huge", "UPDATE strings SET id = 1000000000000 WHERE id = 2");
  EXPECT_NE(huge.find("huge.msdb: strings id=1000000000000: id out of range"), std::string::npos) << huge;
}

TEST(HostileProfile, NameIdsThatAreNoStringAreRefusedNamingTheRow) {
  const fs::path dir = fresh_dir("hostile-names");
  // Analyses sized per-name buffers by these ids (measure, classify): -5 wrapped to 4 billion.
  const auto negative = load_error_after(dir, "negative", "UPDATE activities SET name = -5 WHERE id = 2");
  EXPECT_NE(negative.find("negative.msdb: activities id=2: name -5 is not the id of a string"),
            std::string::npos)
      << negative;
  const auto large = load_error_after(dir, "large", "UPDATE activities SET name = 123456789 WHERE id = 3");
  EXPECT_NE(large.find("activities id=3: name 123456789"), std::string::npos) << large;
  const auto op = load_error_after(dir, "op", "UPDATE collectives SET op = 99999 WHERE id = 1");
  EXPECT_NE(op.find("collectives id=1: op 99999"), std::string::npos) << op;
  const auto category = load_error_after(dir, "category", "UPDATE ranges SET category = -2 WHERE id = 1");
  EXPECT_NE(category.find("ranges id=1: category -2"), std::string::npos) << category;
  const auto flow = load_error_after(dir, "flow", "UPDATE flows SET category = 77777 WHERE id = 1");
  EXPECT_NE(flow.find("flows id=1: category 77777"), std::string::npos) << flow;
  const auto api = load_error_after(dir, "api", "UPDATE api_calls SET name = -1 WHERE id = 1");
  EXPECT_NE(api.find("api_calls id=1: name -1"), std::string::npos) << api;
}

}  // namespace
}  // namespace meshscope
