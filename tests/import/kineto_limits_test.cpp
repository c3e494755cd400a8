// Times and sizes at the Kineto border: timestamps and durations parsed with overflow
// checks (an error naming the event, never a wrapped time), gzip files read to their checked end, no single
// value so large that reading it costs minutes, and no stray character that sends the streaming scanner
// round in circles. Each case runs through both readers (in memory and streaming) where both apply.
#include <gtest/gtest.h>

#include <zlib.h>

#include <filesystem>
#include <limits>
#include <string>

#include "collectors/import/import.hpp"
#include "collectors/import/input_file.hpp"
#include "collectors/import/kineto/kineto_importer.hpp"
#include "profiler/error.hpp"
#include "profiler/perfetto_export.hpp"
#include "profiler/profile.hpp"
#include "profiler/profile_writer.hpp"
#include "tests/import/test_support.hpp"

namespace meshscope {
namespace {

namespace fs = std::filesystem;
using testing::query_one;
using testing::read_text;
using testing::run_meshscope;
using testing::TempDir;
using testing::traces_dir;
using testing::write_text;

// The error of importing TRACE (text) with the in-memory reader (streaming = false) or the streaming one;
// "" when it imports.
std::string import_error(const TempDir& dir, const std::string& trace, bool streaming,
                         const std::string& name = "t.json") {
  write_text(dir / name, trace);
  fs::remove(dir / "out.msdb");
  ImportOptions options;
  if (streaming) options.streaming_threshold_bytes = 0;
  try {
    import_traces({dir / name}, dir / "out.msdb", options);
  } catch (const Error& e) {
    EXPECT_FALSE(fs::exists(dir / "out.msdb"));
    return e.what();
  }
  return {};
}

std::string kernel(const std::string& ts, const std::string& dur, const std::string& extra = "") {
  return R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" + ts + R"(, "dur": )" +
         dur + R"(, "args": {"device": 0, "stream": 7}})" + extra;
}

TEST(KinetoTimes, ParsingRefusesWhatWouldWrap) {
  std::int64_t ns = 0;
  bool out_of_range = false;
  // 2^62 - 1 ns is the last time a profile holds.
  ASSERT_TRUE(kineto::parse_microseconds("4611686018427387.903", ns, &out_of_range));
  EXPECT_EQ(ns, kTimeLimitNs);
  EXPECT_FALSE(kineto::parse_microseconds("4611686018427387.904", ns, &out_of_range));
  EXPECT_TRUE(out_of_range);
  // Was: llround(inf) = INT64_MIN, the null marker; and micros * 1000 wrapped.
  for (const char* token : {"1e308", "-1e308", "9223372036854775807", "99999999999999999999999", "4.7e15"}) {
    out_of_range = false;
    EXPECT_FALSE(kineto::parse_microseconds(token, ns, &out_of_range)) << token;
    EXPECT_TRUE(out_of_range) << token;
  }
  EXPECT_FALSE(kineto::parse_microseconds("12x", ns, &out_of_range));
  EXPECT_FALSE(out_of_range);
}

TEST(KinetoTimes, EventsOutOfRangeAreErrorsNamingTheEvent) {
  TempDir dir("kineto-times");
  for (const bool streaming : {false, true}) {
    SCOPED_TRACE(streaming ? "streaming" : "in memory");
    const auto huge_ts = import_error(
        dir, R"({"traceEvents": [)" + kernel("1", "2") + "," + kernel("1e308", "2") + "]}", streaming);
    EXPECT_EQ(huge_ts, (dir / "t.json").string() +
                           ": event 2: field 'ts' (1e308 us) is out of range (times lie within +-2^62 ns)");
    // Was: exit 0 and end_ns < start_ns stored ("-1000 ns" in the report).
    const auto huge_dur =
        import_error(dir, R"({"traceEvents": [)" + kernel("1000", "4611686018427387") + "]}", streaming);
    EXPECT_EQ(huge_dur, (dir / "t.json").string() +
                            ": event 1: 'k' lies out of range: ts 1000000 ns + dur 4611686018427387000 ns + "
                            "baseTimeNanoseconds 0 ns is beyond +-2^62 ns");
    const auto huge_base = import_error(
        dir, R"({"baseTimeNanoseconds": 9223372036854775000, "traceEvents": [)" + kernel("1", "2") + "]}",
        streaming);
    EXPECT_EQ(huge_base,
              (dir / "t.json").string() +
                  ": baseTimeNanoseconds 9223372036854775000 is out of range (times lie within +-2^62 ns)");
    const auto sum = import_error(
        dir, R"({"baseTimeNanoseconds": 4611686018427387000, "traceEvents": [)" + kernel("1000", "2") + "]}",
        streaming);
    EXPECT_EQ(sum, (dir / "t.json").string() +
                       ": event 1: 'k' lies out of range: ts 1000000 ns + dur 2000 ns + baseTimeNanoseconds "
                       "4611686018427387000 ns is beyond +-2^62 ns");
    // The base stated after the events moves them out of range.
    const auto late_base = import_error(dir,
                                        R"({"traceEvents": [)" + kernel("4611686018427", "2") +
                                            R"(], "baseTimeNanoseconds": 4611686018427000000})",
                                        streaming);
    // (The in-memory reader looks for such metadata first; the streaming one checks when it meets it.)
    EXPECT_NE(late_base.find("out of range"), std::string::npos) << late_base;
    EXPECT_NE(late_base.find("baseTimeNanoseconds 4611686018427000000"), std::string::npos) << late_base;
    // Just inside the range imports, exactly.
    EXPECT_EQ(import_error(dir,
                           R"({"traceEvents": [)" + kernel("-4611686018427387.903", "4611686018427387.903") +
                               "," + kernel("0", "4611686018427387.903") + "]}",
                           streaming),
              "");
    EXPECT_EQ(testing::query_rows(dir / "out.msdb", "SELECT start_ns, end_ns FROM activities ORDER BY 1"),
              (std::vector<std::string>{"-4611686018427387903|0", "0|4611686018427387903"}));
  }
}

TEST(KinetoTimes, ExportOfTheWidestTimesWritesThemExactly) {
  TempDir dir("kineto-export-range");
  {
    ProfileWriter writer(dir / "wide.msdb");
    RankInfo info;
    info.source_file = "test";
    writer.set_rank(info);
    ActivityRecord a;
    a.start_ns = -kTimeLimitNs;
    a.end_ns = kTimeLimitNs;
    a.name = writer.intern("k");
    writer.add_activity(a);
    writer.commit();
  }
  // Was (UBSan): time - base overflowed for times near the limits; the export exited 0 with wrapped times.
  export_perfetto(Profile::load(dir / "wide.msdb"), dir / "wide.json");
  const std::string json = read_text(dir / "wide.json");
  EXPECT_NE(json.find(R"("dur":9223372036854775.806)"), std::string::npos) << json.substr(0, 2000);
  // The base is a whole second before the first time, which lies beyond -2^62 + 1: importing the export back
  // is refused, with one line, rather than wrapped.
  try {
    import_traces({dir / "wide.json"}, dir / "again.msdb");
    FAIL() << "imported";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("baseTimeNanoseconds"), std::string::npos) << e.what();
  }
}

std::string gzip(const std::string& text) {
  std::string out(compressBound(static_cast<uLong>(text.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(KinetoGzip, ATrailerCutShortIsRefusedByBothReaders) {
  TempDir dir("kineto-gzip-trailer");
  std::string trace = R"({"traceEvents": [)";
  for (int i = 0; i < 200; ++i) trace += (i ? "," : "") + kernel(std::to_string(i * 10), "5");
  trace += "]}";
  const std::string gz = gzip(trace);
  for (std::size_t cut = 1; cut <= 9; ++cut) {
    // Was: 4-9 bytes missing read the trailer's leftovers as a 1.7-4.2 GB size, took the streaming path and
    // stopped at '}' without checking the gzip end: exit 0.
    for (const bool streaming : {false, true}) {
      const auto error = import_error(dir, gz.substr(0, gz.size() - cut), streaming, "t.json.gz");
      EXPECT_NE(error.find("t.json.gz: corrupt or truncated gzip data"), std::string::npos)
          << "cut " << cut << (streaming ? " streaming: " : " in memory: ") << error;
    }
  }
  // The whole file imports; and on the command line the cut file is one line, exit 1.
  EXPECT_EQ(import_error(dir, gz, true, "t.json.gz"), "");
  write_text(dir / "cut.json.gz", gz.substr(0, gz.size() - 6));
  const auto r = run_meshscope(
      "import '" + (dir / "cut.json.gz").string() + "' -o '" + (dir / "o.msdb").string() + "'", dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("corrupt or truncated gzip data"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "o.msdb"));
}

TEST(KinetoScanner, StrayCharactersAndTrailingContentAreMalformedJson) {
  TempDir dir("kineto-stray");
  for (const bool streaming : {false, true}) {
    SCOPED_TRACE(streaming ? "streaming" : "in memory");
    // Was (streaming): one comma appended per iteration, seconds per input (time: bench_import
    // BM_RefuseStrayCommaStreaming).
    const auto stray = import_error(dir, R"({"traceEvents": [)" + kernel("1", "2") + R"(, } ]})", streaming);
    EXPECT_NE(stray.find("t.json: truncated or malformed JSON"), std::string::npos) << stray;
    const auto trailing =
        import_error(dir, R"({"traceEvents": [)" + kernel("1", "2") + R"(]} {"traceEvents": []})", streaming);
    EXPECT_NE(trailing.find("t.json: truncated or malformed JSON"), std::string::npos) << trailing;
    const auto trailing_array = import_error(dir, "[" + kernel("1", "2") + "] ]", streaming);
    EXPECT_NE(trailing_array.find("t.json: truncated or malformed JSON"), std::string::npos)
        << trailing_array;
    const auto no_value =
        import_error(dir, R"({"displayTimeUnit": , "traceEvents": [)" + kernel("1", "2") + "]}", streaming);
    EXPECT_NE(no_value.find("t.json: truncated or malformed JSON"), std::string::npos) << no_value;
    // White space after the end is fine.
    EXPECT_EQ(import_error(dir, R"({"traceEvents": [)" + kernel("1", "2") + "]}\n\n  ", streaming), "");
  }
}

TEST(KinetoSizes, HugeStringsAreRefusedQuicklyWithOneLine) {
  TempDir dir("kineto-huge-string");
  // A 70 MB name: the streaming reader gives up after 64 MiB of one value (was: minutes rescanning the value
  // after every chunk, gigabytes of memory, then an unchecked bind failing; time: bench_import
  // BM_RefuseHugeStringStreaming).
  const std::string huge(70u << 20, 'x');
  const auto streamed =
      import_error(dir,
                   R"({"traceEvents": [)" + kernel("1", "2") + R"(, {"ph": "X", "cat": "cpu_op", "name": ")" +
                       huge + R"(", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})",
                   true);
  EXPECT_EQ(streamed, (dir / "t.json").string() +
                          ": event 2: a JSON value longer than 64 MiB (a damaged or hostile file?)");
  // In memory (the file is under the streaming threshold): the name is refused before it is stored.
  const auto in_memory =
      import_error(dir,
                   R"({"traceEvents": [)" + kernel("1", "2") + R"(, {"ph": "X", "cat": "cpu_op", "name": ")" +
                       std::string(17u << 20, 'y') + R"(", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})",
                   false);
  EXPECT_EQ(in_memory,
            (dir / "t.json").string() +
                ": event 2: a string in 'name' is 17825792 bytes long; meshscope stores at most 16 MiB");
}

