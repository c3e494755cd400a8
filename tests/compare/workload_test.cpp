// What the profile ran (analysis/compare/workload.hpp), its measured work and roofline
// (analysis/measure/work.hpp), the measured model (analysis/compare/measured.hpp) and `compare` without model
// flags, on real traces of shared/traces:
//   * tracelens/h100_qwen1.5_0.5b_inference: Qwen1.5-0.5B (the file's name; hidden 1024, 24 layers, FFN 2816,
//     16 heads, vocabulary 151936) on one H100, 16 sequences of 559 tokens, recorded with shapes;
//   * hta/trace_filter: two ranks of a 128-rank recommender (embedding bags, MLPs, no attention);
//   * kineto/resnet50_num_workers_0: ResNet-50 on a V100 (convolutions; 2021 trace without Concrete Inputs);
//   * hta/ns_resolution_trace: recorded without shapes.

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "analysis/compare/measured.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/work.hpp"
#include "analysis/model/presets.hpp"
#include "job/profile_work.hpp"
#include "profiler/profile.hpp"
#include "profiler/sqlite_util.hpp"
#include "profiler/work_store.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;

using test::Result;
using test::run;
using test::shared_trace;

fs::path qwen() {
  return shared_trace("qwen", "tracelens/h100_qwen1.5_0.5b_inference.json.gz");
}

TEST(Workload, QwenInferenceIsQwen15HalfBillion) {
  const Profile p = Profile::load(qwen());
  const measure::ProfileWork work = load_work(p);
  ASSERT_TRUE(work.has_tables);
  ASSERT_TRUE(work.shapes_recorded);
  const Workload w = infer_workload(p, work);
  EXPECT_TRUE(w.transformer);
  EXPECT_EQ(w.hidden, 1024);
  EXPECT_EQ(w.layers, 24);
  EXPECT_EQ(w.ffn, 2816);
  EXPECT_TRUE(w.gated_mlp);
  EXPECT_EQ(w.heads, 16);
  EXPECT_EQ(w.kv_heads, 16);
  EXPECT_EQ(w.vocab, 151936);
  EXPECT_EQ(w.tokens_per_micro_batch, 16 * 559);
  EXPECT_EQ(w.tp, 1);
  EXPECT_EQ(w.pp, 1);
  EXPECT_EQ(w.dp, 1);
  EXPECT_EQ(w.hardware, std::optional<std::string>("h100-sxm"));
  EXPECT_FALSE(w.evidence.empty());
  model::ModelSpec m;
  ASSERT_TRUE(inferred_model(w, m));
  EXPECT_EQ(m.hidden, 1024);
  EXPECT_EQ(m.layers, 24);
  EXPECT_EQ(m.ffn, 2816);
  EXPECT_TRUE(m.gated_mlp);
}

// A counted BF16 operator of NAME, CATEGORY and recorded input DIMS, added to WORK.
void add_counted_op(measure::ProfileWork& work, const char* name, measure::WorkCategory category,
                    const char* dims) {
  measure::CountedOp o;
  o.id = static_cast<std::int64_t>(work.ops.size());
  o.name = name;
  o.category = category;
  o.input_dims = dims;
  o.input_types = R"(["c10::BFloat16"])";
  work.ops.push_back(o);
}

