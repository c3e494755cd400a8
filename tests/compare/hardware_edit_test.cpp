// `whatif --hardware` (analysis/compare/hardware_edit.hpp) on a real trace: TraceLens's Qwen1.5-0.5B
// inference recorded on an H100 SXM, re-timed for an A100 80GB. Its GEMMs are compute-bound: each takes the
// ratio of the two BF16 dense peaks, 989.4 / 312 TFLOP/s (NVIDIA H100 datasheet; A100 datasheet); the
// element-wise kernels are memory-bound: the ratio of the HBM bandwidths, 3.35 / 2.039 TB/s (the same
// datasheets, assets/hardware/*.toml).
#include "analysis/compare/hardware_edit.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include "analysis/measure/work.hpp"
#include "analysis/model/presets.hpp"
#include "tests/measure/cli_test_util.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(HardwareEdit, AnH100RunOnAnA100TakesTheRatioOfItsCeilings) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("hardware-edit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace =
      fs::path(MESHSCOPE_SHARED_DIR) / "traces/tracelens/h100_qwen1.5_0.5b_inference.json.gz";
  const std::string json =
      test::run_cli_ok("whatif '" + trace.string() + "' --hardware a100-80gb --json", dir);
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(json);
  const simdjson::dom::element whatif = doc["whatif"];
  std::string notes;
  for (const auto note : whatif["notes"].get_array()) notes += std::string(std::string_view(note)) + "\n";
  EXPECT_THAT(notes, HasSubstr("h100-sxm → a100-80gb"));
  EXPECT_THAT(notes, HasSubstr(fmt::format("gemm kernels × {:.3f}", 989.4 / 312.0)));
  EXPECT_THAT(notes, HasSubstr(fmt::format("elementwise kernels × {:.3f}", 3.35 / 2.039)));
  EXPECT_THAT(notes, HasSubstr(fmt::format("device copies and memsets × {:.3f}", 3.35 / 2.039)));
  // Slower everywhere: the step takes longer than measured, by less than the GEMMs' ratio.
  const std::int64_t measured = doc["replay"]["steps"].at(0)["measured_ns"];
  const std::int64_t predicted = whatif["steps"].at(0)["predicted_ns"];
  EXPECT_GT(predicted, measured * 3 / 2);
  EXPECT_LT(predicted, measured * 989.4 / 312.0);
  // A profile whose GPU is not known cannot be scaled from: one line saying how to state it.
  const test::CliResult unknown =
      test::run_cli("whatif '" + (fs::path(MESHSCOPE_SHARED_DIR) / "traces/hta/cpu_only").string() +
                        "' --hardware h100-sxm",
                    dir);
  EXPECT_EQ(unknown.status, 1);
  EXPECT_THAT(unknown.err, HasSubstr("the GPU it ran on is not known"));
  const test::CliResult bad = test::run_cli("whatif '" + trace.string() + "' --hardware a100-sxm", dir);
  EXPECT_EQ(bad.status, 1);
  EXPECT_THAT(bad.err, HasSubstr("unknown hardware preset 'a100-sxm'"));
  fs::remove_all(dir);
}

