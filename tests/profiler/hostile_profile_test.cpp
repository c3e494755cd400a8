// Profile::load on profiles that someone edited with a few SQL statements: ids, kinds, depths, times and
// table shapes that meshscope never writes must be refused with one line naming the file, the table and the
// row, and never size memory or run the file's own SQL.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/work_store.hpp"

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

// What READ throws on TARGET, a copy of BASE with SQL applied: the Error's message ("" when it reads).
template <typename Read>
std::string error_after_sql(const fs::path& base, const fs::path& target, const std::string& sql, Read read) {
  fs::copy_file(base, target, fs::copy_options::overwrite_existing);
  run_sql(target, sql);
  try {
    read(target);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// A copy of the small profile with SQL applied, loaded: the Error's message ("" when it loads).
std::string load_error_after(const fs::path& dir, const std::string& name, const std::string& sql) {
  const fs::path base = dir / "base.msdb";
  if (!fs::exists(base)) write_small_profile(base);
  return error_after_sql(base, dir / (name + ".msdb"), sql, [](const fs::path& p) { Profile::load(p); });
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

TEST(HostileProfile, AViewInPlaceOfATableIsNeverRun) {
  const fs::path dir = fresh_dir("hostile-views");
  // Was: every reader (info, report, view, export) hung in the view's endless recursion.
  const auto endless = load_error_after(
      dir, "endless",
      "ALTER TABLE activities RENAME TO real_activities;"
      "CREATE VIEW activities AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)"
      " SELECT x AS id, 0 AS rank, 1 AS kind, 0 AS device, 0 AS stream, x AS start_ns, x AS end_ns, 1 AS name"
      " FROM r");
  EXPECT_NE(endless.find("endless.msdb: activities is a view, not a table"), std::string::npos) << endless;
  // Was: 8-15 s building a 900 MB string.
  const auto huge =
      load_error_after(dir, "huge-view",
                       "ALTER TABLE strings RENAME TO real_strings;"
                       "CREATE VIEW strings AS SELECT 1 AS id, printf('%.*c', 900000000, 'x') AS value");
  EXPECT_NE(huge.find("huge-view.msdb: strings is a view, not a table"), std::string::npos) << huge;
  // A trigger or a view elsewhere in the file is not run either: the file still loads.
  EXPECT_EQ(
      load_error_after(dir, "extra",
                       "CREATE VIEW loop AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r)"
                       " SELECT x FROM r;"
                       "CREATE TRIGGER t AFTER INSERT ON meta BEGIN SELECT 1; END"),
      "");
}

TEST(HostileProfile, ValuesLongerThanTheLimitAreRefusedNotRead) {
  const fs::path dir = fresh_dir("hostile-long");
  const auto long_value =
      load_error_after(dir, "long", "UPDATE strings SET value = printf('%.*c', 20000000, 'x') WHERE id = 1");
  EXPECT_NE(long_value.find("long.msdb: a stored value is longer than the 16 MiB meshscope reads"),
            std::string::npos)
      << long_value;
}

TEST(HostileProfile, KindsDepthsAndTimesAreCheckedAtLoad) {
  const fs::path dir = fresh_dir("hostile-values");
  // Was: the timeline sized 2^31 rows for this track (view hung).
  const auto depth = load_error_after(dir, "depth", "UPDATE ranges SET depth = 2147483647 WHERE id = 2");
  EXPECT_NE(
      depth.find("depth.msdb: ranges id=2: depth 2147483647 is deeper than the 2 range(s) of its track"),
      std::string::npos)
      << depth;
  const auto negative_depth =
      load_error_after(dir, "negative-depth", "UPDATE ranges SET depth = -1 WHERE id = 1");
  EXPECT_NE(negative_depth.find("ranges id=1: depth -1 is not a depth"), std::string::npos) << negative_depth;
  const auto kind = load_error_after(dir, "kind", "UPDATE activities SET kind = 9 WHERE id = 1");
  EXPECT_NE(kind.find("kind.msdb: activities id=1: kind 9 is not an activity kind (1-4)"), std::string::npos)
      << kind;
  const auto range_kind = load_error_after(dir, "range-kind", "UPDATE ranges SET kind = 0 WHERE id = 1");
  EXPECT_NE(range_kind.find("ranges id=1: kind 0 is not a range kind (1-8)"), std::string::npos)
      << range_kind;
  // The OS's record of threads is checked as the events are.
  const char* thread_row =
      "INSERT INTO thread_activity (rank, kind, pid, tid, start_ns, end_ns, cpu, stack) VALUES ";
  const auto activity_kind =
      load_error_after(dir, "thread-kind", std::string(thread_row) + "(0, 3, 1, 1, 10, 20, 0, NULL)");
  EXPECT_NE(activity_kind.find("thread_activity id=1: kind 3 is not a thread activity kind (1-2)"),
            std::string::npos)
      << activity_kind;
  const auto off_core =
      load_error_after(dir, "thread-backwards", std::string(thread_row) + "(0, 1, 1, 1, 20, 10, 0, NULL)");
  EXPECT_NE(off_core.find("thread_activity id=1: end_ns 10 is before start_ns 20"), std::string::npos)
      << off_core;
  const auto cpu =
      load_error_after(dir, "thread-cpu", std::string(thread_row) + "(0, 1, 1, 1, 10, 20, -4, NULL)");
  EXPECT_NE(cpu.find("thread_activity id=1: cpu -4 is not a CPU number"), std::string::npos) << cpu;
  const auto stack =
      load_error_after(dir, "thread-stack", std::string(thread_row) + "(0, 2, 1, 1, 10, 10, 0, 999999)");
  EXPECT_NE(stack.find("thread_activity id=1: stack 999999 is not the id of a string in the profile"),
            std::string::npos)
      << stack;
  const auto api_kind = load_error_after(dir, "api-kind", "UPDATE api_calls SET kind = 3 WHERE id = 1");
  EXPECT_NE(api_kind.find("api_calls id=1: kind 3 is not an API kind (1-2)"), std::string::npos) << api_kind;
  const auto backwards = load_error_after(dir, "backwards", "UPDATE activities SET end_ns = 10 WHERE id = 1");
  EXPECT_NE(backwards.find("activities id=1: end_ns 10 is before start_ns 1000"), std::string::npos)
      << backwards;
  const auto far =
      load_error_after(dir, "far", "UPDATE collectives SET end_ns = 9223372036854775807 WHERE id = 1");
  EXPECT_NE(far.find("collectives id=1: end_ns 9223372036854775807 is out of range"), std::string::npos)
      << far;
  const auto flow =
      load_error_after(dir, "flow-time", "UPDATE flows SET dst_ns = -9223372036854775807 WHERE id = 1");
  EXPECT_NE(flow.find("flows id=1: dst_ns -9223372036854775807 is out of range"), std::string::npos) << flow;
  const auto text = load_error_after(dir, "text", "UPDATE activities SET start_ns = 'soon' WHERE id = 4");
  EXPECT_NE(text.find("activities id=4: start_ns is not an integer"), std::string::npos) << text;
  const auto rank = load_error_after(dir, "rank", "UPDATE activities SET rank = 5000000000 WHERE id = 1");
  EXPECT_NE(rank.find("activities id=1: rank 5000000000 is not a rank"), std::string::npos) << rank;
  const auto world =
      load_error_after(dir, "world", "UPDATE ranks SET world_size = 1099511627776 WHERE rank = 1");
  EXPECT_NE(world.find("ranks rank=1: world_size 1099511627776 is not a world size"), std::string::npos)
      << world;
  const auto device =
      load_error_after(dir, "device", "UPDATE activities SET device = 4294967296 WHERE id = 1");
  EXPECT_NE(device.find("activities id=1: device 4294967296 is not a 32-bit integer"), std::string::npos)
      << device;
  const auto members = load_error_after(
      dir, "members", "INSERT INTO process_groups (rank, pg_name, ranks_json) VALUES (0, 'x', '[0, -7]')");
  EXPECT_NE(members.find("process_groups row 1: ranks_json holds -7, which is not a rank"), std::string::npos)
      << members;
}

TEST(HostileProfile, TablesMustBeTablesWithTheColumnsAndTypesRead) {
  const fs::path dir = fresh_dir("hostile-shape");
  const auto typed = load_error_after(
      dir, "typed",
      "DROP VIEW activity_names; DROP INDEX activities_by_stream; DROP INDEX activities_by_correlation;"
      "ALTER TABLE activities RENAME TO old;"
      "CREATE TABLE activities (id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, device INTEGER,"
      " stream INTEGER, start_ns TEXT, end_ns INTEGER, name INTEGER);"
      "INSERT INTO activities SELECT id, rank, kind, device, stream, start_ns, end_ns, name FROM old;"
      "DROP TABLE old");
  EXPECT_NE(typed.find("typed.msdb: activities.start_ns is declared TEXT, not INTEGER"), std::string::npos)
      << typed;
  const auto computed = load_error_after(
      dir, "computed",
      "DROP VIEW activity_names; DROP INDEX activities_by_stream; ALTER TABLE activities DROP COLUMN stream;"
      "ALTER TABLE activities ADD COLUMN stream INTEGER GENERATED ALWAYS AS (length(printf('%.*c', 1000, "
      "'x')))"
      " VIRTUAL");
  EXPECT_NE(computed.find("computed.msdb: activities.stream is a computed column"), std::string::npos)
      << computed;
  const auto missing = load_error_after(dir, "missing",
                                        "DROP VIEW activity_names; DROP INDEX activities_by_stream; ALTER "
                                        "TABLE activities DROP COLUMN start_ns");
  EXPECT_NE(missing.find("missing.msdb: table activities has no column start_ns"), std::string::npos)
      << missing;
  const auto no_strings = load_error_after(dir, "no-strings", "DROP TABLE strings");
  EXPECT_NE(no_strings.find("no-strings.msdb: not a meshscope profile (no strings table)"), std::string::npos)
      << no_strings;
}

TEST(HostileProfile, AProfileOfANewerSchemaLoadsWhatThisMeshscopeReads) {
  const fs::path dir = fresh_dir("hostile-newer");
  // Columns added, optional columns dropped, tables added: what docs/PROFILE.md promises for a newer schema.
  EXPECT_EQ(load_error_after(dir, "newer",
                             "UPDATE meta SET value = '7' WHERE key = 'schema_version';"
                             "ALTER TABLE activities ADD COLUMN power_mw INTEGER;"
                             "DROP VIEW activity_names; ALTER TABLE activities DROP COLUMN graph_id;"
                             "ALTER TABLE activities DROP COLUMN registers;"
                             "ALTER TABLE collectives DROP COLUMN channels;"
                             "CREATE TABLE counters (rank INTEGER, t INTEGER, value REAL);"
                             "DROP TABLE flows"),
            "");
  const Profile p = Profile::load(dir / "newer.msdb");
  EXPECT_EQ(p.schema_version(), 7);
  EXPECT_EQ(p.counts().kernel, 10);
  EXPECT_EQ(p.counts().flow, 0);
  const auto& k = p.ranks()[0].kernels.front();
  EXPECT_EQ(k.registers, -1);
  EXPECT_EQ(k.graph_id, kNull);
}

TEST(UntrustedDatabase, WorkBeyondTheFilesSizeIsGivenUp) {
  const fs::path dir = fresh_dir("hostile-budget");
  write_small_profile(dir / "p.msdb");
  sql::Database db(dir / "p.msdb", true);
  try {
    auto s =
        db.prepare("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r");
    s.step();
    FAIL() << "an endless query finished";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "p.msdb").string() +
                  ": reading it took more work than a file of its size can need (damaged "
                  "or hostile file); gave up");
  }
  // Other databases cannot be attached, and the schema cannot be written.
  EXPECT_THROW(db.exec("ATTACH DATABASE ':memory:' AS other"), Error);
  EXPECT_THROW(db.exec("PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = ''"), Error);
}

// Found by fuzz_profile: SQLite quotes a damaged schema in its message, line breaks and all; the user saw
// several lines. Every Error is one line, of bounded length.
TEST(HostileProfile, ADamagedSchemaIsReportedOnOneLine) {
  const fs::path dir = fresh_dir("hostile-schema");
  const auto error =
      load_error_after(dir, "schema",
                       "PRAGMA writable_schema = ON;"
                       "UPDATE sqlite_master SET sql = 'CREATE TABLE activities (id INTEGER,' || "
                       "char(10) || '  [   -- device ordinal' || char(10) || ')'"
                       " WHERE name = 'activities'");
  EXPECT_NE(error.find("schema.msdb: malformed database schema"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  const std::string long_text = "a\nb\r\n\tc" + std::string(5000, 'x');
  const std::string line = Error(long_text).what();
  EXPECT_EQ(line.substr(0, 6), "a b cx");
  EXPECT_EQ(line.size(), 2003u);
}

}  // namespace
}  // namespace meshscope

namespace meshscope {
namespace {

// The bad-input sweep's corrupt-profile class: one byte flipped anywhere in a real profile file
// (the SQLite header, b-tree pages, records, the schema) either loads or is one line naming the file; never a
// crash, a sanitizer report (the ASan build runs this too) or an error of another kind.
TEST(HostileProfile, ByteFlipsLoadOrFailOnOneLine) {
  const fs::path dir = fresh_dir("hostile-flips");
  const fs::path base = dir / "base.msdb";
  write_small_profile(base);
  std::string bytes;
  {
    std::FILE* in = std::fopen(base.c_str(), "rb");
    ASSERT_NE(in, nullptr);
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, in)) > 0) bytes.append(buffer, n);
    std::fclose(in);
  }
  ASSERT_GT(bytes.size(), 4096u);
  const fs::path target = dir / "flipped.msdb";
  // Every third byte of the 100-byte SQLite header, then 120 bytes spread over the pages (each page's header,
  // cell pointers and records are hit somewhere). A load takes tens of milliseconds: the sample keeps the
  // test at a few seconds; the profile fuzzer flips bytes without end.
  std::vector<std::size_t> offsets;
  for (std::size_t at = 0; at < 100; at += 3) offsets.push_back(at);
  const std::size_t stride = (bytes.size() - 100) / 120 | 1;  // odd: the offsets drift across page layouts
  for (std::size_t at = 101; at < bytes.size(); at += stride) offsets.push_back(at);
  int loaded = 0, refused = 0;
  for (const std::size_t at : offsets) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0xFF);
    std::FILE* out = std::fopen(target.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(std::fwrite(flipped.data(), 1, flipped.size(), out), flipped.size());
    std::fclose(out);
    try {
      (void)Profile::load(target);
      ++loaded;
    } catch (const Error& e) {
      ++refused;
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(target.string() + ": ", 0), 0u) << "byte " << at << ": " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << "byte " << at << ": " << message;
    }
  }
  // The magic string at the start makes the file no SQLite database at all.
  EXPECT_GT(refused, 0);
  EXPECT_GT(loaded, 0);  // a flip in free space or in a value's payload changes nothing the checks see
}

}  // namespace
}  // namespace meshscope