// Counted operators of BERT-base's forward passes as Kineto records them with shapes (Devlin et al. 2019:
// hidden 768, 12 layers, 12 heads, FFN 3072, WordPiece vocabulary 30522; batch 8 × 128 tokens): PASSES passes
// looking up the word, position and token-type tables, attention fused (SDPA) or as eager attention's two
// matmuls.
measure::ProfileWork bert_base_work(int passes, bool unfused) {
  measure::ProfileWork work;
  work.has_tables = work.shapes_recorded = true;
  auto op = [&](const char* name, measure::WorkCategory category, const char* dims) {
    add_counted_op(work, name, category, dims);
  };
  using C = measure::WorkCategory;
  for (int pass = 0; pass < passes; ++pass) {
    op("aten::embedding", C::kOther, "[[30522, 768], [8, 128]]");
    op("aten::embedding", C::kOther, "[[512, 768], [1, 128]]");
    op("aten::embedding", C::kOther, "[[2, 768], [8, 128]]");
    for (int layer = 0; layer < 12; ++layer) {
      for (int projection = 0; projection < 4; ++projection)
        op("aten::linear", C::kGemm, "[[8, 128, 768], [768, 768], [768]]");
      if (unfused) {
        op("aten::matmul", C::kGemm, "[[8, 12, 128, 64], [8, 12, 64, 128]]");   // QK^T
        op("aten::matmul", C::kGemm, "[[8, 12, 128, 128], [8, 12, 128, 64]]");  // scores × V
      } else {
        op("aten::scaled_dot_product_attention", C::kAttention,
           "[[8, 12, 128, 64], [8, 12, 128, 64], [8, 12, 128, 64], [], [], [], []]");
      }
      op("aten::linear", C::kGemm, "[[8, 128, 768], [3072, 768], [3072]]");
      op("aten::linear", C::kGemm, "[[8, 128, 3072], [768, 3072], [768]]");
    }
  }
  return work;
}

// A model that looks up several embedding tables per forward pass: BERT-base looks up its word, position
// (512) and token-type (2) tables once per pass. The vocabulary is the largest table, and its look-ups count
// the passes: two passes of 12 layers are 12 layers, not 24 / 6 = 4 (was: vocabulary 2, no layer count).
TEST(Workload, TheVocabularyIsTheLargestEmbeddingTableAndItsLookUpsCountThePasses) {
  const Profile p = Profile::load(qwen());
  const measure::ProfileWork work = bert_base_work(2, false);
  const Workload w = infer_recorded_workload(p, work);
  ASSERT_TRUE(w.transformer);
  EXPECT_EQ(w.hidden, 768);
  EXPECT_EQ(w.layers, 12);
  EXPECT_EQ(w.heads, 12);
  EXPECT_EQ(w.ffn, 3072);
  EXPECT_EQ(w.vocab, 30522);
  EXPECT_FALSE(w.gated_mlp);
  EXPECT_NE(
      std::find(w.evidence.begin(), w.evidence.end(),
                "vocab 30522 from the rows of the largest embedding table (3 tables of width 768 looked up: "
                "the smaller are position or type tables)"),
      w.evidence.end());
}

// Eager (unfused) attention: softmax(QK^T / sqrt(d)) V as two aten::matmul calls, as Hugging Face's eager
// attention and TimeSformer compute it. The same BERT-base, its attention unfused.
TEST(Workload, UnfusedMatmulAttentionIsAttention) {
  const Profile p = Profile::load(qwen());
  const measure::ProfileWork work = bert_base_work(1, true);
  const Workload w = infer_recorded_workload(p, work);
  ASSERT_TRUE(w.transformer);
  EXPECT_EQ(w.hidden, 768);
  EXPECT_EQ(w.layers, 12);
  EXPECT_EQ(w.heads, 12);
  EXPECT_EQ(w.micro_batch, 8);
  EXPECT_EQ(w.tokens_per_micro_batch, 8 * 128);
  EXPECT_EQ(w.ffn, 3072);
  EXPECT_EQ(w.vocab, 30522);
}