// An FP32 operator's kernel keeps its math mode on the target: cuBLAS's and cuDNN's TF32 kernels say so in
// their names (the TF32 MMA shapes 1688 and 16816, "tf32" in xmma's), PyTorch's default FP32 matmuls run
// sgemm on the FP32 units.
TEST(HardwareEdit, AnFp32KernelKeepsItsMathMode) {
  for (const char* tf32 :
       {"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_stage3_warpsize2x2x1_tensor16x8x8",
        "ampere_s1688gemm_128x128_ldg8_stages_32x3_tn",
        "cutlass_80_tensorop_s16816gemm_128x128_32x3_nn_align4",
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc"})
    EXPECT_TRUE(tf32_kernel(tf32)) << tf32;
  for (const char* fp32 :
       {"ampere_sgemm_128x64_tn", "volta_sgemm_128x64_nn", "Cijk_Ailk_Bljk_SB_MT64x64x16",
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>"})
    EXPECT_FALSE(tf32_kernel(fp32)) << fp32;
}

// Kineto's ResNet-50 trained in FP32 on a V100 (no TF32), re-timed for an A100 80GB PCIe: its convolutions
// take PyTorch's default there, TF32 tensor cores (15.7 FP32 against 156 TF32 TFLOP/s: × 0.101 where
// compute-bound), its matrix products the FP32 units (15.7 against 19.5: × 0.805; NVIDIA V100 SXM2 and A100
// datasheets).
TEST(HardwareEdit, AVoltaFp32RunTakesPyTorchsTf32DefaultsOnAnAmpere) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("hardware-edit-tf32-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = fs::path(MESHSCOPE_SHARED_DIR) / "traces/kineto/resnet50_num_workers_0";
  const std::string json =
      test::run_cli_ok("whatif '" + trace.string() + "' --hardware a100-80gb-pcie --json", dir);
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parser.parse(json);
  double gemm = 0, conv = 0;
  for (const auto note : doc["whatif"]["notes"].get_array()) {
    const std::string_view text = note;
    for (auto [kind, factor] : {std::pair{std::string_view("gemm kernels × "), &gemm},
                                std::pair{std::string_view("conv kernels × "), &conv}})
      if (text.starts_with(kind)) *factor = std::stod(std::string(text.substr(kind.size())));
  }
  EXPECT_NEAR(gemm, 15.7 / 19.5, 0.005);
  EXPECT_GT(conv, 15.7 / 156.0 - 0.001);  // memory-bound convolutions take the HBM ratio, 0.900 / 1.935
  EXPECT_LT(conv, 0.9 / 1.935);
  fs::remove_all(dir);
}

// Communication takes the ratio of the links it crosses: a collective whose group spans two hosts the
// networks' (A100 HDR InfiniBand 25 GB/s per GPU → H100 NDR 50), one within a host the scale-up links'
// (NVLink 300 → 450 GB/s per direction; hardware_specs.csv).
TEST(HardwareEdit, ACollectiveAcrossNodesTakesTheNetworksRatio) {
  test::ProfileBuilder b("hardware-links");
  for (std::int32_t r = 0; r < 4; ++r) b.rank(r, 4, r < 2 ? "node-a" : "node-b");
  std::int64_t within = 0, across = 0;
  for (std::int32_t r = 0; r < 4; ++r) {
    const std::int64_t k1 =
        b.launch(r, 1, 0, 1'000, 7, 1'000, 101'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    const std::int64_t k2 =
        b.launch(r, 1, 200'000, 201'000, 7, 201'000, 301'000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    const std::string local = r < 2 ? "[0, 1]" : "[2, 3]";
    const std::string spread = r % 2 == 0 ? "[0, 2]" : "[1, 3]";
    b.collective(r, k1, 1'000, 101'000, "allreduce", local, 1, 2, 1 << 20, local);
    b.collective(r, k2, 201'000, 301'000, "allreduce", spread, 1, 2, 1 << 20, spread);
    if (r == 0) {
      within = k1;
      across = k2;
    }
  }
  const Profile p = b.finish();
  const measure::Analysis analysis = measure::analyze(p);
  const HardwareRetiming retimed =
      retime_hardware(p, analysis, measure::ProfileWork{}, model::load_hardware("a100-80gb"),
                      model::load_hardware("h100-sxm"));
  const Rank& rank0 = p.ranks().at(0);
  int checked = 0;
  for (std::uint32_t i = 0; i < rank0.activities.size(); ++i) {
    if (rank0.activities[i].id == within) {
      EXPECT_DOUBLE_EQ(retimed.factor[0][i], 300.0 / 450.0);
      ++checked;
    } else if (rank0.activities[i].id == across) {
      EXPECT_DOUBLE_EQ(retimed.factor[0][i], 25.0 / 50.0);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);
  std::string notes;
  for (const std::string& n : retimed.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("4 collectives across nodes × 0.500 (network 25.0 → 50.0 GB/s per GPU)"));
}

}  // namespace
}  // namespace meshscope::compare
