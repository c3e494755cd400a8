// Every command takes what `view` takes: a profile, trace files, a folder of traces, an Nsight Systems export
// (job/profile_input.hpp). Traces are imported into the user's cache (a terminal is told where), and standard
// output is what the command prints for a profile of those traces.
#include "job/profile_input.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/app/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

using meshscope::test::CommandRun;
using meshscope::test::meshscope;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "cache");
  return dir;
}

std::size_t cached_profiles(const fs::path& cache) {
  std::size_t n = 0;
  std::error_code error;
  for (const auto& e : fs::directory_iterator(cache / "meshscope" / "view", error))
    n += e.path().extension() == ".msdb";
  return n;
}

const fs::path kResnet = fs::path(MESHSCOPE_SHARED_DIR) / "traces/kineto/resnet50_num_workers_0";
const fs::path kResnet4 = fs::path(MESHSCOPE_SHARED_DIR) / "traces/kineto/resnet50_num_workers_4";
const fs::path kNsys = fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys/saxpy_mpi_cuda_a100.sqlite";

TEST(ProfileInput, WhatIsReadAsItIsAndWhatIsImported) {
  using meshscope::is_profile_input;
  EXPECT_TRUE(is_profile_input({fs::path(MESHSCOPE_SOURCE_DIR) / "assets/sample/h100_train_step.msdb"}));
  EXPECT_TRUE(is_profile_input({"/no/such/file"}));  // the loader's error names it
  EXPECT_TRUE(is_profile_input({"/no/such/file.msdb"}));
  EXPECT_FALSE(is_profile_input({kResnet}));  // a folder of traces
  EXPECT_FALSE(is_profile_input({kNsys}));    // SQLite, but an Nsight Systems export
  EXPECT_FALSE(
      is_profile_input({fs::path(MESHSCOPE_SOURCE_DIR) / "assets/sample/sample_job/rank-0.json.gz"}));
  EXPECT_FALSE(is_profile_input({kResnet, kResnet4}));  // several files of one job
  // A folder named with or without its trailing separator is one set of sources: one cache file.
  EXPECT_EQ(meshscope::import_cache_path({kResnet}), meshscope::import_cache_path({kResnet.string() + "/"}));
  EXPECT_EQ(meshscope::import_cache_path({kResnet}).filename().string().rfind("resnet50_num_workers_0-", 0),
            0u);
  EXPECT_NE(meshscope::import_cache_path({kResnet}), meshscope::import_cache_path({kResnet4}));
  EXPECT_EQ(meshscope::sources_title({kResnet.string() + "/"}), "resnet50_num_workers_0");
  EXPECT_EQ(meshscope::sources_title({kResnet, kResnet4}), "resnet50_num_workers_0 and 1 more");
}

TEST(ProfileInput, EveryCommandTakesTracesAsViewDoes) {
  const fs::path dir = scratch("profile-input");
  const fs::path cache = dir / "cache";
  // Was: "…/resnet50_num_workers_0: is a directory, not a file".
  const CommandRun info = meshscope("info '" + kResnet.string() + "/'", cache);
  ASSERT_EQ(info.status, 0) << info.err;
  // In the cache the command was given (this process's own cache is elsewhere).
  const fs::path imported = cache / "meshscope" / "view" / meshscope::import_cache_path({kResnet}).filename();
  EXPECT_EQ(info.err, "");  // where it was imported is said on a terminal only
  EXPECT_TRUE(fs::is_regular_file(imported));
  EXPECT_NE(info.out.find("profile     " + imported.string() + "\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("steps       6 (#5 .. #10)\n"), std::string::npos) << info.out;
  // Imported as `import` imports: with the summaries that info reads.
  EXPECT_EQ(meshscope("info '" + imported.string() + "'", cache).out, info.out);

  // An Nsight Systems export: the report is named after it, and its JSON stays one document on stdout.
  const CommandRun report = meshscope("report '" + kNsys.string() + "'", cache);
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_EQ(report.out.rfind("meshscope report: saxpy_mpi_cuda_a100.sqlite\n", 0), 0u) << report.out;
  const CommandRun json = meshscope("report --json '" + kNsys.string() + "'", cache);
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(json.out.front(), '{');
  EXPECT_EQ(json.out.substr(json.out.size() - 2), "}\n");

  // Two folders of traces, each side named as given.
  const CommandRun diff = meshscope("diff '" + kResnet.string() + "' '" + kResnet4.string() + "'", cache);
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("A: resnet50_num_workers_0 (1 rank"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("B: resnet50_num_workers_4 (1 rank"), std::string::npos) << diff.out;

  const CommandRun exported =
      meshscope("export '" + kNsys.string() + "' -o '" + (dir / "saxpy.json").string() + "'", cache);
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "saxpy.json"));
  // A compressed trace: named as given; its cache file without ".json".
  const fs::path qwen =
      fs::path(MESHSCOPE_SHARED_DIR) / "traces/tracelens/h100_qwen1.5_0.5b_inference.json.gz";
  const CommandRun compare = meshscope("compare '" + qwen.string() + "'", cache);
  ASSERT_EQ(compare.status, 0) << compare.err;
  EXPECT_EQ(compare.out.rfind("meshscope compare: h100_qwen1.5_0.5b_inference.json.gz (1 of 1 ranks)", 0), 0u)
      << compare.out;
  EXPECT_EQ(meshscope::import_cache_path({qwen}).filename().string().rfind("h100_qwen1.5_0.5b_inference-", 0),
            0u);
  // The folder given twice (with and without "/"), the export, the second folder and the trace: four imports.
  EXPECT_EQ(cached_profiles(cache), 4u);
}

TEST(ProfileInput, ATraceThatDoesNotImportSaysWhyAndLeavesNothing) {
  const fs::path dir = scratch("profile-input-bad");
  const fs::path cache = dir / "cache";
  const fs::path bad = dir / "rank0.json";
  std::ofstream(bad) << R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": )";
  for (const std::string command : {"info", "report", "compare"}) {
    const CommandRun r = meshscope(command + " '" + bad.string() + "'", cache);
    EXPECT_EQ(r.status, 1) << command;
    EXPECT_EQ(r.out, "") << command;
    EXPECT_EQ(r.err.rfind("meshscope: " + bad.string() + ": ", 0), 0u) << command << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command << ": " << r.err;
  }
  EXPECT_EQ(cached_profiles(cache), 0u);
}

}  // namespace