// Found by fuzz_kineto_memory: a process group whose member list held a number beyond any rank imported, and
// the profile it wrote then refused to load ("ranks_json holds 206141652992, which is not a rank").
TEST(KinetoSizes, AProcessGroupMemberThatIsNoRankIsRefused) {
  TempDir dir("kineto-pg-ranks");
  for (const bool streaming : {false, true}) {
    const auto error = import_error(
        dir,
        R"({"distributedInfo": {"rank": 0, "pg_config": [{"pg_name": "0", "ranks": [0, 206141652992]}]},)"
        R"( "traceEvents": [)" +
            kernel("1", "2") + "]}",
        streaming);
    EXPECT_EQ(error, (dir / "t.json").string() +
                         ": distributedInfo.pg_config: ranks holds 206141652992, which is not a rank");
  }
}

// Found by fuzz_kineto_memory: a gzip trailer claiming 4 GiB made the in-memory reader reserve 4 GiB for a
// 19 KB file (out of memory). The size a trailer states is bounded by what deflate can expand to (1032:1).
TEST(KinetoGzip, ATrailerClaimingGigabytesDoesNotSizeMemory) {
  TempDir dir("kineto-gzip-isize");
  std::string gz = gzip(R"({"traceEvents": [)" + kernel("1", "2") + "]}");
  for (std::size_t i = gz.size() - 4; i < gz.size(); ++i) gz[i] = '\xff';  // ISIZE = 4 GiB - 1
  write_text(dir / "t.json.gz", gz);
  EXPECT_LE(import::content_size_hint(dir / "t.json.gz"), gz.size() * 1032 + 1024);
  const auto error = import_error(dir, gz, false, "t.json.gz");
  EXPECT_NE(error.find("t.json.gz: corrupt or truncated gzip data"), std::string::npos) << error;
}

