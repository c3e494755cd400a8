// FLOPs and bytes per operator from recorded shapes (analysis/measure/op_work.hpp), each formula against a
// case worked by hand here. The argument texts are those of real traces in shared/traces (tracelens
// h100_qwen1.5_0.5b_inference, mi300_resnet_act_checkpoint, kineto resnet50) unless said otherwise.
#include "analysis/measure/op_work.hpp"

#include <gtest/gtest.h>

namespace meshscope::measure {
namespace {

OpWork work(std::string_view name, std::string_view dims, std::string_view types,
            std::string_view concrete = {}, WorkStatus expect = WorkStatus::kOk) {
  OpWork w;
  EXPECT_EQ(op_work(name, {dims, types, concrete}, w), expect) << name << " " << dims;
  return w;
}

TEST(OpWork, ParsesDimsTypesAndConcreteInputs) {
  std::vector<std::vector<std::int64_t>> dims;
  ASSERT_TRUE(parse_dims("[[16, 559, 1024], [], [3]]", dims));
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_EQ(dims[0], (std::vector<std::int64_t>{16, 559, 1024}));
  EXPECT_TRUE(dims[1].empty());
  // A TensorList input (nested list) is not one tensor: kept as [].
  ASSERT_TRUE(parse_dims("[[[2, 3], [4]], [5]]", dims));
  EXPECT_TRUE(dims[0].empty());
  EXPECT_EQ(dims[1], (std::vector<std::int64_t>{5}));
  EXPECT_FALSE(parse_dims("[[1, -2]]", dims));
  EXPECT_FALSE(parse_dims("[[1, 2]", dims));
  EXPECT_FALSE(parse_dims("[[1, \"a\"]]", dims));
  std::vector<std::string> strings;
  ASSERT_TRUE(parse_string_list(R"(["c10::BFloat16", "", "[2, 2]", "a\"b"])", strings));
  EXPECT_EQ(strings, (std::vector<std::string>{"c10::BFloat16", "", "[2, 2]", "a\"b"}));
  EXPECT_EQ(canonical_list("[\n  [\n    16,\n    559\n  ],\n  []\n]"), "[[16, 559], []]");
  EXPECT_EQ(canonical_list(R"([ "c10::BFloat16","a, b" ])"), R"(["c10::BFloat16", "a, b"])");
  // Kineto's own spelling is already canonical (used without a copy); anything else is not.
  EXPECT_TRUE(is_canonical_list("[[16, 559], []]"));
  EXPECT_TRUE(is_canonical_list(R"(["c10::BFloat16", "a,  b"])"));
  EXPECT_TRUE(is_canonical_list(""));
  EXPECT_FALSE(is_canonical_list("[[16,559], []]"));
  EXPECT_FALSE(is_canonical_list("[[16,  559]]"));
  EXPECT_FALSE(is_canonical_list("[ [16, 559]]"));
  EXPECT_FALSE(is_canonical_list("[[16, 559]]\n"));
  // The check agrees with the conversion on every kind of input.
  for (const std::string_view list : {"[1,\n2]", "[1, 2]", "[1,  2]", "[1 ,2]", "[\"a\\\" ,b\"]", "[\"a\\",
                                      ",", ", ", "[[], [\"x y\"]]", "[\t1]"}) {
    EXPECT_EQ(is_canonical_list(list), canonical_list(list) == list) << list;
  }
  EXPECT_EQ(element_bytes("float"), 4);
  EXPECT_EQ(element_bytes("c10::BFloat16"), 2);
  EXPECT_EQ(element_bytes("c10::Float8_e4m3fn"), 1);
  EXPECT_EQ(element_bytes("long int"), 8);
  EXPECT_EQ(element_bytes("Scalar"), 0);
}

// GEMM: 2·M·N·K FLOPs, (M·K + K·N + M·N) elements moved (NVIDIA, Matrix Multiplication Background).
TEST(OpWork, LinearOfQwenAttentionProjection) {
  // q_proj of Qwen1.5-0.5B: x [16, 559, 1024] · Wᵀ [1024, 1024] + b [1024], BF16.
  const OpWork w = work("aten::linear", "[[16, 559, 1024], [1024, 1024], [1024]]",
                        R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])");
  EXPECT_EQ(w.category, WorkCategory::kGemm);
  // M = 16·559 = 8944: 2 · 8944 · 1024 · 1024 = 18 756 927 488.
  EXPECT_DOUBLE_EQ(w.flops, 18756927488.0);
  // (8944·1024 + 1024·1024 + 1024 + 8944·1024) · 2 bytes = (9 158 656 + 1 048 576 + 1 024 + 9 158 656) · 2.
  EXPECT_DOUBLE_EQ(w.bytes, (9158656.0 + 1048576.0 + 1024.0 + 9158656.0) * 2);
}

TEST(OpWork, MmAddmmBmmBaddbmmMatmul) {
  // mm [8944, 1024] · [1024, 2816] (Qwen gate projection): 2 · 8944 · 2816 · 1024.
  OpWork w = work("aten::mm", "[[8944, 1024], [1024, 2816]]", R"(["c10::BFloat16", "c10::BFloat16"])");
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 8944 * 2816 * 1024);
  EXPECT_DOUBLE_EQ(w.bytes, (8944.0 * 1024 + 1024.0 * 2816 + 8944.0 * 2816) * 2);
  // addmm(bias [512], [1024, 1705], [1705, 512]) fp32 (hta trace_diff): 2 · 1024 · 512 · 1705.
  w = work("aten::addmm", "[[512], [1024, 1705], [1705, 512], [], []]",
           R"(["float", "float", "float", "Scalar", "Scalar"])");
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 1024 * 512 * 1705);
  EXPECT_DOUBLE_EQ(w.bytes, (1024.0 * 1705 + 1705.0 * 512 + 1024.0 * 512 + 512) * 4);
  // bmm [2048, 606, 160] · [2048, 160, 20] (hta trace_filter): 2 · 2048 · 606 · 20 · 160.
  w = work("aten::bmm", "[[2048, 606, 160], [2048, 160, 20]]", R"(["float", "float"])");
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 2048 * 606 * 20 * 160);
  // baddbmm(bias, [4, 8, 16], [4, 16, 2]) (constructed): 2 · 4 · 8 · 2 · 16 = 2048.
  w = work("aten::baddbmm", "[[4, 8, 2], [4, 8, 16], [4, 16, 2], [], []]",
           R"(["float", "float", "float", "Scalar", "Scalar"])");
  EXPECT_DOUBLE_EQ(w.flops, 2048.0);
  // matmul [1, 32, 1] · [1, 1, 559] (Qwen rotary): batch 1, M 32, K 1, N 559: 2 · 32 · 559 = 35 776.
  w = work("aten::matmul", "[[1, 32, 1], [1, 1, 559]]", R"(["float", "float"])");
  EXPECT_DOUBLE_EQ(w.flops, 35776.0);
  EXPECT_DOUBLE_EQ(w.bytes, (32.0 + 559 + 32 * 559) * 4);
  // matmul broadcasting [2, 1, 3, 4] · [5, 4, 6]: batch 2·5 = 10, 2 · 10 · 3 · 6 · 4 = 1440.
  w = work("aten::matmul", "[[2, 1, 3, 4], [5, 4, 6]]", R"(["float", "float"])");
  EXPECT_DOUBLE_EQ(w.flops, 1440.0);
  // matrix · vector [3, 4] · [4]: 2 · 3 · 4 = 24.
  w = work("aten::matmul", "[[3, 4], [4]]", R"(["float", "float"])");
  EXPECT_DOUBLE_EQ(w.flops, 24.0);
  // Inner dimensions that do not agree: the shapes do not fit a GEMM.
  work("aten::mm", "[[3, 4], [5, 6]]", R"(["float", "float"])", {}, WorkStatus::kUnparsable);
}

