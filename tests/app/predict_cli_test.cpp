// `meshscope predict | search | plan`: the DESIGN.md contract (JSON keys, exit codes, one-line errors).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace {

struct Result {
  int status = -1;
  std::string out;
};

// Runs the meshscope binary with ARGS; stdout (and stderr when MERGE) captured.
Result run(const std::string& args, bool merge = false) {
  const std::string command = std::string(MESHSCOPE_BINARY) + " " + args + (merge ? " 2>&1" : " 2>/dev/null");
  Result r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

double number(const std::string& json, const std::string& key) {
  const std::regex re("\"" + key + "\": ?(-?[0-9.eE+-]+)");
  std::smatch m;
  if (!std::regex_search(json, m, re)) return -1;
  return std::stod(m[1]);
}

TEST(PredictCli, JsonHasTheDesignKeysAndTheTimesSumToTheStep) {
  const Result r =
      run("predict --json --model llama3-70b --hardware h100-sxm --gpus 512 --tp 8 --pp 4 "
          "--recompute selective --schedule interleaved --virtual-stages 2");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* key : {"\"fits\"",
                          "\"memory_gib\"",
                          "\"params\"",
                          "\"grads\"",
                          "\"optimizer\"",
                          "\"activations\"",
                          "\"other\"",
                          "\"total\"",
                          "\"capacity\"",
                          "\"step_time_s\"",
                          "\"time_s\"",
                          "\"compute\"",
                          "\"recompute\"",
                          "\"tp_exposed\"",
                          "\"cp_exposed\"",
                          "\"ep_exposed\"",
                          "\"pp_p2p_exposed\"",
                          "\"pp_bubble\"",
                          "\"dp_exposed\"",
                          "\"model_tflops_per_gpu\"",
                          "\"hardware_tflops_per_gpu\"",
                          "\"mfu\"",
                          "\"tokens_per_s\"",
                          "\"config\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  const std::string time = r.out.substr(r.out.find("\"time_s\""));
  double sum = 0;
  for (const char* k : {"compute", "recompute", "tp_exposed", "cp_exposed", "ep_exposed", "pp_p2p_exposed",
                        "pp_bubble", "dp_exposed", "optimizer"})
    sum += number(time, k);
  EXPECT_NEAR(sum / number(r.out, "step_time_s"), 1.0, 1e-9);
}

TEST(PredictCli, BadInputExitsOneWithOneLine) {
  const Result r = run("predict --model llama3-8b --gpus 6 --tp 3", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "meshscope: --tp 3 does not divide --heads 32: use a divisor of 32\n");
  EXPECT_EQ(run("predict --model nonexistent --gpus 8").status, 1);
  EXPECT_EQ(run("predict --model llama3-8b --gpus 8 --recompute sometimes").status, 1);
  EXPECT_EQ(run("predict --gpus eight").status, 2);
  EXPECT_EQ(run("plan").status, 2);
}

TEST(PredictCli, NotFittingIsNotAnError) {
  const Result r = run("predict --json --model llama3-405b --hardware a100-80gb --gpus 8");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("\"fits\": false"), std::string::npos);
}

TEST(PredictCli, TimelineIsAChromeTrace) {
  const std::string path = std::string(MESHSCOPE_TEST_TMP) + "/predict_timeline.json";
  ASSERT_EQ(run("predict --model llama3-8b --gpus 32 --pp 4 --global-batch 32 --timeline " + path).status, 0);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_NE(text.str().find("\"ph\":\"X\""), std::string::npos);
  EXPECT_NE(text.str().find("stage 3"), std::string::npos);
}

TEST(PredictCli, ExplainUnevenPipelineAndFramework) {
  // Llama 3 405B: 126 layers on 16 stages (the first and last with 7), Megatron-Core assumptions, FP8.
  const Result r =
      run("predict --json --explain --model llama3-405b --hardware h100-sxm --gpus 8192 --tp 8 --pp 16 "
          "--global-batch 2048 --framework megatron-core --precision fp8");
  ASSERT_EQ(r.status, 0) << r.out;
  const std::regex layers("\"stage_layers\": \\[\\s*7,\\s*8,");
  EXPECT_TRUE(std::regex_search(r.out, layers)) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("\"explain\""), std::string::npos);
  EXPECT_NE(r.out.find("\"part\": \"pp_bubble\""), std::string::npos);
  const Result text = run("predict --explain --model llama3-8b --gpus 18 --pp 3 --tp 2 --global-batch 48");
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("sum of the parts"), std::string::npos);
  const Result bad = run("predict --model llama3-8b --hardware h100-sxm --gpus 8 --precision nvfp4", true);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out, "meshscope: h100-sxm has no FP4 tensor cores: use --precision bf16, fp8 or fp8-block\n");
  EXPECT_EQ(run("predict --model llama3-8b --gpus 8 --framework jax").status, 1);
}

