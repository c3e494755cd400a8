// `meshscope report --rule` on the command line: a pattern keeps its "::", and an ambiguous or malformed rule
// is refused with one line on stderr and exit status 1, before anything is printed.
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

using Result = meshscope::test::CliResult;

Result run(const std::string& arguments, const fs::path& dir) {
  return meshscope::test::run_cli(arguments, dir);
}

// One rank, one kernel of an in-house expert-parallel library and one of its GEMMs.
fs::path fork_profile(const fs::path& dir) {
  const fs::path path = dir / "fork.msdb";
  meshscope::ProfileWriter writer(path);
  meshscope::RankInfo info;
  info.rank = 0;
  info.source_file = "test";
  info.rank_source = "test";
  writer.set_rank(info);
  const char* names[] = {"void foo::ep::shuffle_tokens<8>(int4*, int)",
                         "void foo::gemm::fp8_gemm_kernel<128u>(float*)"};
  meshscope::TimeNs t = 0;
  for (const char* name : names) {
    meshscope::ActivityRecord a;
    a.kind = meshscope::ActivityKind::kKernel;
    a.stream = 7;
    a.start_ns = t;
    a.end_ns = t + 1000;
    a.name = writer.intern(name);
    writer.add_activity(a);
    t += 2000;
  }
  writer.commit();
  return path;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ReportRuleCli, PatternsKeepDoubleColons) {
  const fs::path dir = scratch("rule-cli");
  const fs::path profile = fork_profile(dir);
  // Was: the pattern was cut at its first colon ("foo"), which also took the GEMM in foo::gemm.
  const Result r = run("report --json --rule 'comm:contains:foo::ep::' '" + profile.string() + "'", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"pattern\": \"foo::ep::\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"comm_us\": 1"), std::string::npos) << "one 1 µs kernel is communication";
  EXPECT_NE(r.out.find("\"compute_us\": 1"), std::string::npos) << "the GEMM stays compute";
}

TEST(ReportRuleCli, AmbiguousRulesAreRefusedInOneLine) {
  const fs::path dir = scratch("rule-cli-bad");
  const fs::path profile = fork_profile(dir);
  for (const char* rule : {"comm:contains:foo::ep:::mylib", "comm:contains:a:b:c", "comm:tokens:fn=a||b"}) {
    const Result r = run(std::string("report --rule '") + rule + "' '" + profile.string() + "'", dir);
    EXPECT_EQ(r.status, 1) << rule;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.find("meshscope: --rule " + std::string(rule)), 0u) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
}

}  // namespace