// Eager attention with grouped keys (Llama's eager path: keys and values repeated to every head before the
// product): 32 query heads over 8 key/value heads of 128 (Llama 3 8B, Llama Team 2024 Table 3), read from the
// key and value projections [1024, 4096].
TEST(Workload, UnfusedAttentionTakesItsKeyHeadsFromTheProjections) {
  const Profile p = Profile::load(qwen());
  measure::ProfileWork work;
  work.has_tables = work.shapes_recorded = true;
  auto op = [&](const char* name, measure::WorkCategory category, const char* dims) {
    add_counted_op(work, name, category, dims);
  };
  using C = measure::WorkCategory;
  op("aten::embedding", C::kOther, "[[128256, 4096], [1, 512]]");
  for (int layer = 0; layer < 4; ++layer) {
    op("aten::linear", C::kGemm, "[[1, 512, 4096], [4096, 4096], []]");  // q
    op("aten::linear", C::kGemm, "[[1, 512, 4096], [1024, 4096], []]");  // k
    op("aten::linear", C::kGemm, "[[1, 512, 4096], [1024, 4096], []]");  // v
    op("aten::matmul", C::kGemm, "[[1, 32, 512, 128], [1, 32, 128, 512]]");
    op("aten::matmul", C::kGemm, "[[1, 32, 512, 512], [1, 32, 512, 128]]");
    op("aten::linear", C::kGemm, "[[1, 512, 4096], [4096, 4096], []]");  // o
    op("aten::linear", C::kGemm, "[[1, 512, 4096], [14336, 4096], []]");
    op("aten::linear", C::kGemm, "[[1, 512, 4096], [14336, 4096], []]");
    op("aten::linear", C::kGemm, "[[1, 512, 14336], [4096, 14336], []]");
  }
  const Workload w = infer_recorded_workload(p, work);
  ASSERT_TRUE(w.transformer);
  EXPECT_EQ(w.hidden, 4096);
  EXPECT_EQ(w.heads, 32);
  EXPECT_EQ(w.kv_heads, 8);
  EXPECT_EQ(w.layers, 4);
  EXPECT_EQ(w.ffn, 14336);
  EXPECT_TRUE(w.gated_mlp);
  // The same with multi-head attention (BERT-base): no narrower projection, as many key heads as heads.
  EXPECT_EQ(infer_recorded_workload(p, bert_base_work(1, true)).kv_heads, 12);
}

TEST(Workload, RecommenderAndResnetAreNotTransformers) {
  for (const auto& [name, path] :
       {std::pair{"filter", "hta/trace_filter"}, std::pair{"resnet", "kineto/resnet50_num_workers_0"}}) {
    const Profile p = Profile::load(shared_trace(name, path));
    const Workload w = infer_workload(p, load_work(p));
    EXPECT_FALSE(w.transformer) << name;
    EXPECT_FALSE(w.hidden) << name;
    model::ModelSpec m;
    std::string why;
    EXPECT_FALSE(inferred_model(w, m, &why));
    EXPECT_EQ(why, kNotATransformer);
  }
  // ResNet's V100-DGXS-32GB is the V100 of preset v100; trace_filter names no GPU.
  const Profile r = Profile::load(shared_trace("resnet", "kineto/resnet50_num_workers_0"));
  EXPECT_EQ(infer_workload(r, load_work(r)).hardware, std::optional<std::string>("v100"));
}