TEST(OpWork, ScaledAndGroupedMm) {
  // FP8 _scaled_mm [128, 256] · [256, 64], out_dtype BFloat16 (ScalarType 15): 2 · 128 · 64 · 256 FLOPs;
  // bytes 128·256 + 256·64 (1 byte) + two 4-byte scales + 128·64 · 2.
  OpWork w =
      work("aten::_scaled_mm", "[[128, 256], [256, 64], [], [], [], [], [], []]",
           R"(["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "", "", "Scalar", "Scalar"])",
           R"(["", "", "", "", "", "", "15", "False"])");
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 128 * 64 * 256);
  EXPECT_DOUBLE_EQ(w.bytes, 128.0 * 256 + 256.0 * 64 + 2 * 4 + 128.0 * 64 * 2);
  // _grouped_mm A [96, 32] (all groups' rows) · B [4, 32, 48]: 2 · 96 · 48 · 32.
  w = work("aten::_grouped_mm", "[[96, 32], [4, 32, 48], [4], [], []]",
           R"(["c10::BFloat16", "c10::BFloat16", "int", "", "Scalar"])");
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 96 * 48 * 32);
}

// Attention: 4·B·H·Lq·Lk·E, halved when causal, 2.5× backward (FlashAttention-2 benchmark).
TEST(OpWork, FlashAttentionOfQwenIsCausal) {
  const OpWork w = work(
      "aten::_flash_attention_forward",
      "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64], [], [], [], [], [], [], [], [], [], [], [], "
      "[]]",
      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "", ""])",
      R"(["", "", "", "", "", "559", "559", "0.", "True", "False", "0.125", "", "", "", ""])");
  EXPECT_EQ(w.category, WorkCategory::kAttention);
  // 4 · 16 · 16 · 559² · 64 / 2 = 10 239 377 408.
  EXPECT_DOUBLE_EQ(w.flops, 10239377408.0);
  // Q, K, V, O of 16·559·16·64 = 9 158 656 BF16 elements each.
  EXPECT_DOUBLE_EQ(w.bytes, 4 * 9158656.0 * 2);
  // The same through scaled_dot_product_attention ([B, H, L, E]; is_causal is argument 5).
  const OpWork s = work(
      "aten::scaled_dot_product_attention",
      "[[16, 16, 559, 64], [16, 16, 559, 64], [16, 16, 559, 64], [], [], [], [], []]",
      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "Scalar", "Scalar", "Scalar", "Scalar"])",
      R"(["", "", "", "", "0.", "True", "0.125", "False"])");
  EXPECT_DOUBLE_EQ(s.flops, w.flops);
  // Non-causal, backward: 2.5 · 4 · 1 · 2 · 8 · 8 · 4 = 5120 (constructed).
  const OpWork b = work(
      "aten::_scaled_dot_product_flash_attention_backward",
      "[[1, 2, 8, 4], [1, 2, 8, 4], [1, 2, 8, 4], [1, 2, 8, 4], [1, 2, 8, 4], [1, 2, 8], [], [], "
      "[], [], [], [], [], [], []]",
      R"(["float", "float", "float", "float", "float", "float", "", "", "Scalar", "Scalar", "Scalar", "Scalar", "", "", "Scalar"])",
      R"(["", "", "", "", "", "", "", "", "8", "8", "0.", "False", "", "", "0.5"])");
  EXPECT_DOUBLE_EQ(b.flops, 5120.0);
  // Without Concrete Inputs the causal flag is unknown: not determined.
  work("aten::scaled_dot_product_attention", "[[1, 2, 8, 4], [1, 2, 8, 4], [1, 2, 8, 4], [], [], [], [], []]",
       R"(["float", "float", "float", "", "Scalar", "Scalar", "Scalar", "Scalar"])", {},
       WorkStatus::kUndetermined);
}