TEST(PredictCli, ContextParallelCommunicationVariant) {
  // Llama 3 405B at 128k tokens with Meta's all-gather context parallelism (Llama Team 2024 §3.3.2).
  const Result r =
      run("predict --json --explain --model llama3-405b --hardware h100-sxm --gpus 16384 --tp 8 --pp 16 "
          "--cp 16 --seq 131072 --global-batch 128 --cp-comm all_gather");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"cp_comm\": \"all-gather\""), std::string::npos);
  EXPECT_NE(r.out.find("K/V all-gather + gradient reduce-scatter (exposed)"), std::string::npos);
  const Result text =
      run("predict --model llama3-405b --hardware h100-sxm --gpus 16384 --tp 8 --pp 16 --cp 16 --seq 131072 "
          "--global-batch 128 --cp-comm all-gather");
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find("cp-comm=all-gather"), std::string::npos);
  const Result bad = run("predict --model llama3-8b --gpus 8 --cp 8 --seq 65536 --cp-comm mesh", true);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out, "meshscope: --cp-comm mesh: use ring (p2p), all-gather or all-to-all (a2a)\n");
}

TEST(PredictCli, CombinedOneFOneBForExpertAllToAlls) {
  const std::string layout =
      "predict --model deepseek-v3 --hardware h100-sxm --gpus 256 --tp 1 --pp 8 --ep 32 --etp 1 "
      "--global-batch "
      "1024 --first-stage-layers 5 --last-stage-layers 8 --moe-a2a-overlap";
  const Result bad = run(layout, true);
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.out,
            "meshscope: --moe-a2a-overlap with --pp 8: Megatron-Core's combined 1F1B needs the interleaved "
            "schedule "
            "(--schedule interleaved --virtual-stages V)\n");
  const Result r = run(layout + " --schedule interleaved --virtual-stages 4 --json --explain");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("\"moe_a2a_overlap\": true"), std::string::npos);
  EXPECT_NE(r.out.find("combined 1F1B instead of overlap_ep"), std::string::npos);
}

TEST(PredictCli, ExplainSplitsDataParallelCollectivesIntoAlphaAndBeta) {
  // ZeRO-1 (distributed optimizer): a gradient reduce-scatter and a weight all-gather, each with its latency
  // (alpha) and bandwidth (beta) part; FSDP: the forward and backward gathers and the reduce-scatter.
  const Result zero1 = run(
      "predict --explain --model llama3-70b --hardware h100-sxm --gpus 64 --tp 4 --pp 4 --global-batch 64 "
      "--zero 1 --overlap-dp 0");
  ASSERT_EQ(zero1.status, 0) << zero1.out;
  for (const char* part : {"[dp_exposed] gradient reduce-scatter", "[dp_exposed] weight all-gather",
                           "alpha part", "beta part", "sum of the parts"})
    EXPECT_NE(zero1.out.find(part), std::string::npos) << part;
  const Result fsdp = run(
      "predict --json --explain --model llama3-8b --hardware h100-sxm --gpus 16 --zero 3 --global-batch 32 "
      "--framework fsdp2");
  ASSERT_EQ(fsdp.status, 0) << fsdp.out;
  for (const char* part :
       {"\"name\": \"FSDP weight all-gather (forward)\"", "\"name\": \"FSDP weight all-gather (backward)\"",
        "\"name\": \"FSDP gradient reduce-scatter\""})
    EXPECT_NE(fsdp.out.find(part), std::string::npos) << part;
}

TEST(PredictCli, OffloadedLayersAndFp8WeightsLowerMemory) {
  // Megatron-Bridge's Llama 3 70B on 64 GB300 (Megatron-FSDP, FP8, 20 layers offloaded, FP8 weights) ran; the
  // same layout without offloading does not fit.
  const std::string layout =
      "predict --json --model llama3-70b --hardware gb300 --gpus 64 --zero 3 --micro-batch 2 --global-batch "
      "256 --precision fp8 --framework megatron-core --state-bytes 16";
  const Result plain = run(layout);
  const Result offloaded = run(layout + " --cpu-offload-layers 20 --fp8-param-gather");
  ASSERT_EQ(plain.status, 0) << plain.out;
  ASSERT_EQ(offloaded.status, 0) << offloaded.out;
  EXPECT_NE(plain.out.find("\"fits\": false"), std::string::npos);
  EXPECT_NE(offloaded.out.find("\"fits\": true"), std::string::npos);
  EXPECT_LT(number(offloaded.out, "activations"), number(plain.out, "activations"));
  EXPECT_LT(number(offloaded.out, "params"), number(plain.out, "params"));
  EXPECT_EQ(run(layout + " --cpu-offload-layers -1").status, 1);
  EXPECT_EQ(run(layout + " --attention cudnn").status, 0);
  EXPECT_EQ(run(layout + " --attention fast").status, 1);
}

TEST(PredictCli, SearchAndPlan) {
  const Result s = run("search --json --model llama3-70b --hardware h100-sxm --gpus 256 --top 3");
  ASSERT_EQ(s.status, 0);
  EXPECT_NE(s.out.find("\"rank\": 3"), std::string::npos);
  EXPECT_EQ(run("search --model llama3-70b").status, 1);
  const Result p = run("plan --json --mtbf-hours 72 --checkpoint-s 300 --params 70");
  ASSERT_EQ(p.status, 0);
  EXPECT_NEAR(number(p.out, "young_interval_s"), 12470, 1);
  EXPECT_NEAR(number(p.out, "tokens"), 1.4e12, 1e6);
}

}  // namespace