TEST(Workload, HardwarePresetsOnlyForTheProductTheyDescribe) {
  EXPECT_EQ(hardware_preset_for("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(hardware_preset_for("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(hardware_preset_for("NVIDIA H100 NVL"), "h100-nvl");
  EXPECT_EQ(hardware_preset_for("NVIDIA H200"), "h200");
  EXPECT_EQ(hardware_preset_for("NVIDIA H20"), "h20");
  EXPECT_EQ(hardware_preset_for("NVIDIA H800"), "h800");
  EXPECT_EQ(hardware_preset_for("NVIDIA A100-SXM4-80GB"), "a100-80gb");
  EXPECT_EQ(hardware_preset_for("NVIDIA A100-SXM4-40GB"), "a100-40gb");
  EXPECT_EQ(hardware_preset_for("NVIDIA A100-PCIE-40GB"), "");
  EXPECT_EQ(hardware_preset_for("NVIDIA A100 80GB PCIe"), "a100-80gb-pcie");
  EXPECT_EQ(hardware_preset_for("Tesla V100-PCIE-32GB"), "v100-pcie");
  EXPECT_EQ(hardware_preset_for("Tesla V100-PCIE-16GB"), "");
  EXPECT_EQ(hardware_preset_for("Tesla V100S-PCIE-32GB"), "");  // 16.4 FP32 TFLOP/s, 1,134 GB/s: no preset
  EXPECT_EQ(hardware_preset_for("NVIDIA L4"), "l4");
  EXPECT_EQ(hardware_preset_for("NVIDIA L40"), "");
  EXPECT_EQ(hardware_preset_for("NVIDIA A100-PG509-200"), "");
  EXPECT_EQ(hardware_preset_for("NVIDIA A800-SXM4-80GB"), "a800");
  EXPECT_EQ(hardware_preset_for("NVIDIA L40S"), "l40s");
  EXPECT_EQ(hardware_preset_for("AMD Instinct MI300X"), "mi300x");
  EXPECT_EQ(hardware_preset_for("AMD Instinct MI300X VF"), "mi300x");
  EXPECT_EQ(hardware_preset_for("AMD Instinct MI210"), "mi210");
  EXPECT_EQ(hardware_preset_for("AMD Instinct MI250X"), "mi250x");
  EXPECT_EQ(hardware_preset_for("AMD Radeon Graphics"), "");  // nothing else known: no guess
  EXPECT_EQ(hardware_preset_for("Tesla V100-SXM2-16GB"), "v100-16gb");
  EXPECT_EQ(hardware_preset_for("Tesla V100-SXM2-32GB"), "v100");
  // Where the name leaves the variant open, what the profile records of the device decides.
  const std::int64_t gib = 1ll << 30;
  std::string note;
  EXPECT_EQ(hardware_preset_for("Tesla V100-SXM2", &note, {16 * gib, 80, 7, 0}), "v100-16gb");
  EXPECT_NE(note.find("16.0 GiB"), std::string::npos) << note;
  EXPECT_EQ(hardware_preset_for("Tesla V100-SXM2", &note, {32 * gib, 80, 7, 0}), "v100");
  // ROCm names both MI250 kinds "MI250X/MI250": an MI250X die has 110 compute units, an MI250 die 104.
  EXPECT_EQ(hardware_preset_for("AMD Instinct MI250X/MI250", &note, {64 * gib, 110, 9, 0}), "mi250x");
  EXPECT_EQ(hardware_preset_for("AMD Instinct MI250X/MI250", &note, {64 * gib, 104, 9, 0}), "mi250");
  EXPECT_EQ(hardware_preset_for("AMD Instinct MI250X/MI250"), "");
  // A generic name on a CDNA 2 die (gfx9.0, 64 GiB): the MI210's figures for 104 compute units.
  EXPECT_EQ(hardware_preset_for("AMD Radeon Graphics", &note, {68702699520, 104, 9, 0}), "mi210");
  EXPECT_NE(note.find("104 compute units"), std::string::npos) << note;
  EXPECT_EQ(hardware_preset_for("AMD Radeon Graphics", &note, {68702699520, 60, 9, 0}), "");
  EXPECT_EQ(hardware_preset_for("AMD Radeon Graphics", &note, {17179869184, 104, 9, 0}), "");
}

TEST(Workload, HardwareOfRealAmdTracesFromTheirDevices) {
  // TraceLens's MI210 trace names its GPU; HTA's AMD trace (recorded on an MI250 under ROCm 6.2, by its file
  // name) only says "AMD Radeon Graphics", with 104 compute units and 64 GiB on gfx9.0: the MI210's figures.
  const Profile mi210 = Profile::load(shared_trace("mi210", "tracelens/mi210_gpu_only.json.gz"));
  EXPECT_EQ(infer_workload(mi210, load_work(mi210)).hardware, std::optional<std::string>("mi210"));
  const Profile amd = Profile::load(shared_trace("amd", "hta/amd_trace"));
  const Workload w = infer_workload(amd, load_work(amd));
  EXPECT_EQ(w.hardware, std::optional<std::string>("mi210"));
  EXPECT_EQ(w.gpu, "AMD Radeon Graphics");
  // Its MLP ran in FP32: checked against the MI210's FP32 matrix peak (45.3 TFLOP/s, AnandTech's MI210 launch
  // table), and, with a preset stating no FP32 or TF32 peak, against its 16-bit peak with a note saying so.
  const test::Result report =
      test::run("report --json \"" + shared_trace("amd", "hta/amd_trace").string() + "\"");
  EXPECT_NE(report.out.find("\"precision\": \"FP32\",\n        \"ceiling\": \"FP32\""), std::string::npos);
  measure::WorkCeilings no_fp32{.hardware = "mi210", .peak_flops = 181e12};
  const measure::MeasuredRoofline r = measure::measured_roofline(load_work(amd), no_fp32);
  EXPECT_NE(
      std::find(r.notes.begin(), r.notes.end(),
                "12 operator(s) ran in FP32, and the preset mi210 states no FP32 or TF32 peak: they are "
                "checked against its BF16 peak"),
      r.notes.end());
}

TEST(Work, QwenKernelsCarryTheirOperatorsWork) {
  const Profile p = Profile::load(qwen());
  const measure::ProfileWork work = load_work(p);
  // Every counted operator's kernels hold exactly its FLOPs and bytes between them.
  std::vector<double> flops(work.ops.size(), 0), bytes(work.ops.size(), 0);
  for (const auto& k : work.kernels) flops[k.op] += k.flops, bytes[k.op] += k.bytes;
  std::size_t with_kernels = 0;
  for (std::size_t i = 0; i < work.ops.size(); ++i) {
    if (work.ops[i].kernels == 0) continue;
    ++with_kernels;
    EXPECT_NEAR(flops[i], work.ops[i].flops, 1e-6 * work.ops[i].flops + 1e-9);
    EXPECT_NEAR(bytes[i], work.ops[i].bytes, 1e-6 * work.ops[i].bytes + 1e-9);
  }
  EXPECT_GT(with_kernels, 0u);
  // The q/k/v projections (linear with bias, 72 calls) are counted once, on aten::linear (the addmm inside is
  // nested), each 2 · 8944 · 1024 · 1024 FLOPs.
  std::int64_t linear_qkv = 0;
  for (const auto& op : work.ops) {
    if (op.name == "aten::linear" && op.input_dims == "[[16, 559, 1024], [1024, 1024], [1024]]") {
      ++linear_qkv;
      EXPECT_DOUBLE_EQ(op.flops, 18756927488.0);
    }
    EXPECT_NE(op.name, "aten::addmm");  // inside aten::linear: nested, not counted
  }
  EXPECT_EQ(linear_qkv, 72);
  EXPECT_EQ(work.nested, 0);  // the addmm inside each linear has no op_work row of its own
  // Each kernel counts once, by its own class: cuBLAS runs a "Memset (Device)" before each of these GEMMs,
  // and it is memory traffic, not GEMM time (was: 2 kernels per linear, the memset's time in the GEMM's).
  for (const auto& op : work.ops) {
    if (op.name == "aten::linear") {
      EXPECT_EQ(op.kernels, 1) << op.input_dims;
    }
  }
  // The roofline on the H100's ceilings: every point below the peak, the GEMMs dominate the FLOPs.
  measure::WorkCeilings h100{"h100-sxm", 989e12, 1979e12};
  const measure::MeasuredRoofline r = measure::measured_roofline(work, h100);
  EXPECT_GT(r.kernels, 0);
  EXPECT_GT(r.flops, 0);
  double gemm = 0;
  for (const auto& row : r.ops) {
    EXPECT_LE(row.flops / row.kernel_s, 989e12) << row.op;
    if (row.category == measure::WorkCategory::kGemm) gemm += row.flops;
  }
  EXPECT_GT(gemm, 0.5 * r.flops);
  // A ceiling far below what the GEMMs achieve leaves them out, counted in a note.
  const measure::MeasuredRoofline low = measure::measured_roofline(work, {"tiny", 1e9, 0});
  EXPECT_GT(low.left_out, 0);
  EXPECT_LT(low.kernels, r.kernels);
  EXPECT_FALSE(low.notes.empty());
}

// Every operator recorded with shapes keeps them for reading (the Details of any operator): on its range,
// whether it has a work formula (aten::mm), has none (aten::view, aten::cat) or is inside a counted operator
// (the addmm inside each linear, which has no op_work row); read_recorded_shapes finds them by the range's
// id.
TEST(Work, EveryOperatorRecordedWithShapesKeepsThemOnItsRange) {
  const Profile p = Profile::load(qwen());
  const measure::ProfileWork work = load_work(p);
  sql::Database db(qwen(), /*read_only=*/true);
  std::set<std::string> names;
  sql::Statement s = db.prepare(
      "SELECT r.id, n.value, d.value FROM ranges r JOIN strings n ON n.id = r.name "
      "JOIN strings d ON d.id = r.input_dims WHERE r.kind = 1 ORDER BY r.id");
  while (s.step()) {
    const std::string name = s.column_text(1);
    if (!names.insert(name).second) continue;
    const auto shapes = read_recorded_shapes(db, s.column_int(0));
    ASSERT_TRUE(shapes) << name;
    EXPECT_EQ(shapes->input_dims, s.column_text(2)) << name;
    EXPECT_FALSE(shapes->input_types.empty()) << name;
  }
  for (const char* name : {"aten::addmm", "aten::view", "aten::cat", "aten::linear"})
    EXPECT_TRUE(names.contains(name)) << name;
  // A counted operator's range holds the shapes its work was computed from.
  const measure::CountedOp& counted = work.ops.front();
  const Rank& rank = p.ranks()[counted.rank_index];
  const CpuRange* range = nullptr;
  for (const CpuRange& c : rank.ranges) {
    if (c.external_id == counted.external_id && p.str(c.name) == counted.name) range = &c;
  }
  ASSERT_TRUE(range);
  const auto shapes = read_recorded_shapes(db, range->id);
  ASSERT_TRUE(shapes);
  EXPECT_EQ(shapes->input_dims, counted.input_dims);
  EXPECT_EQ(shapes->input_types, counted.input_types);
  // A range that is no operator (the profiler step) has none.
  for (const CpuRange& c : rank.ranges) {
    if (c.kind == RangeKind::kStep) {
      EXPECT_FALSE(read_recorded_shapes(db, c.id));
    }
  }
}

// Each operator against the peak of its operands' precision: ResNet-50's FP32 convolutions on a V100 against
// its 15.7 TFLOP/s FP32 peak (NVIDIA V100 datasheet), not the 125 TFLOP/s FP16 tensor-core peak; on a GPU
// with TF32 (A100: 156, H100: 494.7) FP32 operands may run in TF32, which is then their ceiling.
TEST(Work, EachOperatorIsCheckedAgainstItsPrecisionsPeak) {
  EXPECT_EQ(measure::precision_of_types(R"(["float", "float", "Int"])"), measure::WorkPrecision::kFP32);
  EXPECT_EQ(measure::precision_of_types(R"(["c10::BFloat16", "c10::BFloat16", ""])"),
            measure::WorkPrecision::kBF16);
  EXPECT_EQ(measure::precision_of_types(R"(["long int", "c10::Half"])"), measure::WorkPrecision::kFP16);
  EXPECT_EQ(measure::precision_of_types(R"(["c10::Float8_e4m3fn", "float"])"), measure::WorkPrecision::kFP8);
  EXPECT_EQ(measure::precision_of_types(R"(["long int", "Double"])"), measure::WorkPrecision::kOther);

  const measure::WorkCeilings v100 = ceilings_of(model::load_hardware("v100"));
  EXPECT_EQ(measure::peak_for(measure::WorkPrecision::kFP32, v100), 15.7e12);
  EXPECT_EQ(measure::peak_for(measure::WorkPrecision::kFP16, v100), 125e12);
  EXPECT_STREQ(measure::peak_name(measure::WorkPrecision::kFP32, v100), "FP32");
  EXPECT_STREQ(measure::peak_name(measure::WorkPrecision::kFP16, v100), "FP16");  // no BF16 on a V100
  const measure::WorkCeilings a100 = ceilings_of(model::load_hardware("a100-80gb"));
  EXPECT_EQ(measure::peak_for(measure::WorkPrecision::kFP32, a100), 156e12);
  EXPECT_STREQ(measure::peak_name(measure::WorkPrecision::kFP32, a100), "TF32");
  EXPECT_STREQ(measure::peak_name(measure::WorkPrecision::kBF16, a100), "BF16");

  const Profile r = Profile::load(shared_trace("resnet", "kineto/resnet50_num_workers_0"));
  const measure::ProfileWork work = load_work(r);
  std::int64_t fp32 = 0, timed = 0;  // of the operators with FLOPs and kernel time
  for (const auto& op : work.ops) {
    if (!(op.flops > 0) || op.kernel_ns <= 0) continue;
    ++timed;
    fp32 += op.precision == measure::WorkPrecision::kFP32;
  }
  EXPECT_EQ(fp32, timed);  // the trace ran its convolutions and GEMMs in FP32
  EXPECT_EQ(timed, 336);
  const measure::MeasuredRoofline roof = measure::measured_roofline(work, v100);
  for (std::uint32_t i : roof.points) {
    const auto& op = work.ops[i];
    EXPECT_LE(op.flops / (static_cast<double>(op.kernel_ns) / 1e9), 15.7e12) << op.name;
  }
  // cuDNN's Winograd convolutions (volta_scudnn_winograd_*) do fewer multiplications than the shapes count:
  // at 21-27 "TFLOP/s" by the shapes, they are left out, said in a note.
  EXPECT_EQ(roof.left_out, 60);
  ASSERT_FALSE(roof.notes.empty());
  EXPECT_NE(roof.notes[0].find("Winograd"), std::string::npos) << roof.notes[0];
}

// The precision the GEMMs ran in: Qwen's BF16, ResNet-50's FP32. compare predicts 16-bit GEMMs for FP32 work
// and says so (the model has no FP32 GEMMs); FP8 work is predicted in FP8.
TEST(Work, ThePrecisionTheGemmsRanInIsInferredAndSaid) {
  const Profile q = Profile::load(qwen());
  const Workload wq = infer_workload(q, load_work(q));
  EXPECT_EQ(wq.precision, measure::WorkPrecision::kBF16);
  EXPECT_GT(wq.precision_share, 0.999);  // a few FLOPs of FP32 work beside the BF16 GEMMs
  const fs::path resnet = shared_trace("resnet", "kineto/resnet50_num_workers_0");
  const Profile r = Profile::load(resnet);
  EXPECT_EQ(infer_workload(r, load_work(r)).precision, measure::WorkPrecision::kFP32);
  const Result c = run("compare \"" + resnet.string() + "\" --model gpt --hardware v100", true);
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("WARNING: the profile's GEMMs ran in FP32, which the model does not predict: the "
                       "prediction is of 16-bit"),
            std::string::npos)
      << c.out;
  EXPECT_EQ(run("compare \"" + resnet.string() + "\" --model gpt --hardware v100 --precision bf16", true)
                .out.find("ran in FP32"),
            std::string::npos);
  const Result j = run("info --json \"" + qwen().string() + "\"");
  EXPECT_NE(j.out.find(R"("precision": "BF16")"), std::string::npos) << j.out;
}

TEST(Work, TraceWithoutShapesSaysSo) {
  const Profile p = Profile::load(shared_trace("ns", "hta/ns_resolution_trace"));
  const measure::ProfileWork work = load_work(p);
  EXPECT_TRUE(work.has_tables);
  EXPECT_FALSE(work.shapes_recorded);
  const measure::MeasuredRoofline r = measure::measured_roofline(work, {});
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes[0], measure::kNoShapesNote);
  const Result report =
      run("report --json \"" + shared_trace("ns", "hta/ns_resolution_trace").string() + "\"");
  EXPECT_EQ(report.status, 0);
  EXPECT_NE(report.out.find("no shapes recorded (record with record_shapes=True)"), std::string::npos);
}