// The attention libraries' operators: flash-attn's registered forward (q, k, v, dropout_p, softmax_scale,
// causal,
// ...) over [B, L, H, E] is the same work as ATen's flash forward of the same shapes (Qwen's above); the
// FlashAttention 3 forward takes causal 25th. Packed attention (vLLM's, FlashInfer's, the variable-length
// forward) is known but its work is not determined: the sequences' lengths are not among its shapes.
TEST(OpWork, AttentionLibrariesOperators) {
  const std::string dims = "[[16, 559, 16, 64], [16, 559, 16, 64], [16, 559, 16, 64], [], [], []]";
  const std::string types =
      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar"])";
  const OpWork flash =
      work("flash_attn::_flash_attn_forward", dims, types, R"(["", "", "", "0.", "0.125", "True"])");
  EXPECT_EQ(flash.category, WorkCategory::kAttention);
  EXPECT_DOUBLE_EQ(flash.flops, 10239377408.0);
  EXPECT_DOUBLE_EQ(work("aiter::mha_fwd", dims, types, R"(["", "", "", "0.", "0.125", "True"])").flops,
                   10239377408.0);
  EXPECT_DOUBLE_EQ(work("FlashAttnFunc", dims, types, R"(["", "", "", "0.", "0.125", "False"])").flops,
                   2 * 10239377408.0);
  std::string concrete3 = "[";
  for (int i = 0; i < 25; ++i) concrete3 += std::string(i ? ", " : "") + (i == 24 ? "\"True\"" : "\"\"");
  concrete3 += "]";
  std::string types3 = R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16")";
  for (int i = 3; i < 25; ++i) types3 += R"(, "")";
  types3 += "]";
  EXPECT_DOUBLE_EQ(work("flash_attn_3::fwd", dims, types3, concrete3).flops, 10239377408.0);
  EXPECT_TRUE(has_work_formula("vllm::unified_attention_with_output"));
  work("vllm::unified_attention_with_output", "[[256, 8, 32], [256, 2, 32], [256, 2, 32], [256, 8, 32], []]",
       "", {}, WorkStatus::kUndetermined);
  EXPECT_FALSE(has_work_formula("vllm::rms_norm"));
  EXPECT_FALSE(has_work_formula("flashinfer::rmsnorm"));
}

