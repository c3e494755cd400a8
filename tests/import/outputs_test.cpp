// Where `import` and `export` write, and what they read: only regular files (or new ones), links written
// through, never an input, never a device or FIFO; bad input is one line naming the file, exit 1, nothing
// written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/import/test_support.hpp"

namespace meshscope {
namespace {

namespace fs = std::filesystem;
using testing::query_one;
using testing::read_text;
using testing::run_meshscope;
using testing::TempDir;
using testing::write_text;

const char* const kTinyTrace =
    R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2,)"
    R"( "args": {"device": 0, "stream": 7}}]})";

std::string quoted(const fs::path& path) {
  return "'" + path.string() + "'";
}

bool is_a_fifo(const fs::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

int line_count(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Outputs, AFifoOrADirectoryIsNeverReplaced) {
  TempDir dir("outputs-fifo");
  write_text(dir / "t.json", kTinyTrace);
  const fs::path fifo = dir / "out.msdb";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Was: the profile renamed over the FIFO (and, as root, over /dev/full).
  const auto r = run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(fifo), dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "meshscope: " + fifo.string() +
                ": not a regular file (a device, FIFO or socket); meshscope writes only to regular files\n");
  EXPECT_TRUE(is_a_fifo(fifo));
  fs::create_directory(dir / "folder.msdb");
  const auto d =
      run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "folder.msdb"), dir.path());
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_NE(d.err.find("folder.msdb: is a directory"), std::string::npos) << d.err;
  EXPECT_TRUE(fs::is_directory(dir / "folder.msdb"));
  // export refuses the same way.
  ASSERT_EQ(run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "p.msdb"), dir.path())
                .exit_code,
            0);
  const auto e = run_meshscope("export " + quoted(dir / "p.msdb") + " -o " + quoted(fifo), dir.path());
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_EQ(line_count(e.err), 1) << e.err;
  EXPECT_TRUE(is_a_fifo(fifo));
}

TEST(Outputs, ASymbolicLinkIsWrittenThroughNotReplaced) {
  TempDir dir("outputs-link");
  write_text(dir / "t.json", kTinyTrace);
  fs::create_directory(dir / "real");
  write_text(dir / "real" / "job.msdb", "old contents");
  fs::create_symlink("real/job.msdb", dir / "link.msdb");
  const auto r =
      run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "link.msdb"), dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.msdb"));
  EXPECT_EQ(query_one(dir / "real" / "job.msdb", "SELECT count(*) FROM activities"), "1");
  // A dangling link creates the file it names.
  fs::create_symlink("real/new.msdb", dir / "dangling.msdb");
  const auto n =
      run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "dangling.msdb"), dir.path());
  ASSERT_EQ(n.exit_code, 0) << n.err;
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.msdb"));
  EXPECT_EQ(query_one(dir / "real" / "new.msdb", "SELECT count(*) FROM activities"), "1");
  // The hidden temporary files are gone.
  for (const auto& entry : fs::directory_iterator(dir / "real")) {
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
  }
}

TEST(Outputs, PredictsTimelineIsWrittenLikeEveryOtherOutput) {
  // Was: predict --timeline opened the path with std::ofstream: a FIFO blocked it forever, a failed write
  // left half a file.
  TempDir dir("outputs-predict");
  const std::string predict = "predict --model llama3-8b --gpus 32 --pp 4 --global-batch 32 --timeline ";
  const fs::path fifo = dir / "timeline.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = run_meshscope(predict + quoted(fifo), dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "meshscope: " + fifo.string() +
                ": not a regular file (a device, FIFO or socket); meshscope writes only to regular files\n");
  EXPECT_TRUE(is_a_fifo(fifo));
  fs::create_directory(dir / "real");
  write_text(dir / "real" / "t.json", "old contents");
  fs::create_symlink("real/t.json", dir / "link.json");
  const auto l = run_meshscope(predict + quoted(dir / "link.json"), dir.path());
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  std::ifstream in(dir / "real" / "t.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("{\"traceEvents\":[", 0), 0u) << text.substr(0, 100);
  for (const auto& entry : fs::directory_iterator(dir / "real")) {
    EXPECT_NE(entry.path().filename().string()[0], '.') << entry.path();
  }
}

TEST(Outputs, AnOutputThatIsAnInputIsRefused) {
  TempDir dir("outputs-same");
  write_text(dir / "t.json", kTinyTrace);
  const auto r =
      run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "t.json"), dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "meshscope: " + (dir / "t.json").string() + ": is also an input (" +
                       (dir / "t.json").string() + "); write the output to another file\n");
  EXPECT_EQ(read_text(dir / "t.json"), kTinyTrace);
  // Through a link, and for export.
  fs::create_symlink("t.json", dir / "alias.msdb");
  const auto l =
      run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "alias.msdb"), dir.path());
  EXPECT_EQ(l.exit_code, 1);
  EXPECT_NE(l.err.find("is also an input"), std::string::npos) << l.err;
  EXPECT_EQ(read_text(dir / "t.json"), kTinyTrace);
  ASSERT_EQ(run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "p.msdb"), dir.path())
                .exit_code,
            0);
  const auto size = fs::file_size(dir / "p.msdb");
  const auto e =
      run_meshscope("export " + quoted(dir / "p.msdb") + " -o " + quoted(dir / "p.msdb"), dir.path());
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.err.find("p.msdb: is also an input"), std::string::npos) << e.err;
  EXPECT_EQ(fs::file_size(dir / "p.msdb"), size);
}

