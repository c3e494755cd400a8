// Kineto importer: exact timestamps, rank assignment, edge-case traces, bad input, streaming = in-memory, and
// export -> import round trips, all on the real traces in shared/traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "collectors/import/import.hpp"
#include "collectors/import/kineto/kineto_importer.hpp"
#include "profiler/error.hpp"
#include "profiler/perfetto_export.hpp"
#include "profiler/profile.hpp"
#include "tests/import/test_support.hpp"

namespace meshscope {
namespace {

using testing::query_one;
using testing::query_rows;
using testing::run_meshscope;
using testing::TempDir;
using testing::traces_dir;

TEST(ParseMicroseconds, KeepsEveryNanosecondExactly) {
  std::int64_t ns = 0;
  ASSERT_TRUE(kineto::parse_microseconds("4458676522690.655", ns));
  EXPECT_EQ(ns, 4458676522690655);  // 16 significant digits: a double would lose the last one
  ASSERT_TRUE(kineto::parse_microseconds("1623142623460111", ns));
  EXPECT_EQ(ns, 1623142623460111000);
  ASSERT_TRUE(kineto::parse_microseconds("1.5", ns));
  EXPECT_EQ(ns, 1500);
  ASSERT_TRUE(kineto::parse_microseconds("0.001", ns));
  EXPECT_EQ(ns, 1);
  ASSERT_TRUE(kineto::parse_microseconds("12.3456", ns));  // picoseconds round half up
  EXPECT_EQ(ns, 12346);
  ASSERT_TRUE(kineto::parse_microseconds("12.3454", ns));
  EXPECT_EQ(ns, 12345);
  ASSERT_TRUE(kineto::parse_microseconds("-3.25", ns));
  EXPECT_EQ(ns, -3250);
  ASSERT_TRUE(kineto::parse_microseconds("1e3", ns));
  EXPECT_EQ(ns, 1000000);
  ASSERT_TRUE(kineto::parse_microseconds("7 ", ns));
  EXPECT_EQ(ns, 7000);
  EXPECT_FALSE(kineto::parse_microseconds("abc", ns));
  EXPECT_FALSE(kineto::parse_microseconds("", ns));
  EXPECT_FALSE(kineto::parse_microseconds("1.2.3", ns));
}

TEST(RankFromFileName, RecognisesRankAndWorker) {
  EXPECT_EQ(rank_from_file_name("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), 34);
  EXPECT_EQ(rank_from_file_name("sampled_rank-1.json.gz"), 1);
  EXPECT_EQ(rank_from_file_name("worker0.1623143089861.pt.trace.json.gz"), 0);
  EXPECT_EQ(rank_from_file_name("trace_rank_12.json"), 12);
  EXPECT_EQ(rank_from_file_name("rank3.json"), 3);
  EXPECT_EQ(rank_from_file_name("nccl_data.json.gz"), -1);
  EXPECT_EQ(rank_from_file_name("frank-2.json"), -1);  // "frank" is not "rank"
}

// Timestamps are float microseconds plus baseTimeNanoseconds (which this trace states after its events); the
// expected values were computed from the file's decimal text with Python's decimal module.
TEST(Kineto, NcclParserConfigTimesAndCollectiveMetadata) {
  TempDir dir("kineto-nccl");
  const auto out = dir / "p.msdb";
  import_traces({traces_dir() / "hta/nccl_parser_config/nccl_data.json.gz"}, out);
  EXPECT_EQ(query_one(out, "SELECT first_ns, last_ns, rank_source, world_size FROM ranks"),
            "1716423322416788066|1716423323101161005|distributedInfo|2");
  EXPECT_EQ(query_one(out, "SELECT MIN(start_ns), MAX(end_ns) FROM activities"),
            "1716423322422880181|1716423323083431186");
  // The first all-reduce kernel: ts 4458676524716.094 us, dur 3306.963 us, 2049000 floats in group "0" of 2.
  EXPECT_EQ(query_one(out,
                      "SELECT a.start_ns, a.end_ns - a.start_ns, c.in_nelems, c.in_bytes, d.value, g.value,"
                      " c.group_size, c.source, al.value, pr.value FROM collectives c"
                      " JOIN activities a ON a.id = c.activity_id JOIN strings o ON o.id = c.op"
                      " JOIN strings d ON d.id = c.dtype JOIN strings g ON g.id = c.communicator"
                      " JOIN strings al ON al.id = c.algorithm JOIN strings pr ON pr.id = c.protocol"
                      " WHERE o.value = 'allreduce' ORDER BY a.start_ns LIMIT 1"),
            "1716423322524716094|3306963|2049000|8196000|Float|0|2|kernel_args|RING|LL");
  EXPECT_EQ(
      query_one(
          out,
          "SELECT COUNT(*) FROM collectives c JOIN strings o ON o.id = c.op WHERE o.value = 'allreduce'"),
      "15");
  // distributedInfo.pg_config and deviceProperties.
  EXPECT_EQ(query_one(out, "SELECT pg_name, pg_desc, backend, group_size, ranks_json FROM process_groups"),
            "0|default_pg|cuda:nccl|2|[0, 1]");
  EXPECT_EQ(query_one(out, "SELECT COUNT(*), MIN(name), MIN(sm_count) FROM devices"),
            "8|NVIDIA A100-PG509-200|108");
  EXPECT_EQ(query_one(out, "SELECT comm_version, backend FROM ranks"), "NCCL 2.17.1|nccl");
}

TEST(Kineto, RcclGenericKernelsTakeTheirOperationFromTheArgs) {
  // MI300X/RCCL: every collective runs as ncclDevKernel_Generic, whose name says nothing; 12 of the 17 carry
  // collective args. The other 5 were launched before the profiler started (no launch call in the trace), so
  // nothing links them to a record_param_comms op and they stay without metadata (the name rules still see
  // them as communication). The CPU-op -> kernel link itself is covered by writer_test with a launch inside
  // the op.
  TempDir dir("kineto-mi300");
  const auto out = dir / "p.msdb";
  import_traces({traces_dir() / "tracelens/mi300_resnet_act_checkpoint.json.gz"}, out);
  EXPECT_EQ(
      query_rows(
          out,
          "SELECT o.value, c.group_size, c.source, COUNT(*) FROM collectives c"
          " JOIN activities a ON a.id = c.activity_id JOIN strings s ON s.id = a.name"
          " JOIN strings o ON o.id = c.op WHERE s.value LIKE 'ncclDevKernel_Generic%' GROUP BY 1, 2, 3"),
      (std::vector<std::string>{"allreduce|8|kernel_args|6", "broadcast|8|kernel_args|6"}));
  EXPECT_EQ(
      query_one(out,
                "SELECT COUNT(*) FROM activities a JOIN strings s ON s.id = a.name"
                " WHERE s.value LIKE 'ncclDevKernel%' AND a.id NOT IN (SELECT activity_id FROM collectives)"
                " AND a.correlation NOT IN (SELECT correlation FROM api_calls)"),
      "5");
}

TEST(Kineto, OldGenerationTraceImports) {
  TempDir dir("kineto-2021");
  const auto out = dir / "p.msdb";
  const auto summary = import_traces(
      {traces_dir() / "kineto/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"}, out);
  ASSERT_EQ(summary.ranks.size(), 1u);
  EXPECT_EQ(summary.ranks[0].rank_source, "filename");  // no distributedInfo: "worker0" in the name
  // 2021 traces: integer microseconds, "Kernel"/"Runtime"/"Operator" categories, tid "stream 7".
  EXPECT_EQ(query_one(out, "SELECT COUNT(*) FROM activities WHERE kind = 1"), "8772");
  EXPECT_EQ(query_one(out, "SELECT COUNT(*) FROM api_calls"), "11923");
  EXPECT_EQ(query_one(out, "SELECT COUNT(DISTINCT stream) FROM activities"), "1");
  EXPECT_EQ(query_one(out, "SELECT MIN(start_ns) % 1000 FROM activities"), "0");
}

TEST(Kineto, MultiRankDirectoryOrderedByDistributedInfo) {
  TempDir dir("kineto-multi");
  const auto out = dir / "p.msdb";
  const auto summary = import_traces({traces_dir() / "hta/trace_filter"}, out);
  ASSERT_EQ(summary.ranks.size(), 2u);
  EXPECT_EQ(query_rows(out, "SELECT rank, world_size, rank_source FROM ranks ORDER BY rank"),
            (std::vector<std::string>{"0|128|distributedInfo", "1|128|distributedInfo"}));
  const auto profile = Profile::load(out);
  EXPECT_EQ(profile.world_size(), 128);
  ASSERT_EQ(profile.ranks().size(), 2u);
  EXPECT_EQ(profile.ranks()[0].steps.size(), 2u);
  EXPECT_EQ(profile.ranks()[1].steps.size(), 2u);
}

TEST(Kineto, CpuOnlyRankImportsWithNoGpuRows) {
  TempDir dir("kineto-cpu-only");
  const auto out = dir / "p.msdb";
  const auto summary =
      import_traces({traces_dir() / "hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"}, out);
  ASSERT_EQ(summary.ranks.size(), 1u);
  EXPECT_EQ(summary.ranks[0].rank, 34);
  EXPECT_EQ(summary.ranks[0].gpu_events, 0u);
  EXPECT_EQ(query_one(out, "SELECT COUNT(*) FROM activities"), "0");
  EXPECT_EQ(query_one(out, "SELECT COUNT(*) > 0 FROM ranges"), "1");
  EXPECT_EQ(query_one(out, "SELECT severity FROM diagnostics WHERE message LIKE '%no GPU activity%'"),
            "warning");
  const auto profile = Profile::load(out);
  EXPECT_TRUE(profile.ranks()[0].streams.empty());
}

TEST(Kineto, MissingRankIsInferredFromFileNameOrRefused) {
  TempDir dir("kineto-rank-missing");
  const auto source =
      traces_dir() / "hta/rank_unavailable/rank_not_found.json.gz";  // distributedInfo without rank
  // A single file: it is rank 0, and the profile says why.
  const auto single = dir / "single.msdb";
  const auto summary = import_traces({source}, single);
  EXPECT_EQ(summary.ranks[0].rank_source, "single");
  // Two copies named rank-3 and rank-5: ranks from the file names.
  std::filesystem::copy_file(source, dir / "job_rank-3.json.gz");
  std::filesystem::copy_file(source, dir / "job_rank-5.json.gz");
  const auto named = dir / "named.msdb";
  import_traces({dir / "job_rank-3.json.gz", dir / "job_rank-5.json.gz"}, named);
  EXPECT_EQ(query_rows(named, "SELECT rank, rank_source FROM ranks ORDER BY rank"),
            (std::vector<std::string>{"3|filename", "5|filename"}));
  // Two copies with no rank anywhere: refused, nothing written.
  std::filesystem::copy_file(source, dir / "a.json.gz");
  std::filesystem::copy_file(source, dir / "b.json.gz");
  const auto refused = dir / "refused.msdb";
  try {
    import_traces({dir / "a.json.gz", dir / "b.json.gz"}, refused);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no rank in distributedInfo or in the file name"),
              std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(refused));
}

TEST(Kineto, MetadataAfterTheEventsIsApplied) {
  TempDir dir("kineto-trailing");
  // distributedInfo and baseTimeNanoseconds after traceEvents (as in hta/call_stack and HTA's nccl trace).
  const auto trace = dir / "trailing.json";
  testing::write_text(trace, R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2,
     "args": {"device": 0, "stream": 7, "correlation": 5}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 101, "ts": 9, "dur": 1,
     "args": {"correlation": 5}}],
    "distributedInfo": {"rank": 7, "world_size": 8}, "baseTimeNanoseconds": 1000000000})");
  for (const std::uint64_t threshold :
       {std::uint64_t{1} << 30, std::uint64_t{0}}) {  // in memory, then streamed
    const auto out = dir / ("p" + std::to_string(threshold) + ".msdb");
    ImportOptions options;
    options.streaming_threshold_bytes = threshold;
    import_traces({trace}, out, options);
    EXPECT_EQ(query_one(out, "SELECT rank, rank_source, first_ns, last_ns FROM ranks"),
              "7|distributedInfo|1000009000|1000012500");
    EXPECT_EQ(query_one(out, "SELECT rank, start_ns, end_ns FROM activities"), "7|1000010500|1000012500");
  }
}

// A device property that is an array or object where a text is expected (a damaged trace; the fuzzer's
// kineto_memory finding device_name_array): read once, stored as its JSON text, in memory and streamed.
TEST(Kineto, DevicePropertyOfTheWrongKindIsReadOnce) {
  TempDir dir("kineto-device-array");
  const auto trace = dir / "device.json";
  testing::write_text(trace, R"({"deviceProperties": [{"id": 0, "name": ["H100", {"x": 1}], "numSms": 132}],
    "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 2,
     "args": {"device": 0, "stream": 7, "correlation": 5}}]})");
  for (const std::uint64_t threshold : {std::uint64_t{1} << 30, std::uint64_t{0}}) {
    const auto out = dir / ("p" + std::to_string(threshold) + ".msdb");
    ImportOptions options;
    options.streaming_threshold_bytes = threshold;
    import_traces({trace}, out, options);
    EXPECT_EQ(query_one(out, "SELECT device, name, sm_count FROM devices"), R"(0|["H100", {"x": 1}]|132)");
  }
}