// Packed attention's work is known when each sequence has one query (decoding): 2·H·(E + Ev) FLOPs per
// query-key pair over all keys (FlashAttention-2's count, as above); the keys are the packed key tokens, or
// the pages in use of a cache whose pages hold one token. A prefill's depends on each sequence's length,
// which the shapes do not record.
TEST(OpWork, PackedAttentionIsCountedWhenDecoding) {
  // flash-attn's variable-length forward: 4 sequences of one query over 400 keys in all, 8 heads, 2 KV heads.
  const std::string varlen_types = R"(["float", "float", "float", "int", "int", "Scalar"])";
  const OpWork varlen = work("flash_attn::_flash_attn_varlen_forward",
                             "[[4, 8, 32], [400, 2, 32], [400, 2, 32], [5], [5], []]", varlen_types, {});
  EXPECT_EQ(varlen.category, WorkCategory::kAttention);
  EXPECT_DOUBLE_EQ(varlen.flops, 2.0 * 8 * 400 * (32 + 32));  // 409 600
  // q and the output 4·8·32 each, keys and values 400·2·32 each, 4 bytes.
  EXPECT_DOUBLE_EQ(varlen.bytes, (1024.0 + 51200 + 1024) * 4);
  // FlashInfer's decode over a cache of one-token pages (llama_flashinfer_generate's first decoding pass):
  // 2 sequences, 194 pages in use.
  const std::string decode =
      "flashinfer::batch_decode_with_kv_cache_dtype_q_f32_dtype_kv_f32_dtype_o_f32_dtype_idx_i32_head_dim_qk_"
      "32_"
      "head_dim_vo_32_posenc_0_use_swa_False_use_logits_cap_False_run";
  const std::string decode_types =
      R"(["float", "float", "", "float", "float", "float", "int", "int", "int", "float", "", "", "", ""])";
  const OpWork paged =
      work(decode,
           "[[1024], [256], [], [2, 8, 32], [512, 1, 2, 32], [512, 1, 2, 32], [3], [194], [2], "
           "[2, 8, 32], [], [], [], []]",
           decode_types, {});
  EXPECT_DOUBLE_EQ(paged.flops, 2.0 * 8 * 194 * 64);  // 198 656
  EXPECT_DOUBLE_EQ(paged.bytes, (512.0 + 194 * 2 * 64 + 512) * 4);
  // Pages of 16 tokens are partly filled at each sequence's end: undetermined; so is a prefill.
  work(decode,
       "[[1024], [256], [], [2, 8, 32], [64, 16, 2, 32], [64, 16, 2, 32], [3], [13], [2], [2, 8, 32], [], "
       "[], [], "
       "[]]",
       decode_types, {}, WorkStatus::kUndetermined);
  work("flash_attn::_flash_attn_varlen_forward", "[[192, 8, 32], [192, 2, 32], [192, 2, 32], [3], [3], []]",
       varlen_types, {}, WorkStatus::kUndetermined);
  // Without the input types the bytes are unknown.
  work("flash_attn::_flash_attn_varlen_forward", "[[4, 8, 32], [400, 2, 32], [400, 2, 32], [5], [5], []]", "",
       {}, WorkStatus::kUndetermined);
}

