// `meshscope report` on a job without collective metadata (only kernel names, as 2023-era Kineto traces): the
// headline names the rank the others waited for, and the exposed-communication line of a rank that only
// waited says so, instead of blaming the waiting rank.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "tests/measure/cli_test_util.hpp"

#include "profiler/profile_writer.hpp"

namespace {

namespace fs = std::filesystem;
using meshscope::TimeNs;

// Four ranks, each a GEMM then three all-to-alls that NCCL runs as SendRecv kernels, launched from PyTorch's
// nccl:all_to_all; rank 2 reaches the first two 400 µs late, and every member ends together.
fs::path job(const fs::path& dir) {
  const fs::path path = dir / "job.msdb";
  meshscope::ProfileWriter writer(path, meshscope::WriterOptions::synchronous());
  std::int64_t correlation = 1;
  for (std::int32_t rank = 0; rank < 4; ++rank) {
    meshscope::RankInfo info;
    info.rank = rank;
    info.world_size = 4;
    info.source_file = "test";
    info.rank_source = "test";
    writer.set_rank(info);
    auto launch = [&](TimeNs at, std::int64_t stream, TimeNs start, TimeNs end, std::string_view name) {
      meshscope::ApiCallRecord api;
      api.rank = rank;
      api.pid = 1;
      api.tid = 1;
      api.start_ns = at;
      api.end_ns = at + 1000;
      api.name = writer.intern("cudaLaunchKernel");
      api.correlation = correlation;
      writer.add_api_call(api);
      meshscope::ActivityRecord a;
      a.rank = rank;
      a.kind = meshscope::ActivityKind::kKernel;
      a.stream = stream;
      a.start_ns = start;
      a.end_ns = end;
      a.name = writer.intern(name);
      a.correlation = correlation++;
      return writer.add_activity(a);
    };
    launch(0, 7, 10'000, 1'000'000, "void gemm<float>(float*)");
    for (int i = 0; i < 3; ++i) {
      const TimeNs base = 1'000'000 + 1'000'000 * i;
      const TimeNs start = base + (rank == 2 && i < 2 ? 400'000 : 0);
      const TimeNs end = base + 700'000;
      meshscope::RangeRecord op;
      op.rank = rank;
      op.kind = meshscope::RangeKind::kCpuOp;
      op.pid = 1;
      op.tid = 1;
      op.start_ns = base - 20'000;
      op.end_ns = base;
      op.name = writer.intern("nccl:all_to_all");
      writer.add_range(op);
      const std::int64_t k =
          launch(base - 10'000, 84, start, end, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)");
      meshscope::CollectiveRecord c;
      c.rank = rank;
      c.activity_id = k;
      c.op = writer.intern("sendrecv");
      c.start_ns = start;
      c.end_ns = end;
      c.source = "kernel_name";
      writer.add_collective(c);
    }
  }
  writer.commit();
  return path;
}

TEST(ReportHeadline, NamesTheRankTheOthersWaitedFor) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("headline-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path profile = job(dir);
  const fs::path out = dir / "report.txt";
  const int status = std::system(
      (std::string(MESHSCOPE_BINARY) + " report '" + profile.string() + "' >'" + out.string() + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::string report = meshscope::test::slurp(out);
  // The text wraps at 120 columns with a two-space hang: read it as one line per bullet.
  for (auto at = report.find("\n  "); at != std::string::npos; at = report.find("\n  ", at))
    report.replace(at, 3, " ");
  const auto stands_out = report.find("What stands out\n---------------\n");
  ASSERT_NE(stands_out, std::string::npos) << report;
  const std::string first =
      report.substr(stands_out + 32, report.find('\n', stands_out + 32) - stands_out - 32);
  EXPECT_EQ(first.rfind("* Straggler: the other ranks waited 2.400 ms for rank 2 in collectives.", 0), 0u)
      << report;
  EXPECT_NE(report.find("It arrived last in 2 of the 3 collectives matched on every peer, 800.0 µs after the "
                        "previous peer in total"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("was waiting for peers to arrive (rank 2 came last most often)"), std::string::npos)
      << report;
  EXPECT_NE(report.find("alltoall       CPU op   unknown    unknown      12"), std::string::npos) << report;
  EXPECT_NE(report.find("3 matched on every peer (3 of them without metadata"), std::string::npos) << report;
}

}  // namespace