TEST(MeasuredModel, QwenStepsAndFlopsPerStep) {
  const Profile p = Profile::load(qwen());
  const measure::Analysis a = measure::analyze(p);
  const MeasuredModel m = measure_profile(p, a, load_work(p, {.uncounted_shapes = true}));
  EXPECT_TRUE(m.workload.transformer);
  ASSERT_TRUE(m.hardware.has_value());
  EXPECT_EQ(m.hardware->name, "h100-sxm");
  EXPECT_GT(m.rank_steps, 0);
  EXPECT_GT(m.flops_per_step, 0);
  // The parts of the mean step add up to its GPU span (compare's definition).
  double sum = 0;
  for (double v : m.steps.mean.parts) sum += v;
  EXPECT_NEAR(sum, m.steps.mean.dur_s, 1e-9 * m.steps.mean.dur_s + 1e-12);
  // The same object compare builds its measured column from.
  const Measured direct = measure_steps(p, a, inferred_layout(m.workload));
  EXPECT_DOUBLE_EQ(direct.mean.dur_s, m.steps.mean.dur_s);
}

// The Explorer's coverage reads work_flops_per_step: the same work compare counts, the output layer left out
// (tests/compare/coverage_test.cpp works the predicted 2.680 TFLOP out; 3.52 with the output layer).
TEST(MeasuredModel, ItsWorkPerStepLeavesOutTheOutputLayerAsCompareDoes) {
  const fs::path trace = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data/known_models/h200_gpt_train.json.gz";
  const Profile p = Profile::load(test::imported("h200_gpt_train", trace));
  const MeasuredModel m = measure_profile(p, measure::analyze(p), load_work(p, {.uncounted_shapes = true}));
  EXPECT_GT(m.work_flops_per_step, 0.95 * 2.680059592704e12);
  EXPECT_LT(m.work_flops_per_step, 1.05 * 2.680059592704e12);
}

