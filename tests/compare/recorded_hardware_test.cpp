// A GPU no preset names, described from what the profile records of it
// (analysis/compare/recorded_hardware.hpp): on the real traces of shared/traces (HTA's traces ran on "NVIDIA
// A100-PG509-200", a board name), against published figures, and out of sample: each preset described from
// the others alone.

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/compare/measured.hpp"
#include "analysis/compare/recorded_hardware.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/presets.hpp"
#include "job/profile_work.hpp"
#include "profiler/profile.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace meshscope::compare {
namespace {

using test::shared_trace;

const std::int64_t kGib = 1ll << 30;

std::vector<model::HardwareSpec> bundled_presets() {
  std::vector<model::HardwareSpec> all;
  for (const std::string& name : model::hardware_presets()) all.push_back(model::load_hardware(name));
  return all;
}

// HTA's traces ran on "NVIDIA A100-PG509-200" (compute capability 8.0, 108 SMs, 39.6 GiB): an A100 of the
// 40 GB SXM4 kind by everything it records, though its name says no product. It is predicted on as one.
TEST(RecordedHardware, AnA100BoardNameIsDescribedAsTheA100ItRecords) {
  const Profile p = Profile::load(
      shared_trace("cupti_profiler", "hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz"));
  const ProfileGpu gpu = profile_gpu(p);
  EXPECT_EQ(gpu.name, "NVIDIA A100-PG509-200");
  EXPECT_EQ(gpu.preset, "");
  ASSERT_TRUE(gpu.recorded.has_value());
  const RecordedHardware& r = *gpu.recorded;
  EXPECT_EQ(r.base, "a100-40gb");
  EXPECT_TRUE(r.same_size);
  EXPECT_EQ(r.spec.name, "a100-pg509-200");
  EXPECT_EQ(r.spec.compute_capability, "8.0");
  EXPECT_EQ(r.spec.sm_count, 108);
  EXPECT_DOUBLE_EQ(r.spec.hbm_capacity_gib, 39.6);  // totalGlobalMem 42505273344 B
  // NVIDIA A100 datasheet: 312 BF16 Tensor TFLOPS dense, 1,555 GB/s for the 40 GB SXM part.
  EXPECT_DOUBLE_EQ(r.spec.peak_tflops_bf16, 312.0);
  EXPECT_DOUBLE_EQ(r.spec.hbm_tbps, 1.555);
  EXPECT_EQ(r.spec.intra_node_link, "NVLink");

  const Workload w = infer_workload(p, load_work(p));
  EXPECT_EQ(w.hardware, std::optional<std::string>("a100-pg509-200"));
  ASSERT_TRUE(w.recorded_hardware.has_value());
  EXPECT_EQ(w.confidence.at("hardware"), Confidence::kMedium);
  const std::optional<model::HardwareSpec> spec = hardware_spec(w);
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->name, "a100-pg509-200");
  bool said = false;
  for (const std::string& e : w.evidence) said |= e.find("described from its records") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(RecordedHardware, APcieCardGetsThePcieLinkOfItsArchitecture) {
  // NVIDIA A100 PCIe datasheet: 312 BF16 Tensor TFLOPS dense (as the SXM part) and PCIe Gen4 64 GB/s.
  const auto r = hardware_from_traits("NVIDIA A100-PCIE-40GB", {40 * kGib, 108, 8, 0});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spec.name, "a100-pcie-40gb");
  EXPECT_DOUBLE_EQ(r->spec.peak_tflops_bf16, 312.0);
  EXPECT_EQ(r->spec.intra_node_link, "PCIe");
  EXPECT_DOUBLE_EQ(r->spec.intra_node_gbps, 32.0);
  EXPECT_NE(r->how.find("PCIe card"), std::string::npos) << r->how;
  model::check_hardware(r->spec);  // a valid spec: every number the model needs is there
}

TEST(RecordedHardware, NothingIsGuessedWithoutTheArchitectureOrTheSize) {
  // An RTX A6000 (compute capability 8.6): no preset of that architecture states its SMs.
  EXPECT_FALSE(hardware_from_traits("NVIDIA RTX A6000", {48 * kGib, 84, 8, 6}).has_value());
  // A vendor the name does not say: its major.minor could be anyone's.
  EXPECT_FALSE(hardware_from_traits("GPU 0", {40 * kGib, 108, 8, 0}).has_value());
  EXPECT_FALSE(hardware_from_traits("NVIDIA A100-PG509-200", {40 * kGib, -1, 8, 0}).has_value());
  EXPECT_FALSE(hardware_from_traits("NVIDIA A100-PG509-200", {-1, 108, 8, 0}).has_value());
  EXPECT_FALSE(hardware_from_traits("NVIDIA A100-PG509-200", {40 * kGib, 108, -1, -1}).has_value());
}

