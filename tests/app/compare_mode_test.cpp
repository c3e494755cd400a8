// `compare` predicts what the profile ran: an inference trace (forward passes only) as inference, a training
// trace as a training step, and refuses to compare one with the other.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/app/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

using meshscope::test::CommandRun;

CommandRun meshscope(const std::string& args) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("compare-mode-" + std::to_string(::getpid()));
  fs::create_directories(dir / "cache");
  return meshscope::test::meshscope(args, dir / "cache");
}

// Qwen1.5-0.5B, one forward pass of 16 x 559 tokens on an H100 (TraceLens' test trace).
const fs::path kQwen =
    fs::path(MESHSCOPE_SHARED_DIR) / "traces/tracelens/h100_qwen1.5_0.5b_inference.json.gz";
// ResNet-50 training steps (forward and backward) on a V100 (Kineto's test traces).
const fs::path kResnet = fs::path(MESHSCOPE_SHARED_DIR) / "traces/kineto/resnet50_num_workers_0";

TEST(CompareMode, AnInferenceTraceIsPredictedAsInference) {
  const CommandRun json = meshscope("compare --json '" + kQwen.string() + "'");
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find(R"("mode": "inference")"), std::string::npos) << json.out;
  const CommandRun text = meshscope("compare '" + kQwen.string() + "'");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("recompute=none 1f1b inference;"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("* an inference step: the prediction is of the forward passes alone"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("WARNING"), std::string::npos) << text.out;  // was: compared with a training step
}

TEST(CompareMode, InferenceAndTrainingAreNeverComparedWithEachOther) {
  const CommandRun training = meshscope("compare --mode training '" + kQwen.string() + "'");
  EXPECT_EQ(training.status, 1);
  EXPECT_EQ(training.out, "");
  EXPECT_EQ(
      training.err,
      "meshscope: h100_qwen1.5_0.5b_inference.json.gz: the profile ran inference (forward passes only, no "
      "backward operator recorded), so it is not compared with a training step: leave out --mode or pass "
      "--mode inference\n");
  const CommandRun inference = meshscope("compare --model gpt --mode inference '" + kResnet.string() + "'");
  EXPECT_EQ(inference.status, 1);
  EXPECT_EQ(
      inference.err,
      "meshscope: resnet50_num_workers_0: the profile ran training steps (backward operators recorded), so "
      "it is not compared with inference: leave out --mode or pass --mode training\n");
  const CommandRun bad = meshscope("compare --mode serving '" + kQwen.string() + "'");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "meshscope: --mode serving: use training or inference\n");
}

}  // namespace

namespace {

TEST(CompareMessages, AProfileThatNamesNoGpuSaysSoInOneSentence) {
  // Was: "the profile's GPU is not named has no hardware preset".
  const fs::path recommender = fs::path(MESHSCOPE_SHARED_DIR) / "traces/hta/trace_filter";
  const CommandRun r = meshscope("compare --model gpt '" + recommender.string() + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("* WARNING: the profile names no GPU, so its hardware is unknown: predicting for h100-sxm, "
                 "the default (pass --hardware)\n"),
      std::string::npos)
      << r.out;
}

}  // namespace
