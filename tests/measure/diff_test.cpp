// meshscope diff: kernel-name normalisation, per-step means over runs of different length, the headline, and
// unrelated runs; on small profiles written with ProfileWriter.
#include "analysis/measure/diff.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/measure/summary.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::measure {
namespace {

using test::ProfileBuilder;
using ::testing::HasSubstr;

TEST(Diff, NormalisedNamesDropWhatChangesBetweenBuilds) {
  // Tile sizes spelt into cuBLAS names.
  EXPECT_EQ(
      normalise_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_"
                            "execute_segment_k_off_kernel__5x_cublas"),
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesizeN_warpgroupsizeN_execute_segment_k_off_kernel__5x_"
      "cublas");
  EXPECT_EQ(
      normalise_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
                            "execute_segment_k_off_kernel__5x_cublas"),
      normalise_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_"
                            "execute_segment_k_off_kernel__5x_cublas"));
  // CUTLASS: the tile shapes inside the template argument.
  EXPECT_EQ(normalise_kernel_name(
                "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x256_32x3_"
                "tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x256_32x3_tn_align8::"
                "Params)"),
            "cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_N_N_tn_align8>");
  // Parameter lists, dtypes and numeric template arguments go; the functor stays.
  EXPECT_EQ(normalise_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                                  "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, "
                                  "at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"),
            "at::native::vectorized_elementwise_kernel<at::native::CUDAFunctor_add,std::array>");
  EXPECT_EQ(normalise_kernel_name("void at::native::vectorized_elementwise_kernel<2, "
                                  "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
                                  "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"),
            "at::native::vectorized_elementwise_kernel<at::native::CUDAFunctor_add,std::array>");
  EXPECT_NE(normalise_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                                  "at::native::CUDAFunctor_mul<float>, std::array<char*, 3ul> >(int)"),
            normalise_kernel_name("void at::native::vectorized_elementwise_kernel<4, "
                                  "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int)"))
      << "different functors are different kernels";
  // Anonymous namespaces, lambdas, scalar-only templates.
  EXPECT_EQ(normalise_kernel_name(
                "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
                "float>(int, float, c10::BFloat16 const*)"),
            "at::native::vectorized_layer_norm_kernel");
  EXPECT_EQ(
      normalise_kernel_name(
          "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, "
          "128, 64, 4, false, false, cutlass::bfloat16_t>, false, true>(Flash_fwd_params)"),
      normalise_kernel_name("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, "
                            "128, 32, 4, false, false, cutlass::half_t>, true, true>(Flash_fwd_params)"));
  // NCCL keeps its algorithm and protocol; memcpy keeps its direction.
  EXPECT_EQ(normalise_kernel_name(
                "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  EXPECT_EQ(normalise_kernel_name("Memcpy HtoD (Pinned -> Device)"), "Memcpy HtoD");
  EXPECT_EQ(normalise_kernel_name("triton_poi_fused_add_mul_12"), "triton_poi_fused_add_mul");
  EXPECT_EQ(normalise_kernel_name("gemm_kernel"), "gemm_kernel");
}

// One rank, STEPS steps of PERIOD ns; each step launches a GEMM (GEMM_NS long, named GEMM) and an add.
void one_run(ProfileBuilder& b, int steps, TimeNs period, const std::string& gemm, TimeNs gemm_ns,
             const std::string& op = "aten::mm") {
  b.rank(0);
  for (int s = 0; s < steps; ++s) {
    const TimeNs t0 = 1'000'000 + s * period;
    b.step(0, 1, t0, t0 + period, s);
    b.range(0, 1, RangeKind::kCpuOp, t0 + 1'000, t0 + 9'000, op);
    b.launch(0, 1, t0 + 2'000, t0 + 3'000, 7, t0 + 10'000, t0 + 10'000 + gemm_ns, gemm);
    b.range(0, 1, RangeKind::kCpuOp, t0 + 10'000, t0 + 12'000, "aten::add");
    b.launch(0, 1, t0 + 11'000, t0 + 11'500, 7, t0 + 10'000 + gemm_ns, t0 + 20'000 + gemm_ns,
             "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
             "std::array<char*, 3ul> >(int)");
  }
}

TEST(Diff, RenamedKernelIsOneRowAndStepMeansCompareRunsOfDifferentLength) {
  ProfileBuilder a("diff_a"), b("diff_b");
  one_run(a, 3, 1'000'000, "sm90_xmma_gemm_bf16_tilesize128x128x64_kernel", 100'000);
  one_run(b, 5, 1'000'000, "sm90_xmma_gemm_bf16_tilesize128x256x64_kernel", 150'000);
  const Profile pa = a.finish(), pb = b.finish();
  const Analysis aa = analyze(pa), ab = analyze(pb);
  const Diff d = diff_profiles(pa, aa, pb, ab);
  EXPECT_EQ(d.a.rank_steps, 3);
  EXPECT_EQ(d.b.rank_steps, 5);
  // Step = GPU span of the work it launched: 10 µs gap... here gemm + add.
  EXPECT_EQ(d.a.step_ns, 110'000);
  EXPECT_EQ(d.b.step_ns, 160'000);
  EXPECT_EQ(d.step_delta_ns, 50'000);
  ASSERT_FALSE(d.kernels.empty());
  const DiffRow& gemm = d.kernels.front();  // by |whole-profile delta|
  EXPECT_EQ(gemm.name, "sm90_xmma_gemm_bf16_tilesizeN_kernel");
  EXPECT_EQ(gemm.a_count, 3);
  EXPECT_EQ(gemm.b_count, 5);
  EXPECT_EQ(gemm.a_ns, 300'000);
  EXPECT_EQ(gemm.b_ns, 750'000);
  EXPECT_EQ(gemm.delta_ns(), 450'000);
  EXPECT_EQ(gemm.a_step_ns, 100'000);
  EXPECT_EQ(gemm.b_step_ns, 150'000);
  EXPECT_EQ(gemm.a_example, "sm90_xmma_gemm_bf16_tilesize128x128x64_kernel");
  EXPECT_EQ(gemm.b_example, "sm90_xmma_gemm_bf16_tilesize128x256x64_kernel");
  EXPECT_EQ(d.kernels.size(), 2u) << "no vanish + appear pair for the renamed GEMM";
  // Classes per step: compute grew by 50 µs, nothing else.
  for (const ClassDiff& c : d.classes) {
    if (c.name == "compute") {
      EXPECT_EQ(c.a_step_ns, 110'000);
      EXPECT_EQ(c.b_step_ns, 160'000);
    }
    if (c.name == "idle") {
      EXPECT_EQ(c.b_step_ns - c.a_step_ns, 0);
    }
  }
  EXPECT_FALSE(d.unrelated);
  EXPECT_GT(d.similarity, 0.9);
  ASSERT_GE(d.headline.size(), 3u);
  EXPECT_EQ(d.headline[0].kind, "step");
  EXPECT_THAT(d.headline[0].text, HasSubstr("+0.050 ms"));
  EXPECT_EQ(d.headline[1].kind, "class");
  EXPECT_EQ(d.headline[1].name, "compute");
  EXPECT_EQ(d.headline[2].kind, "kernel");
  EXPECT_EQ(d.headline[2].name, "sm90_xmma_gemm_bf16_tilesizeN_kernel");
  EXPECT_EQ(d.headline[2].delta_ns, 50'000);
  EXPECT_THAT(d.headline[2].text, HasSubstr("renamed"));
  // CPU ops: per step identical, whole profile 3 vs 5 calls.
  const auto mm =
      std::find_if(d.cpu_ops.begin(), d.cpu_ops.end(), [](const DiffRow& r) { return r.name == "aten::mm"; });
  ASSERT_NE(mm, d.cpu_ops.end());
  EXPECT_EQ(mm->a_count, 3);
  EXPECT_EQ(mm->b_count, 5);
  EXPECT_EQ(mm->a_step_ns, 8'000);
  EXPECT_EQ(mm->b_step_ns, 8'000);
}

TEST(Diff, UnrelatedRunsStillDiffAndSaySo) {
  ProfileBuilder a("diff_u_a"), b("diff_u_b");
  one_run(a, 2, 1'000'000, "conv2d_kernel", 100'000, "aten::conv2d");
  b.rank(0);
  for (int s = 0; s < 2; ++s) {
    const TimeNs t0 = 5'000'000 + s * 1'000'000;
    b.step(0, 1, t0, t0 + 1'000'000, s);
    b.range(0, 1, RangeKind::kCpuOp, t0 + 1'000, t0 + 9'000, "aten::embedding");
    b.launch(0, 1, t0 + 2'000, t0 + 3'000, 7, t0 + 10'000, t0 + 500'000, "embedding_bag_kernel");
  }
  const Profile pa = a.finish(), pb = b.finish();
  const Diff d = diff_profiles(pa, analyze(pa), pb, analyze(pb));
  EXPECT_TRUE(d.unrelated);
  EXPECT_LT(d.similarity, 0.2);
  EXPECT_LT(d.operator_similarity, 0.2);  // aten::conv2d and aten::add against aten::embedding
  EXPECT_FALSE(d.different_kernels);
  ASSERT_GE(d.headline.size(), 2u);
  EXPECT_EQ(d.headline[1].kind, "unrelated");
  EXPECT_THAT(d.headline[1].text, HasSubstr("look unrelated"));
  EXPECT_EQ(d.kernels.size(), 3u);  // conv, add (only in A), embedding (only in B)
}

// One model on two GPU vendors: the same operators (aten::mm, aten::add) through kernels of different names
// (cuBLAS and CUDA elementwise on one side, hipBLASLt and HIP elementwise on the other). Not "unrelated", and
// the other vendor's kernels are not listed as new or gone.
TEST(Diff, TheSameOperatorsThroughAnotherVendorsKernelsAreTheSameWork) {
  ProfileBuilder a("diff_v_a"), b("diff_v_b");
  one_run(a, 3, 1'000'000, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel", 100'000);
  b.rank(0);
  for (int s = 0; s < 3; ++s) {
    const TimeNs t0 = 1'000'000 + s * 1'000'000;
    b.step(0, 1, t0, t0 + 1'000'000, s);
    b.range(0, 1, RangeKind::kCpuOp, t0 + 1'000, t0 + 9'000, "aten::mm");
    b.launch(0, 1, t0 + 2'000, t0 + 3'000, 7, t0 + 10'000, t0 + 140'000,
             "Cijk_Ailk_Bljk_BBS_BH_MT128x128x64_MI16x16x16_SN_1LDSB0_GRVW8");
    b.range(0, 1, RangeKind::kCpuOp, t0 + 10'000, t0 + 12'000, "aten::add");
    b.launch(0, 1, t0 + 11'000, t0 + 11'500, 7, t0 + 140'000, t0 + 150'000,
             "void at::native::elementwise_kernel_manual_unroll<128, 8>(int)");
  }
  const Profile pa = a.finish(), pb = b.finish();
  const Diff d = diff_profiles(pa, analyze(pa), pb, analyze(pb));
  EXPECT_LT(d.similarity, 0.2);
  EXPECT_DOUBLE_EQ(d.operator_similarity, 1.0);
  EXPECT_FALSE(d.unrelated);
  EXPECT_TRUE(d.different_kernels);
  ASSERT_GE(d.headline.size(), 2u);
  EXPECT_EQ(d.headline[1].kind, "different_kernels");
  EXPECT_THAT(d.headline[1].text, HasSubstr("same operators"));
  for (const HeadlineItem& item : d.headline) {
    EXPECT_THAT(item.text, ::testing::Not(HasSubstr("gone in B")));
    EXPECT_THAT(item.text, ::testing::Not(HasSubstr("new in B")));
  }
  // The GEMM took 130 µs a step on B against 100 on A: explained by the operator that launched it, not by
  // kernels only one vendor has.
  const auto mm =
      std::find_if(d.cpu_ops.begin(), d.cpu_ops.end(), [](const DiffRow& r) { return r.name == "aten::mm"; });
  ASSERT_NE(mm, d.cpu_ops.end());
  EXPECT_EQ(mm->a_gpu_step_ns, 100'000);
  EXPECT_EQ(mm->b_gpu_step_ns, 130'000);
  const auto line =
      std::find_if(d.headline.begin(), d.headline.end(), [](const HeadlineItem& h) { return h.level == 2; });
  ASSERT_NE(line, d.headline.end());
  EXPECT_EQ(line->kind, "cpu_op");
  EXPECT_EQ(line->name, "aten::mm");
  EXPECT_EQ(line->delta_ns, 30'000);
  EXPECT_THAT(line->text, HasSubstr("the GPU time it launched itself +0.030 ms per step"));
}

// GPU time per operator, worked by hand: aten::linear [0, 100 µs) launches a 5 µs kernel itself (call at 60
// µs) and holds aten::mm [10, 50 µs), which launches a 30 µs kernel (call at 20 µs) from inside a twin of
// itself (two identical nested aten::mm ranges, as PyTorch records some dispatches). Inclusive: linear 35,
// each mm 30; self: linear 5, the inner mm 30, the outer mm 0. A kernel launched outside every operator
// counts for none.
TEST(Diff, OperatorsCarryTheGpuTimeTheyLaunched) {
  ProfileBuilder b("diff_op_gpu");
  b.rank(0);
  b.range(0, 1, RangeKind::kCpuOp, 0, 100'000, "aten::linear");
  b.range(0, 1, RangeKind::kCpuOp, 10'000, 50'000, "aten::mm");
  b.range(0, 1, RangeKind::kCpuOp, 10'000, 50'000, "aten::mm");
  b.launch(0, 1, 20'000, 21'000, 7, 30'000, 60'000, "gemm");
  b.launch(0, 1, 60'000, 61'000, 7, 70'000, 75'000, "bias");
  b.launch(0, 1, 200'000, 201'000, 7, 210'000, 290'000, "outside");
  const Profile p = b.finish();
  const ProfileSummary s = summarize(p, analyze(p));
  ASSERT_EQ(s.ranks.size(), 1u);
  auto op = [&](std::string_view name) {
    return *std::find_if(s.ranks[0].ops.begin(), s.ranks[0].ops.end(),
                         [&](const OpSummary& o) { return o.name == name; });
  };
  EXPECT_EQ(op("aten::linear").gpu_ns, 35'000);
  EXPECT_EQ(op("aten::linear").gpu_self_ns, 5'000);
  EXPECT_EQ(op("aten::mm").count, 2);
  EXPECT_EQ(op("aten::mm").gpu_ns, 60'000);  // each of the two holds the kernel
  EXPECT_EQ(op("aten::mm").gpu_self_ns, 30'000);
  EXPECT_EQ(op("aten::mm").gpu_step_ns, 60'000);  // without steps, every operator counts as inside one
}

// Operators by shapes, from summaries: a GEMM with the same shapes on both sides compares as it is; when B's
// batch doubled, each of A's shapes pairs with B's shape of the same inputs and ranks that keeps the most
// sizes (A's largest, [8, 16] x [16, 64], with [16, 16] x [16, 64], although B's largest is [16, 16] x
// [16, 32]); a shape of other ranks does not pair, and runs on one side.
TEST(Diff, OperatorsAreMatchedByNameAndShapes) {
  auto side = [](std::string path, std::vector<OpShapeSummary> shapes) {
    ProfileSummary p;
    p.path = std::move(path);
    RankSummary r;
    r.rank = 0;
    r.counts.kernel = 1;  // the rank launched GPU work: one step without step ranges
    r.op_shapes = std::move(shapes);
    p.ranks.push_back(std::move(r));
    return p;
  };
  const ProfileSummary a = side("a", {{"aten::mm", "[[8, 16], [16, 32]]", 10, 100'000, 100'000},
                                      {"aten::mm", "[[8, 16], [16, 64]]", 10, 200'000, 200'000},
                                      {"aten::add", "[[8, 32], [8, 32], []]", 10, 5'000, 5'000},
                                      {"aten::bmm", "[[4, 8, 16], [4, 16, 8]]", 10, 9'000, 9'000}});
  const ProfileSummary b = side("b", {{"aten::mm", "[[16, 16], [16, 32]]", 10, 410'000, 410'000},
                                      {"aten::mm", "[[16, 16], [16, 64]]", 10, 390'000, 390'000},
                                      {"aten::add", "[[8, 32], [8, 32], []]", 10, 6'000, 6'000},
                                      {"aten::bmm", "[[64, 16], [16, 8]]", 10, 9'000, 9'000}});
  const Diff d = diff_summaries(a, b);
  auto row = [&](std::string_view a_dims, std::string_view b_dims) -> const DiffRow* {
    for (const DiffRow& r : d.op_shapes)
      if (r.a_input_dims == a_dims && r.b_input_dims == b_dims) return &r;
    return nullptr;
  };
  ASSERT_EQ(d.op_shapes.size(), 5u);
  const DiffRow* add = row("[[8, 32], [8, 32], []]", "[[8, 32], [8, 32], []]");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->name, "aten::add [[8, 32], [8, 32], []]");
  EXPECT_EQ(add->b_gpu_ns - add->a_gpu_ns, 1'000);
  const DiffRow* narrow = row("[[8, 16], [16, 32]]", "[[16, 16], [16, 32]]");
  ASSERT_NE(narrow, nullptr);
  EXPECT_EQ(narrow->name, "aten::mm [[8, 16], [16, 32]] -> [[16, 16], [16, 32]]");
  EXPECT_EQ(narrow->a_step_ns, 100'000);
  EXPECT_EQ(narrow->b_step_ns, 410'000);
  ASSERT_NE(row("[[8, 16], [16, 64]]", "[[16, 16], [16, 64]]"), nullptr);
  EXPECT_NE(row("[[4, 8, 16], [4, 16, 8]]", ""), nullptr) << "three-dimensional inputs do not pair with two";
  EXPECT_NE(row("", "[[64, 16], [16, 8]]"), nullptr);
}

TEST(Diff, ProfilesWithoutStepsCountEachRankAsOneStep) {
  ProfileBuilder a("diff_ns_a"), b("diff_ns_b");
  a.rank(0);
  a.launch(0, 1, 0, 1'000, 7, 2'000, 12'000, "k");
  b.rank(0);
  b.launch(0, 1, 0, 1'000, 7, 2'000, 22'000, "k");
  const Profile pa = a.finish(), pb = b.finish();
  const Diff d = diff_profiles(pa, analyze(pa), pb, analyze(pb));
  EXPECT_FALSE(d.a.has_steps);
  EXPECT_EQ(d.a.rank_steps, 1);
  EXPECT_EQ(d.step_delta_ns, 10'000);
  ASSERT_EQ(d.kernels.size(), 1u);
  EXPECT_EQ(d.kernels[0].a_step_ns, 10'000);
  EXPECT_EQ(d.kernels[0].b_step_ns, 20'000);
  EXPECT_FALSE(d.notes.empty());
}

// Two windows without steps: the same kernel called 68 times in A and 60 in B, 100 µs each, and another 10 µs
// slower per call in B. Rows compare time per call: the first did not change, the second did.
TEST(Diff, WithoutStepsRowsCompareTimePerCallNotWindows) {
  ProfileBuilder a("diff_w_a"), b("diff_w_b");
  auto window = [](ProfileBuilder& p, int calls, TimeNs slow_ns) {
    p.rank(0);
    TimeNs t = 0;
    for (int i = 0; i < calls; ++i) {
      p.launch(0, 1, t, t + 1'000, 7, t + 2'000, t + 102'000, "steady_kernel");
      p.launch(0, 1, t + 1'500, t + 2'000, 7, t + 102'000, t + 152'000 + slow_ns, "slower_kernel");
      t += 200'000;
    }
  };
  window(a, 68, 0);
  window(b, 60, 10'000);
  const Profile pa = a.finish(), pb = b.finish();
  const Diff d = diff_profiles(pa, analyze(pa), pb, analyze(pb));
  EXPECT_FALSE(d.a.has_steps);
  bool slower = false;
  for (const HeadlineItem& item : d.headline) {
    EXPECT_NE(item.name, "steady_kernel") << item.text << ": the same time per call";
    if (item.name == "slower_kernel") {
      slower = true;
      EXPECT_EQ(item.delta_ns, 60 * 10'000);
      EXPECT_THAT(item.text, HasSubstr("50.000 -> 60.000 µs per call; count 68 -> 60"));
    }
  }
  EXPECT_TRUE(slower);
  EXPECT_DOUBLE_EQ(d.iteration_ratio, 60.0 / 68.0);
  // A's window of 68 iterations scaled to B's 60: compute 68 x 150 µs -> 9.0 ms against B's 60 x 160 µs =
  // 9.6 ms; the span is the launches' 200 µs period either way (the GPU waits for the CPU), so the step
  // does not change.
  for (const ClassDiff& c : d.classes) {
    if (c.name == "compute") {
      EXPECT_NEAR(static_cast<double>(c.b_step_ns - c.a_step_ns), 60 * 10'000, 100);
    }
  }
  EXPECT_NEAR(static_cast<double>(d.step_delta_ns), 0, 60 * 200'000 * 0.001);
  std::string notes;
  for (const std::string& n : d.notes) notes += n + "\n";
  EXPECT_THAT(notes, HasSubstr("compare time per call"));
  EXPECT_THAT(notes, HasSubstr("B ran 0.882 x the calls A ran"));
}

TEST(Diff, CollectivesAreKeyedByOperationSizeAndGroup) {
  ProfileBuilder a("diff_c_a"), b("diff_c_b");
  for (ProfileBuilder* p : {&a, &b}) {
    const bool bigger = p == &b;
    for (std::int32_t r = 0; r < 2; ++r) {
      p->rank(r, 2);
      p->step(r, 1, 0, 1'000'000, 1);
      const TimeNs end = bigger ? 300'000 : 200'000;
      const std::int64_t id =
          p->launch(r, 1, 1'000, 2'000, 20, 10'000, end,
                    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
      p->collective(r, id, 10'000, end, "allreduce", "0", 1, 2, bigger ? 2 << 20 : 1 << 20);
    }
  }
  const Profile pa = a.finish(), pb = b.finish();
  const Diff d = diff_profiles(pa, analyze(pa), pb, analyze(pb));
  ASSERT_EQ(d.collectives.size(), 2u) << "1 MiB and 2 MiB all-reduces are different rows";
  for (const DiffRow& r : d.collectives) {
    EXPECT_EQ(r.op, "allreduce");
    EXPECT_EQ(r.group_size, 2);
    if (r.bytes == 1 << 20) {
      EXPECT_EQ(r.a_count, 2);
      EXPECT_EQ(r.b_count, 0);
    } else {
      EXPECT_EQ(r.bytes, 2 << 20);
      EXPECT_EQ(r.b_count, 2);
      EXPECT_EQ(r.b_step_ns, 290'000);  // two ranks, one step each: mean per rank-step
    }
  }
}

}  // namespace
}  // namespace meshscope::measure