TEST(CompareCli, WithoutModelFlagsComparesWhatTheProfileRan) {
  const Result r = run("compare \"" + qwen().string() + "\"", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("inferred from the profile (model; hardware;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on 1 x h100-sxm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("24 layers, ffn 2816, 16 heads (16 kv), vocab 151936"), std::string::npos) << r.out;
  // A flag overrides its part only.
  const Result layers = run("compare --json \"" + qwen().string() + "\" --layers 12");
  ASSERT_EQ(layers.status, 0) << layers.out;
  EXPECT_NE(layers.out.find("\"model\": true"), std::string::npos);
}

TEST(CompareCli, NotATransformerWithoutModelIsRefusedInOneLine) {
  const fs::path filter = shared_trace("filter", "hta/trace_filter");
  const Result r = run("compare \"" + filter.string() + "\"", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("not a recognised transformer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--model"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(CompareCli, CalibrateFitsGemmEfficiencyFromTheKernels) {
  const Result r = run("compare --json --calibrate \"" + qwen().string() + "\"", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"gemm_classes\""), std::string::npos);
  EXPECT_NE(r.out.find("\"applied_gemm_efficiency\""), std::string::npos);
  const Result text = run("compare --calibrate \"" + qwen().string() + "\"");
  EXPECT_NE(text.out.find("GEMM efficiency per shape class"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace meshscope::compare
