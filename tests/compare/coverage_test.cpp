// How much of a step a profile holds (compare::Coverage): the FLOPs its kernels did, from the recorded
// shapes, against the prediction's FLOPs per GPU and step without the output logits.
//
// TraceLens's h100_qwen1.5_0.5b_inference is one whole forward pass of Qwen1.5-0.5B over 16 × 559 tokens;
// tests/data/qwen_first_third.json.gz is the same trace cut by tests/data/cut_trace.py to the CPU operators
// of the first third of its CPU time and the GPU work they launched (a capture that stopped part-way through
// the pass). Qwen1.5-0.5B's published config.json: hidden_size 1024, num_hidden_layers 24, intermediate_size
// 2816 (gated MLP), num_attention_heads 16 (no GQA), vocab_size 151936.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analysis/compare/compare.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;

using test::Result;
using test::run;

const std::string kQwen =
    "--model llama3-8b --layers 24 --hidden 1024 --heads 16 --kv-heads 16 --ffn 2816 --vocab 151936 --seq "
    "559 "
    "--micro-batch 16 --global-batch 16 --gpus 1 --mode inference --hardware h100-sxm";

double number_after(const std::string& text, const std::string& key) {
  const auto at = text.find("\"" + key + "\": ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + key.size() + 4));
}

TEST(Coverage, AWholeForwardPassDoesTheLayersWork) {
  const fs::path trace =
      fs::path(MESHSCOPE_SHARED_DIR) / "traces/tracelens/h100_qwen1.5_0.5b_inference.json.gz";
  const Result r = run("compare --json \"" + trace.string() + "\" " + kQwen);
  ASSERT_EQ(r.status, 0) << r.out;
  // Per token, forward: 24 layers × (2 × (4 × 1024² + 3 × 1024 × 2816) GEMM FLOPs + 2 × 559 × 16 × (64 + 64)
  // attention FLOPs) = 671,514,624; × 8,944 tokens = 6.006 TFLOP.
  EXPECT_NEAR(number_after(r.out, "predicted_tflop_per_gpu_step"), 6.006026797056, 1e-9);
  const double share = number_after(r.out, "share");
  EXPECT_GT(share, 0.9) << r.out;  // measured 0.959: the recorded GEMMs and attention of the pass
  EXPECT_LT(share, 1.1) << r.out;
  EXPECT_NE(r.out.find("\"partial\": false"), std::string::npos);
  const Result text = run("compare \"" + trace.string() + "\" " + kQwen);
  EXPECT_NE(
      text.out.find("* the measured step did 96 % of the predicted step's work (5.76 of 6.01 TFLOP per GPU "
                    "without the logits, from the"),
      std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("holds part of a step"), std::string::npos);
}

// A training step computes the logits of every token, forward and backward. The prediction's work is without
// them, so the measured work is too: tests/data/known_models/h200_gpt_train (train_step.py's model on an
// H200: 8 layers, hidden 1024, ffn 4096, 16 heads, vocabulary 32000, 8 x 512 tokens) spends 0.81 TFLOP a step
// in its output layer, which read as 131 % of the predicted work before it was left out.
TEST(Coverage, ATrainingStepsOutputLayerIsLeftOutLikeThePredictions) {
  const fs::path trace = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data/known_models/h200_gpt_train.json.gz";
  const Result r = run("compare --json \"" + trace.string() + "\"");
  ASSERT_EQ(r.status, 0) << r.out;
  // Per token and layer, forward: 2 x (4 x 1024^2 + 2 x 1024 x 4096) GEMM FLOPs + 2 x 512 x 16 x (64 + 64)
  // attention FLOPs = 27,262,976; x 8 layers x 4,096 tokens x 3 (forward and backward) = 2.680 TFLOP.
  EXPECT_NEAR(number_after(r.out, "predicted_tflop_per_gpu_step"), 2.680059592704, 1e-9);
  const double share = number_after(r.out, "share");
  EXPECT_GT(share, 0.95) << r.out;  // measured 1.013: the layers' GEMMs and attention, plus the optimizer's
  EXPECT_LT(share, 1.05) << r.out;  // few counted operators
}

// The output layer is found by its width; a vocabulary as wide as the layers' GEMMs cannot be told apart, and
// then nothing is left out.
TEST(Coverage, TheOutputLayerIsTheGemmAsWideAsTheVocabulary) {
  measure::ProfileWork work;
  auto gemm = [&](const char* dims) {
    measure::CountedOp op;
    op.name = "aten::mm";
    op.category = measure::WorkCategory::kGemm;
    op.input_dims = dims;
    work.ops.push_back(op);
  };
  gemm("[[4096, 1024], [1024, 4096]]");    // the MLP's up projection
  gemm("[[4096, 1024], [1024, 32000]]");   // the logits
  gemm("[[32000, 4096], [4096, 1024]]");   // their weight's gradient
  gemm("[[4096, 16000], [16000, 1024]]");  // the logits' input gradient on one of 2 TP ranks
  model::ModelSpec model;
  model.hidden = 1024;
  model.ffn = 4096;
  model.heads = 16;
  model.kv_heads = 16;
  model.vocab = 32000;
  model::ParallelConfig config;
  config.tp = 1;
  config.micro_batch = 8;
  config.seq = 512;
  EXPECT_EQ(without_output_layer(work, model, config), (std::vector<bool>{true, false, false, true}));
  config.tp = 2;
  EXPECT_EQ(without_output_layer(work, model, config), (std::vector<bool>{true, false, false, false}));
  config.tp = 1;
  // As wide as the FFN, or as many as a micro-batch's tokens (a weight gradient's [hidden, tokens] operand).
  model.vocab = 4096;
  EXPECT_EQ(without_output_layer(work, model, config), (std::vector<bool>{true, true, true, true}));
  model.vocab = 32000;
  config.micro_batch = 125;
  config.seq = 256;
  EXPECT_EQ(without_output_layer(work, model, config), (std::vector<bool>{true, true, true, true}));
}

TEST(Coverage, ATraceOfPartOfAStepSaysSoBesideTheNumbers) {
  const fs::path trace = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data/qwen_first_third.json.gz";
  const Result r = run("compare --json \"" + trace.string() + "\" " + kQwen);
  ASSERT_EQ(r.status, 0) << r.out;
  const double share = number_after(r.out, "share");
  EXPECT_GT(share, 0.2) << r.out;  // measured 0.283
  EXPECT_LT(share, 0.4) << r.out;
  EXPECT_NE(r.out.find("\"partial\": true"), std::string::npos);
  const Result text = run("compare \"" + trace.string() + "\" " + kQwen);
  EXPECT_NE(text.out.find("* WARNING: the measured step did 28 % of the predicted step's work"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("the profile holds part of a step, so its times are of that"), std::string::npos);
}

TEST(Coverage, AProfileWithoutShapesHasNone) {
  const fs::path trace = fs::path(MESHSCOPE_SHARED_DIR) / "traces/nsys_nccl/mfu_2gpu_after.sqlite";
  const Result r = run("compare --json \"" + trace.string() + "\" --model gpt --hardware a100-40gb");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"coverage\": null"), std::string::npos);
}

}  // namespace
}  // namespace meshscope::compare
