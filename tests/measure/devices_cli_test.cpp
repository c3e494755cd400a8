// Devices per rank are the devices each rank ran work on, on real traces: `info` and `report` list the MI300X
// rank's device 2 only (its trace describes all eight GPUs of the node), and name the GPUs of the two
// trace_filter ranks, whose traces describe no device at all, instead of saying "no GPU activity".
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "profiler/sqlite_util.hpp"
#include "tests/measure/cli_test_util.hpp"

namespace {

namespace fs = std::filesystem;

std::string meshscope(const std::string& arguments, const fs::path& dir) {
  return meshscope::test::run_cli_ok(arguments, dir);
}

fs::path import(const std::string& name, const std::string& traces) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path profile = dir / "p.msdb";
  meshscope("import " + traces + " -o '" + profile.string() + "'", dir);
  return profile;
}

const std::string kTraces = std::string(MESHSCOPE_SHARED_DIR) + "/traces/";

TEST(DevicesCli, TheDeviceTheRankRanOn) {
  const fs::path profile = import("devices-mi300", kTraces + "tracelens/mi300_resnet_act_checkpoint.json.gz");
  const meshscope::Profile p = meshscope::Profile::load(profile);
  ASSERT_EQ(p.ranks().size(), 1u);
  EXPECT_EQ(p.ranks()[0].devices.size(), 8u) << "the trace describes every GPU of the node";
  const auto used = meshscope::measure::devices_used(p.ranks()[0]);
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].device, 2);
  ASSERT_NE(used[0].info, nullptr);
  EXPECT_EQ(used[0].info->name, "AMD Instinct MI300X");

  const fs::path dir = profile.parent_path();
  const std::string info = meshscope("info --json '" + profile.string() + "'", dir);
  const auto devices = info.find("\"devices\": [");
  ASSERT_NE(devices, std::string::npos) << info;
  const std::string list = info.substr(devices, info.find(']', devices) - devices);
  EXPECT_NE(list.find("\"device\": 2"), std::string::npos) << list;
  EXPECT_EQ(list.find("\"device\": 0"), std::string::npos) << list;
  EXPECT_NE(info.find("\"devices_visible\": 8"), std::string::npos) << info;
  EXPECT_NE(meshscope("info '" + profile.string() + "'", dir).find("GPU 2 AMD Instinct MI300X"),
            std::string::npos);
}

// ROCm with HIP_VISIBLE_DEVICES=2 records the work on device 2 and the properties of the one visible GPU as
// device 0. The MI300X trace, its description cut to device 0 as such a trace has it: the work's device is
// the one GPU model described (was: "model not in the trace", and the hardware unknown).
TEST(DevicesCli, AGpuDescribedUnderAnotherIdIsTheOneModelDescribed) {
  const fs::path profile =
      import("devices-renumbered", kTraces + "tracelens/mi300_resnet_act_checkpoint.json.gz");
  {
    meshscope::sql::Database db(profile, false);
    db.exec("DELETE FROM devices WHERE device <> 0");
  }
  const meshscope::Profile p = meshscope::Profile::load(profile);
  const auto used = meshscope::measure::devices_used(p.ranks()[0]);
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].device, 2);
  ASSERT_NE(used[0].info, nullptr);
  EXPECT_EQ(used[0].info->name, "AMD Instinct MI300X");
  EXPECT_EQ(used[0].described_as, 0);
  const fs::path dir = profile.parent_path();
  const std::string info = meshscope("info '" + profile.string() + "'", dir);
  EXPECT_NE(info.find("GPU 2 AMD Instinct MI300X (described as device 0)"), std::string::npos) << info;
  EXPECT_NE(info.find("hardware mi300x"), std::string::npos) << info;
  const std::string json = meshscope("info --json '" + profile.string() + "'", dir);
  EXPECT_NE(json.find("hardware mi300x from the GPU name 'AMD Instinct MI300X' (the work ran on device 2, "
                      "described as device 0: the only GPU model the trace describes)"),
            std::string::npos)
      << json;
}

TEST(DevicesCli, RanksWhoseTraceDescribesNoDeviceStillRanOnOne) {
  const fs::path profile = import("devices-filter", "'" + kTraces + "hta/trace_filter'");
  const fs::path dir = profile.parent_path();
  const std::string info = meshscope("info '" + profile.string() + "'", dir);
  EXPECT_EQ(info.find("no GPU activity"), std::string::npos) << info;
  EXPECT_NE(info.find("GPU 0 (model not in the trace)"), std::string::npos) << info;
  EXPECT_NE(info.find("GPU 1 (model not in the trace)"), std::string::npos) << info;
  const std::string report = meshscope("report '" + profile.string() + "'", dir);
  EXPECT_NE(report.find("2 GPUs used: model not in the trace x2"), std::string::npos) << report;
  EXPECT_NE(report.find("2 steps on 2 ranks"), std::string::npos) << report;
}

}  // namespace