TEST(Outputs, AFifoOrDeviceAsInputIsRefusedWithoutReadingIt) {
  TempDir dir("outputs-fifo-input");
  const fs::path fifo = dir / "trace.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Was: import (and view, info) blocked forever opening the FIFO. `timeout` turns a hang into a failure.
  for (const std::string& command :
       std::vector<std::string>{"import " + quoted(fifo) + " -o " + quoted(dir / "o.msdb"),
                                "info " + quoted(fifo), "report " + quoted(fifo)}) {
    const auto r = run_meshscope(command, dir.path());
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_EQ(r.err,
              "meshscope: " + fifo.string() +
                  ": not a regular file (a FIFO, device or socket); meshscope reads only regular files\n")
        << command;
  }
  const auto dev = run_meshscope("import /dev/zero -o " + quoted(dir / "o.msdb"), dir.path());
  EXPECT_EQ(dev.exit_code, 1);
  EXPECT_NE(dev.err.find("/dev/zero: not a regular file"), std::string::npos) << dev.err;
  EXPECT_FALSE(fs::exists(dir / "o.msdb"));
}

// A trace big enough that importing it takes a while (about 60 MB of JSON).
void write_big_trace(const fs::path& path) {
  std::ofstream out(path, std::ios::binary);
  out << R"({"traceEvents": [)";
  for (int i = 0; i < 400000; ++i) {
    out << (i ? "," : "") << R"({"ph": "X", "cat": "kernel", "name": "kernel_)" << i % 97
        << R"(", "pid": 0, "tid": 7, "ts": )" << i * 10 << R"(, "dur": 5, "args": {"device": 0, "stream": 7,)"
        << R"( "correlation": )" << i << R"(, "grid": [1, 2, 3], "block": [128, 1, 1]}})";
  }
  out << "]}";
}

// Hidden files in DIR whose names contain PART.
std::vector<std::string> hidden_files(const fs::path& dir, const std::string& part) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name[0] == '.' && name.find(part) != std::string::npos) names.push_back(name);
  }
  return names;
}

// Starts meshscope with ARGS; 100 ms after a hidden temporary file appears in DIR (into the writing), sends
// SIG.
int interrupt_import(const std::vector<std::string>& args, const fs::path& dir, int sig) {
  return testing::signal_meshscope_when(
      args, [&] { return !hidden_files(dir, ".part-").empty(); }, sig, std::chrono::milliseconds(100));
}

TEST(TempFiles, AnInterruptedImportLeavesNothingBehind) {
  TempDir dir("temp-interrupt");
  write_big_trace(dir / "big.json");
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // Was: .out.msdb.tmp-PID-... (up to 90 MB) left in the folder.
    const int ended = interrupt_import(
        {"import", (dir / "big.json").string(), "-o", (dir / "out.msdb").string()}, dir.path(), sig);
    EXPECT_EQ(ended, sig) << "the import was not interrupted by signal " << sig;
    EXPECT_EQ(hidden_files(dir.path(), "out.msdb"), std::vector<std::string>{}) << sig;
    EXPECT_FALSE(fs::exists(dir / "out.msdb"));
  }
}

TEST(TempFiles, WhatAKilledImportLeftIsRemovedByTheNextWriteToTheFolder) {
  TempDir dir("temp-stale");
  write_big_trace(dir / "big.json");
  const int ended = interrupt_import(
      {"import", (dir / "big.json").string(), "-o", (dir / "out.msdb").string()}, dir.path(), SIGKILL);
  ASSERT_EQ(ended, SIGKILL);
  const auto left = hidden_files(dir.path(), "out.msdb.part-");
  ASSERT_FALSE(left.empty()) << "kill -9 left no temporary file to clean up";
  // Files of a live process and of another host are left alone; so are a collector's recoverable files.
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string live =
      ".other.msdb.part-" + std::string(host) + "-" + std::to_string(::getppid()) + "-0badc0de";
  const std::string foreign = ".other.msdb.part-elsewhere-1-0badc0de";
  const std::string collector = ".rank0.nccl.1.msdb.tmp-1-0badc0de";
  for (const auto& name : {live, foreign, collector}) write_text(dir / name, "x");
  write_text(dir / "t.json", kTinyTrace);
  const auto r =
      run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "next.msdb"), dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(hidden_files(dir.path(), "out.msdb"), std::vector<std::string>{});
  for (const auto& name : {live, foreign, collector}) EXPECT_TRUE(fs::exists(dir / name)) << name;
}

TEST(Messages, AnEventWithoutANameImportsInsteadOfAConstraintError) {
  TempDir dir("messages-unnamed");
  // Was: ".out.msdb.tmp-...: NOT NULL constraint failed: activities.name" (the temp file and raw SQL).
  write_text(dir / "t.json",
             R"({"traceEvents": [{"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 1, "dur": 2},)"
             R"( {"ph": "X", "cat": "cpu_op", "name": null, "pid": 1, "tid": 1, "ts": 1, "dur": 2,)"
             R"( "args": {"Collective name": "_"}}]})");
  const auto r =
      run_meshscope("import " + quoted(dir / "t.json") + " -o " + quoted(dir / "out.msdb"), dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(query_one(dir / "out.msdb", "SELECT count(*) FROM activity_names WHERE name_text = '(unnamed)'"),
            "1");
  EXPECT_EQ(query_one(dir / "out.msdb", "SELECT s.value FROM collectives c JOIN strings s ON s.id = c.op"),
            "(unknown)");
}

}  // namespace
}  // namespace meshscope
