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
#include "job/profile_work.hpp"
#include "tests/compare/compare_test_util.hpp"
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
      meshscope::test::run_cli_ok("whatif '" + trace.string() + "' --hardware a100-80gb --json", dir);
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
  const meshscope::test::CliResult unknown = meshscope::test::run_cli(
      "whatif '" + (fs::path(MESHSCOPE_SHARED_DIR) / "traces/hta/cpu_only").string() +
          "' --hardware h100-sxm",
      dir);
  EXPECT_EQ(unknown.status, 1);
  EXPECT_THAT(unknown.err, HasSubstr("the GPU it ran on is not known"));
  const meshscope::test::CliResult bad =
      meshscope::test::run_cli("whatif '" + trace.string() + "' --hardware a100-sxm", dir);
  EXPECT_EQ(bad.status, 1);
  EXPECT_THAT(bad.err, HasSubstr("unknown hardware preset 'a100-sxm'"));
  fs::remove_all(dir);
}

// How a kernel of an FP32-typed operator multiplied, from its name: autocast's products in 16 bits (Ampere's
// and Hopper's BF16 and FP16 cuBLAS kernels, Volta's HMMA ones), TF32 (cuBLAS's and cuDNN's tf32 kernels,
// Ampere's s1688gemm), the FP32 units (PyTorch's default for matmul: sgemm; cuDNN's scudnn; CUTLASS's simt).
TEST(HardwareEdit, AnFp32OperatorsKernelSaysHowItMultiplied) {
  struct Case {
    const char* kernel;
    Fp32Math math;
  };
  for (const Case& c :
       {Case{"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn", Fp32Math::kSixteenBit},
        Case{"ampere_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", Fp32Math::kSixteenBit},
        Case{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1",
             Fp32Math::kSixteenBit},
        Case{"volta_h884gemm_64x64_ldg8_nn", Fp32Math::kSixteenBit},
        Case{"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_stage3_warpsize2x2x1_tensor16x8x8",
             Fp32Math::kTf32},
        Case{"ampere_s1688gemm_128x128_ldg8_stages_32x3_tn", Fp32Math::kTf32},
        Case{"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc", Fp32Math::kTf32},
        Case{"ampere_sgemm_128x64_tn", Fp32Math::kFp32Units},
        Case{"volta_sgemm_128x64_nn", Fp32Math::kFp32Units},
        Case{"volta_scudnn_128x64_relu_interior_nn_v1", Fp32Math::kFp32Units},
        Case{"cutlass_simt_sgemm_128x128_8x2_nn_align1", Fp32Math::kFp32Units},
        Case{"Cijk_Ailk_Bljk_SB_MT64x64x16", Fp32Math::kUnknown},
        Case{"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
             Fp32Math::kUnknown}})
    EXPECT_EQ(fp32_math(c.kernel), c.math) << c.kernel;
}

// Kineto's ResNet-50 trained in FP32 on a V100 (no TF32), re-timed for an A100 80GB PCIe. The convolutions
// (every kernel of a convolution operator, cuDNN's scudnn and sgemm kernels alike) take PyTorch's default
// there, TF32 tensor cores: 15.7 FP32 against 156 TF32 TFLOP/s, × 0.101 where compute-bound, the HBM ratio
// 0.900 / 1.935 = 0.465 where memory-bound. The matrix products (the classifier's addmm) take the FP32 units:
// 15.7 against 19.5, × 0.805 where compute-bound (NVIDIA V100 SXM2 and A100 datasheets).
TEST(HardwareEdit, AVoltaFp32RunTakesPyTorchsTf32DefaultsOnAnAmpere) {
  const Profile p = Profile::load(compare::test::shared_trace("resnet50", "kineto/resnet50_num_workers_0"));
  const measure::Analysis analysis = measure::analyze(p);
  const measure::ProfileWork work = load_work(p);
  const HardwareRetiming retimed = retime_hardware(p, analysis, work, model::load_hardware("v100"),
                                                   model::load_hardware("a100-80gb-pcie"));
  double conv_s = 0, conv_after = 0, product_s = 0, product_after = 0;
  for (const measure::KernelShare& k : work.kernels) {
    const measure::CountedOp& op = work.ops[k.op];
    const double t = static_cast<double>(p.ranks()[k.rank_index].activities[k.activity].duration()) / 1e9;
    const double f = retimed.factor[k.rank_index][k.activity];
    if (op.category == measure::WorkCategory::kConv) {
      conv_s += t;
      conv_after += t * f;
      EXPECT_GE(f, 15.7 / 156.0 - 1e-9);
      EXPECT_LE(f, 0.9 / 1.935 + 1e-9);
    } else if (op.category == measure::WorkCategory::kGemm) {
      product_s += t;
      product_after += t * f;
      EXPECT_GE(f, 0.9 / 1.935 - 1e-9);
      EXPECT_LE(f, 15.7 / 19.5 + 1e-9);
    }
  }
  ASSERT_GT(conv_s, 0.1);  // 0.4 s of the six steps' kernels belong to convolutions
  ASSERT_GT(product_s, 0);
  EXPECT_LT(conv_after / conv_s, 0.2);
  EXPECT_GT(product_after / product_s, 0.46);
}

// Communication takes the ratio of the links it crosses: a collective whose group spans two hosts the
// networks' (A100 HDR InfiniBand 25 GB/s per GPU → H100 NDR 50), one within a host the scale-up links'
// (NVLink 300 → 450 GB/s per direction; hardware_specs.csv).
TEST(HardwareEdit, ACollectiveAcrossNodesTakesTheNetworksRatio) {
  meshscope::test::ProfileBuilder b("hardware-links");
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