// Streaming (flat memory) and in-memory reading must produce identical profiles.
TEST(Kineto, StreamingAndInMemoryReadersAgree) {
  TempDir dir("kineto-stream");
  const auto trace = traces_dir() / "hta/trace_diff/test/test.json.gz";
  const auto a = dir / "memory.msdb", b = dir / "stream.msdb";
  import_traces({trace}, a);
  ImportOptions streaming;
  streaming.streaming_threshold_bytes = 0;
  import_traces({trace}, b, streaming);
  for (const char* query :
       {"SELECT COUNT(*), SUM(start_ns), SUM(end_ns), SUM(correlation), SUM(name) FROM activities",
        "SELECT COUNT(*), SUM(start_ns), SUM(end_ns), SUM(correlation) FROM api_calls",
        "SELECT COUNT(*), SUM(start_ns), SUM(end_ns), SUM(depth), SUM(parent_id) FROM ranges",
        "SELECT COUNT(*), SUM(start_ns), SUM(in_bytes) FROM collectives", "SELECT COUNT(*) FROM strings",
        "SELECT rank, first_ns, last_ns FROM ranks"}) {
    EXPECT_EQ(query_rows(a, query), query_rows(b, query)) << query;
  }
}

// Export, then import the export: the same events come back.
void expect_round_trip(const std::vector<std::filesystem::path>& traces, const std::string& name) {
  TempDir dir("kineto-roundtrip-" + name);
  const auto original = dir / "original.msdb", exported = dir / "export.json",
             reimported = dir / "again.msdb";
  import_traces(traces, original);
  export_perfetto(Profile::load(original), exported);
  import_traces({exported}, reimported);
  const char* queries[] = {
      "SELECT a.rank, a.kind, a.device, a.stream, a.start_ns, a.end_ns, s.value, a.correlation, a.grid_x, "
      "a.grid_y,"
      " a.block_x, a.registers, a.shared_bytes, a.bytes FROM activities a JOIN strings s ON s.id = a.name"
      " ORDER BY 1, 3, 4, 5, 6, 7",
      "SELECT c.rank, c.kind, c.tid, c.start_ns, c.end_ns, s.value, c.correlation FROM api_calls c"
      " JOIN strings s ON s.id = c.name ORDER BY 1, 3, 4, 5, 6",
      "SELECT r.rank, r.kind, r.pid, r.start_ns, r.end_ns, s.value, r.depth, r.step FROM ranges r"
      " JOIN strings s ON s.id = r.name ORDER BY 1, 2, 3, 4, 5, 6",
      "SELECT c.rank, o.value, c.start_ns, c.end_ns, c.seq, c.in_bytes, c.out_bytes, c.group_size, "
      "c.in_nelems"
      " FROM collectives c JOIN strings o ON o.id = c.op WHERE c.activity_id IS NOT NULL ORDER BY 1, 3, 2",
      // Categories by their text: string ids depend on what else the import interned (operator shapes).
      "SELECT f.rank, s.value, f.flow_id, f.src_ns, f.dst_ns FROM flows f JOIN strings s ON s.id = f.category"
      " ORDER BY 1, 3, 4",
      "SELECT rank, world_size, rank_source, first_ns, last_ns FROM ranks ORDER BY 1",
      "SELECT rank, device, name, total_memory_bytes, sm_count FROM devices ORDER BY 1, 2",
      "SELECT rank, pg_name, group_size FROM process_groups ORDER BY 1, 2",
  };
  for (const char* query : queries) {
    const auto expected = query_rows(original, query);
    const auto actual = query_rows(reimported, query);
    EXPECT_EQ(expected.size(), actual.size()) << query;
    EXPECT_TRUE(expected == actual) << query;
  }
}