// The bad-input sweep's JSON classes that needed no fix, from both readers: a value nested 100
// 000 deep where meshscope reads nothing is skipped without recursion (the trace imports); as an event it is
// one line; invalid UTF-8 and NaN are one line naming the file.
TEST(KinetoSweep, DeepNestingInvalidUtf8AndNanAreOneLine) {
  TempDir dir("kineto-sweep");
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const bool streaming : {false, true}) {
    SCOPED_TRACE(streaming ? "streaming" : "in memory");
    EXPECT_EQ(import_error(dir,
                           R"({"traceEvents": [)" + kernel("1", "2") +
                               R"(, {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, )"
                               R"("dur": 1, "args": {"x": )" +
                               deep + "}}], \"x\": " + deep + "}",
                           streaming),
              "");
    EXPECT_EQ(import_error(dir, R"({"traceEvents": [)" + kernel("1", "2") + ", " + deep + "]}", streaming),
              (dir / "t.json").string() + ": event 2: not a JSON object");
    const auto utf8 =
        import_error(dir,
                     R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k)" + std::string("\xff\xfe") +
                         R"(", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"device": 0, "stream": 7}}]})",
                     streaming);
    EXPECT_EQ(utf8.rfind((dir / "t.json").string() + ": ", 0), 0u) << utf8;
    EXPECT_EQ(utf8.find('\n'), std::string::npos) << utf8;
    const auto nan = import_error(dir, R"({"traceEvents": [)" + kernel("NaN", "2") + "]}", streaming);
    EXPECT_EQ(nan.rfind((dir / "t.json").string() + ": ", 0), 0u) << nan;
    EXPECT_EQ(nan.find('\n'), std::string::npos) << nan;
  }
}

}  // namespace
}  // namespace meshscope