// The presets' compute capability and SMs are what real profiles record of those GPUs.
TEST(RecordedHardware, PresetsStateWhatRealTracesRecordOfTheirGpus) {
  struct Case {
    const char* trace;
    const char* preset;
  };
  for (const Case& c :
       {Case{"tracelens/h100_qwen1.5_0.5b_inference.json.gz", "h100-sxm"},
        Case{"tracelens/mi300_resnet_act_checkpoint.json.gz", "mi300x"},
        Case{"tracelens/mi210_gpu_only.json.gz", "mi210"}, Case{"kineto/resnet50_num_workers_0", "v100"}}) {
    const Profile p = Profile::load(shared_trace(c.preset, c.trace));
    const model::HardwareSpec h = model::load_hardware(c.preset);
    bool seen = false;
    for (const Rank& r : p.ranks()) {
      for (const Device& d : r.devices) {
        if (d.sm_count == kNull) continue;
        seen = true;
        EXPECT_EQ(fmt::format("{}.{}", d.compute_major, d.compute_minor), h.compute_capability) << c.trace;
        EXPECT_EQ(d.sm_count, h.sm_count) << c.trace;
      }
    }
    EXPECT_TRUE(seen) << c.trace;
  }
}

// Out of sample: each preset that states its compute capability and SMs, described from its traits by the
// other presets alone, against its own published figures. The same die (A100s, MI300X and MI325X, MI210 and
// MI250) comes out exact; a part of the same architecture with fewer SMs and lower clocks (H100 PCIe from the
// SXM5's rate per SM) is overstated, by the clock ratio. docs/COMPARE.md records the table.
TEST(RecordedHardware, EachPresetDescribedFromTheOthersOnly) {
  const std::vector<model::HardwareSpec> all = bundled_presets();
  int described = 0;
  double worst_peak = 0;
  std::string table;
  for (const model::HardwareSpec& held_out : all) {
    if (held_out.compute_capability.empty() || held_out.sm_count <= 0) continue;
    std::vector<model::HardwareSpec> others;
    for (const model::HardwareSpec& h : all)
      if (h.name != held_out.name) others.push_back(h);
    const auto dot = held_out.compute_capability.find('.');
    const GpuTraits traits{static_cast<std::int64_t>(held_out.hbm_capacity_gib * kGib), held_out.sm_count,
                           std::stoll(held_out.compute_capability.substr(0, dot)),
                           std::stoll(held_out.compute_capability.substr(dot + 1))};
    const bool amd = held_out.family.rfind("cdna", 0) == 0;
    const auto r = hardware_from_traits((amd ? "AMD Instinct " : "NVIDIA ") + held_out.name, traits, others);
    if (!r) {
      table += fmt::format("{:<10} no other preset of compute capability {}\n", held_out.name,
                           held_out.compute_capability);
      continue;
    }
    ++described;
    const double peak_error = r->spec.peak_tflops_bf16 / held_out.peak_tflops_bf16 - 1;
    const double hbm_error = r->spec.hbm_tbps / held_out.hbm_tbps - 1;
    worst_peak = std::max(worst_peak, std::abs(peak_error));
    table += fmt::format("{:<10} from {:<10} BF16 {:+6.1f} %  HBM {:+6.1f} %\n", held_out.name, r->base,
                         100 * peak_error, 100 * hbm_error);
    EXPECT_NEAR(r->spec.hbm_capacity_gib, held_out.hbm_capacity_gib, 0.05) << held_out.name;
  }
  std::cout << table;
  EXPECT_GE(described, 14);
  // H100 PCIe from H100 SXM5's rate per SM: 989.4 x 114/132 = 854.5 against 756.5 TFLOPS (+13 %); H100 NVL
  // from H100 SXM5's (same SMs, lower clocks): +18.4 %; the L4 from the L40S's rate per SM (boost clocks
  // 2,520 against 2,040 MHz): 362.05 x 58/142 = 147.9 against 121 TFLOPS, +22.2 %.
  EXPECT_LT(worst_peak, 0.23) << table;
}

// `compare` predicts on the described GPU where it refused before, and says so.
TEST(RecordedHardware, CompareOnABoardNamePredictsAndSaysOnWhat) {
  const std::string trace =
      shared_trace("cupti_profiler", "hta/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz")
          .string();
  const test::Result r = test::run("compare --model llama3-8b \"" + trace + "\"", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("vs llama3-8b on 1 x a100-pg509-200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("described from its records"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("predicting for h100-sxm, the default"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace meshscope::compare