namespace meshscope {
namespace {

// The work tables read back as the import wrote them, and refused naming file, table and row when a value is
// not a finite, non-negative amount or a column is missing (read_work, profiler/work_store.hpp).
TEST(HostileProfile, WorkTablesAreReadBackOrRefusedNamingTheRow) {
  const fs::path dir = fresh_dir("hostile-work");
  const fs::path base = dir / "work.msdb";
  write_small_profile(base);
  run_sql(
      base,
      "INSERT INTO op_work (id, rank, external_id, pid, tid, start_ns, name, status, category, flops, bytes,"
      " kernels, kernel_ns) VALUES (1, 0, 5, 1, 1, 950, 1, 1, 1, 2.0e9, 3.0e6, 2, 100),"
      " (2, 1, 5, 1, 1, 950, 1, 1, 1, 4.0e9, 3.0e6, 2, 100), (3, 0, 6, 1, 1, 960, 1, 2, NULL, NULL, NULL,"
      " 0, 0), (4, 0, 7, 1, 1, 970, 1, 3, NULL, NULL, NULL, 0, 0);"
      "INSERT INTO kernel_work (activity_id, rank, op_id, flops, bytes) VALUES (1, 0, 1, 1.0e9, 1.5e6),"
      " (2, 0, 1, 1.0e9, 1.5e6)");
  const StoredWork all = read_work(base);
  ASSERT_TRUE(all.has_tables);
  EXPECT_TRUE(all.any_rows);
  EXPECT_EQ(all.nested, 1);
  EXPECT_EQ(all.unparsable, 1);
  ASSERT_EQ(all.counted.size(), 2u);
  EXPECT_EQ(all.counted[1].rank, 1);
  EXPECT_DOUBLE_EQ(all.counted[1].flops, 4.0e9);
  EXPECT_EQ(all.kernel_shares.size(), 2u);
  const StoredWork rank1 = read_work(base, {.ranks = {1}, .lowest_rank_only = false, .kernel_shares = true});
  ASSERT_EQ(rank1.counted.size(), 1u);
  EXPECT_EQ(rank1.counted[0].id, 2);
  EXPECT_TRUE(rank1.kernel_shares.empty());
  const StoredWork lowest = read_work(base, {.ranks = {}, .lowest_rank_only = true, .kernel_shares = true});
  ASSERT_EQ(lowest.counted.size(), 1u);
  EXPECT_EQ(lowest.counted[0].rank, 0);
  EXPECT_TRUE(lowest.kernel_shares.empty());

  auto error_after = [&](const std::string& name, const std::string& sql) {
    return error_after_sql(base, dir / (name + ".msdb"), sql, [](const fs::path& p) { read_work(p); });
  };
  EXPECT_EQ(
      error_after("negative", "UPDATE op_work SET flops = -1 WHERE id = 2"),
      (dir / "negative.msdb").string() + ": op_work row 2: flops and bytes must be finite and not negative");
  EXPECT_EQ(error_after("infinite", "UPDATE kernel_work SET bytes = 1e999 WHERE activity_id = 2"),
            (dir / "infinite.msdb").string() +
                ": kernel_work row 2: flops and bytes must be finite and not negative");
  EXPECT_EQ(error_after("rank", "UPDATE op_work SET rank = 9999999999 WHERE id = 1"),
            (dir / "rank.msdb").string() + ": op_work row 1: its rank is not in the profile");
  EXPECT_EQ(error_after("column", "ALTER TABLE op_work DROP COLUMN kernel_ns"),
            (dir / "column.msdb").string() + ": table op_work has no column kernel_ns");
}

}  // namespace
}  // namespace meshscope