TEST(Kineto, ExportThenImportGivesBackTheSameEvents) {
  expect_round_trip({traces_dir() / "hta/nccl_parser_config/nccl_data.json.gz"}, "nccl");
  expect_round_trip({traces_dir() / "hta/trace_filter"}, "multi");
  expect_round_trip({traces_dir() / "tracelens/mi300_resnet_act_checkpoint.json.gz"}, "mi300");
}

// ---- bad input: exit 1, one line on stderr naming the file and the problem, nothing written ----

struct BadInput {
  std::string name;
  std::string content;  // written to NAME; empty means "do not create the file"
  std::string expected_message;
};

class KinetoBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(KinetoBadInput, ExitsOneWithOneLineAndWritesNothing) {
  const auto& param = GetParam();
  TempDir dir("kineto-bad-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + param.name);
  const auto input = dir / param.name;
  if (!param.content.empty()) testing::write_text(input, param.content);
  const auto result =
      run_meshscope("import '" + input.string() + "' -o '" + (dir / "out.msdb").string() + "'", dir.path());
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find(input.string()), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(param.expected_message), std::string::npos) << result.err;
  auto left = dir.entries();
  left.erase(std::remove(left.begin(), left.end(), param.name), left.end());
  EXPECT_TRUE(left.empty()) << "left behind: " << (left.empty() ? "" : left.front());
}