// A user's own attention operator (a Triton kernel wrapped with torch.library) is known by a namespaced name
// naming attention; its shapes are kept, its work not counted (its layout and mask are not known).
TEST(OpWork, UsersAttentionOperatorsKeepTheirShapes) {
  for (const char* name :
       {"mylab::fused_attention_fwd", "my_ops::FlashAttn", "kernels::mha_forward", "tri::sdpa_causal"}) {
    EXPECT_TRUE(user_attention_operator(name)) << name;
    EXPECT_TRUE(has_work_formula(name)) << name;
  }
  for (const char* name :
       {"mylab::fused_attention_bwd", "mylab::attention_backward", "mylab::attn_grad",
        "aten::scaled_dot_product_attention", "autograd::engine::evaluate_function: AttnBackward",
        "nn.Module: Attention", "attention", "::attention", "mylab::rms_norm",
        "flash_attn::_flash_attn_forward", "aiter::mha_fwd", "vllm::unified_attention",
        "flash_attn::_flash_attn_varlen_forward"}) {
    EXPECT_FALSE(user_attention_operator(name)) << name;
  }
  work("mylab::fused_attention_fwd", "[[2, 8, 96, 32], [2, 2, 96, 32], [2, 2, 96, 32], [], []]", "", {},
       WorkStatus::kUndetermined);
}

// Convolution: 2·N·∏out·numel(W) (fvcore conv_flop_count), out = ⌊(in + 2p − d(k−1) − 1)/s⌋ + 1.
TEST(OpWork, ConvolutionOfResnetOnMi300) {
  // [10, 256, 14, 14] * [512, 256, 3, 3], stride 2, padding 1: out 7×7.
  const OpWork w = work(
      "aten::convolution", "[[10, 256, 14, 14], [512, 256, 3, 3], [], [], [], [], [], [], []]",
      R"(["c10::BFloat16", "c10::BFloat16", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"])",
      R"(["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"])");
  EXPECT_EQ(w.category, WorkCategory::kConv);
  // 2 · 10 · 49 · (512 · 256 · 9) = 1 156 055 040.
  EXPECT_DOUBLE_EQ(w.flops, 1156055040.0);
  // (10·256·196 + 512·256·9 + 10·512·49) · 2 bytes.
  EXPECT_DOUBLE_EQ(w.bytes, (501760.0 + 1179648.0 + 250880.0) * 2);
  // Backward with output_mask [True, True, False]: both gradients, each the forward's FLOPs.
  const OpWork b = work(
      "aten::convolution_backward",
      "[[10, 512, 7, 7], [10, 512, 7, 7], [512, 512, 3, 3], [], [], [], [], [], [], [], []]",
      R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"])",
      R"(["", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"])");
  // one pass: 2 · 10 · 49 · 512 · 512 · 9 = 2 312 110 080; two passes.
  EXPECT_DOUBLE_EQ(b.flops, 2 * 2312110080.0);
  // Without the stride and padding (traces before PyTorch 2.1) the output size is unknown.
  work("aten::cudnn_convolution", "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]",
       R"(["float", "float", "GenericList", "GenericList", "GenericList", "Int", "Bool", "Bool", "Bool"])",
       {}, WorkStatus::kUndetermined);
  // Transposed: [1, 4, 3, 3] with weight [4, 2, 2, 2], stride 2: out (3−1)·2 + (2−1) + 1 = 6; FLOPs
  // 2 · 1 · 9 · numel(W) 32 = 576.
  const OpWork t = work(
      "aten::convolution", "[[1, 4, 3, 3], [4, 2, 2, 2], [], [], [], [], [], [], []]",
      R"(["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"])",
      R"(["", "", "", "[2, 2]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"])");
  EXPECT_DOUBLE_EQ(t.flops, 576.0);
  EXPECT_DOUBLE_EQ(t.bytes, (36.0 + 32 + 1 * 2 * 36) * 4);
}

