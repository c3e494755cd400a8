// A file named as Nsight Systems output that is no SQLite database is refused for what it is (was: "truncated
// or malformed JSON", the error of the importer its bytes fell through to).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Result import(const std::string& args, const fs::path& dir) {
  const std::string command = "'" + std::string(MESHSCOPE_BINARY) + "' import " + args + " >'" +
                              (dir / "out.txt").string() + "' 2>'" + (dir / "err.txt").string() + "'";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir / "out.txt"), slurp(dir / "err.txt")};
}

TEST(ExportNames, AFileNamedAsAnExportThatIsNoSqliteSaysSo) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("export-names-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path sqlite = dir / "run.sqlite", report = dir / "run.nsys-rep", out = dir / "p.msdb";
  std::ofstream(sqlite, std::ios::binary) << std::string("\x8f\x01{\"not sqlite", 13);
  std::ofstream(report, std::ios::binary) << "NSYS-REP bytes";
  const Result a = import("'" + sqlite.string() + "' -o '" + out.string() + "'", dir);
  EXPECT_EQ(a.status, 1);
  EXPECT_EQ(a.err,
            "meshscope: " + sqlite.string() +
                ": not an SQLite database (no SQLite header), though named as one: an Nsight Systems export "
                "is the SQLite file `nsys export --type sqlite` writes\n");
  const Result b = import("'" + report.string() + "' -o '" + out.string() + "'", dir);
  EXPECT_EQ(b.status, 1);
  EXPECT_EQ(b.err,
            "meshscope: " + report.string() +
                ": an Nsight Systems report, not its SQLite export: run `nsys export --type sqlite` on it "
                "and import the .sqlite file\n");
  EXPECT_FALSE(fs::exists(out));
  // With --skip-bad beside a real trace it is left out with that reason.
  const fs::path trace = fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys/saxpy_mpi_cuda_a100.sqlite";
  const Result c =
      import("--skip-bad '" + sqlite.string() + "' '" + trace.string() + "' -o '" + out.string() + "'", dir);
  EXPECT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("note: skipped " + sqlite.string() + ": not an SQLite database"), std::string::npos)
      << c.out;
  EXPECT_TRUE(fs::exists(out));
}

}  // namespace