INSTANTIATE_TEST_SUITE_P(
    Files, KinetoBadInput,
    ::testing::Values(
        BadInput{"missing.json", "", "no such file"},
        BadInput{"not_json.json", "this is not json at all\n", "not a Chrome-trace JSON object"},
        BadInput{"garbage.json", "{ this is not json }\n", "malformed JSON"},
        BadInput{"truncated.json",
                 R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2)",
                 "truncated or malformed JSON"},
        BadInput{"wrong_type.json",
                 R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 2}]})",
                 "field 'ts' is not a number"},
        BadInput{
            "negative.json",
            R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": -2}]})",
            "negative duration"},
        BadInput{"no_events.json",
                 R"({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]})",
                 "no GPU or CPU events"},
        BadInput{"no_trace_events.json", R"({"schemaVersion": 1})", "no traceEvents"},
        BadInput{"events_not_array.json", R"({"traceEvents": 5})", "traceEvents is not an array"}),
    [](const ::testing::TestParamInfo<BadInput>& info) {
      std::string name = info.param.name;
      std::replace(name.begin(), name.end(), '.', '_');
      return name;
    });

TEST(KinetoBadInputFiles, TruncatedGzipIsRefused) {
  TempDir dir("kineto-bad-gzip");
  const auto source = traces_dir() / "hta/trace_filter/sampled_rank-0.json.gz";
  const auto size = std::filesystem::file_size(source);
  std::string bytes = testing::read_text(source).substr(0, size / 2);
  const auto input = dir / "half.json.gz";
  testing::write_text(input, bytes);
  const auto result =
      run_meshscope("import '" + input.string() + "' -o '" + (dir / "out.msdb").string() + "'", dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("truncated gzip"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.msdb"));
}

TEST(KinetoBadInputFiles, TwoFilesClaimingOneRankAreRefused) {
  TempDir dir("kineto-bad-duplicate");
  const auto source = traces_dir() / "hta/trace_filter/sampled_rank-0.json.gz";
  std::filesystem::copy_file(source, dir / "copy_a.json.gz");
  std::filesystem::copy_file(source, dir / "copy_b.json.gz");
  const auto result =
      run_meshscope("import '" + (dir / "copy_a.json.gz").string() + "' '" +
                        (dir / "copy_b.json.gz").string() + "' -o '" + (dir / "out.msdb").string() + "'",
                    dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("claims rank 0"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.msdb"));
}

TEST(KinetoBadInputFiles, FilesFromDifferentJobsAreRefused) {
  TempDir dir("kineto-bad-jobs");
  // Rank 0 of a 128-rank job and rank 1 of a 2-rank job.
  const auto result =
      run_meshscope("import '" + (traces_dir() / "hta/trace_filter/sampled_rank-0.json.gz").string() + "' '" +
                        (traces_dir() / "hta/trace_diff/test/test.json.gz").string() + "' -o '" +
                        (dir / "out.msdb").string() + "'",
                    dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("different jobs"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out.msdb"));
}

TEST(KinetoCommandLine, UsageErrorsExitTwo) {
  TempDir dir("kineto-usage");
  EXPECT_EQ(run_meshscope("import", dir.path()).exit_code, 2);
  EXPECT_EQ(run_meshscope("no-such-command", dir.path()).exit_code, 2);
}

TEST(KinetoCommandLine, InfoJsonHasTheDocumentedKeys) {
  TempDir dir("kineto-info");
  const auto out = dir / "p.msdb";
  import_traces({traces_dir() / "hta/trace_filter"}, out);
  const auto result = run_meshscope("info --json '" + out.string() + "'", dir.path());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* key : {"\"schema_version\": 1", "\"ranks\": 2", "\"world_size\": 128", "\"devices\": [",
                          "\"span_us\":", "\"steps\": 2", "\"events\": {", "\"kernel\": 2258",
                          "\"memcpy\": 80", "\"memset\": 20", "\"runtime\": 2358"}) {
    EXPECT_NE(result.out.find(key), std::string::npos) << key << "\n" << result.out;
  }
}

}  // namespace
}  // namespace meshscope
