// `meshscope import` shows its progress on standard error (files done of all, share read, time left): on a
// terminal, or anywhere with --progress; standard output keeps only the summary.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/import/test_support.hpp"

namespace meshscope::testing {
namespace {

TEST(ImportProgress, CountsTheFilesOfADirectoryOnStandardError) {
  TempDir dir("import-progress");
  const auto traces = traces_dir() / "hta" / "trace_filter";  // two ranks, two files
  const auto r = run_meshscope(
      "import --progress '" + traces.string() + "' -o '" + (dir / "p.msdb").string() + "'", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("importing: 0 of 2 files"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("importing: 1 of 2 files"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 of 2 files read, finishing the profile"), std::string::npos) << r.err;
  // The status line is rewritten in place and cleared at the end; the summary goes to standard output alone.
  EXPECT_EQ(r.err.find('\n'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.back(), '\r');
  EXPECT_EQ(r.out.rfind("imported 2 ranks", 0), 0u) << r.out;
}

TEST(ImportProgress, NoneWithoutATerminalUnlessAsked) {
  TempDir dir("import-no-progress");
  const auto trace = traces_dir() / "hta" / "trace_filter" / "sampled_rank-0.json.gz";
  const auto r =
      run_meshscope("import '" + trace.string() + "' -o '" + (dir / "p.msdb").string() + "'", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(ImportProgress, AFailedImportEndsOnACleanLine) {
  TempDir dir("import-progress-bad");
  write_text(dir / "bad.json", "{\"traceEvents\": [");
  const auto r = run_meshscope(
      "import --progress '" + (dir / "bad.json").string() + "' -o '" + (dir / "p.msdb").string() + "'",
      dir.path());
  EXPECT_EQ(r.exit_code, 1);
  // The status line is cleared before the one-line error.
  const auto error = r.err.substr(r.err.rfind('\r') + 1);
  EXPECT_NE(error.find("bad.json: truncated or malformed JSON"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace meshscope::testing