// Norms: fvcore's 5 (affine) or 4 FLOPs per element; bytes input + output + parameters.
TEST(OpWork, NormsSoftmaxElementwise) {
  OpWork w = work("aten::layer_norm", "[[1024, 512], [], [512], [512], [], []]",
                  R"(["float", "", "float", "float", "Scalar", "Scalar"])");
  EXPECT_EQ(w.category, WorkCategory::kNorm);
  EXPECT_DOUBLE_EQ(w.flops, 5.0 * 1024 * 512);
  EXPECT_DOUBLE_EQ(w.bytes, (2.0 * 1024 * 512 + 512 + 512) * 4);
  // Batch norm in training (argument 5 True): 4 per element.
  w = work("aten::native_batch_norm", "[[10, 64, 56, 56], [64], [64], [64], [64], [], [], []]",
           R"(["c10::BFloat16", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar"])",
           R"(["", "", "", "", "", "True", "0.1", "1e-05"])");
  EXPECT_DOUBLE_EQ(w.flops, 4.0 * 10 * 64 * 56 * 56);
  // Softmax: one read and one write, no FLOPs counted.
  w = work("aten::_softmax", "[[8, 16, 128, 128], [], []]", R"(["c10::BFloat16", "Scalar", "Scalar"])");
  EXPECT_EQ(w.category, WorkCategory::kElementwise);
  EXPECT_DOUBLE_EQ(w.flops, 0.0);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 8 * 16 * 128 * 128 * 2);
  // Broadcast add [1024, 512] + [512]: reads both, writes [1024, 512].
  w = work("aten::add", "[[1024, 512], [512], []]", R"(["float", "float", "Scalar"])");
  EXPECT_DOUBLE_EQ(w.bytes, (1024.0 * 512 + 512 + 1024.0 * 512) * 4);
  // In place: mul_ [4096] by [4096]: reads both, writes the first.
  w = work("aten::mul_", "[[4096], [4096]]", R"(["float", "float"])");
  EXPECT_DOUBLE_EQ(w.bytes, 3.0 * 4096 * 4);
  // copy_ int32 -> int32 [951, 1024] (hta trace_diff): read and write.
  w = work("aten::copy_", "[[951, 1024], [951, 1024], []]", R"(["int", "int", "Scalar"])");
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 951 * 1024 * 4);
  // Embedding of Qwen: 16·559 BF16 rows of 1024 read and written, int64 indices read.
  w = work("aten::embedding", "[[151936, 1024], [16, 559], [], [], []]",
           R"(["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"])");
  EXPECT_EQ(w.category, WorkCategory::kOther);
  EXPECT_DOUBLE_EQ(w.bytes, 8944.0 * 8 + 2 * 8944.0 * 1024 * 2);
}

TEST(OpWork, UnknownOperatorsAndBadShapes) {
  OpWork w;
  EXPECT_FALSE(has_work_formula("aten::view"));
  EXPECT_FALSE(has_work_formula("mm"));  // only aten:: operators
  EXPECT_TRUE(has_work_formula("aten::mm"));
  EXPECT_EQ(op_work("aten::view", {"[[1]]", R"(["float"])", ""}, w), WorkStatus::kNoFormula);
  EXPECT_EQ(op_work("aten::mm", {"[[1, 2], [2", R"(["float"])", ""}, w), WorkStatus::kUnparsable);
  // Element type not recorded: the bytes are not determined.
  EXPECT_EQ(op_work("aten::mm", {"[[1, 2], [2, 3]]", "", ""}, w), WorkStatus::kUndetermined);
}

}  // namespace
}  // namespace meshscope::measure
