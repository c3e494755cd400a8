// `whatif --pp N` from a profile of one stage (compare::pipeline_stages): the cut of a model over stages
// against the FLOPs of Narayanan et al. 2021, the 1F1B schedule against one worked by hand, and the edit
// against steps really measured on four GPUs: NeuSight's (Lee et al., ASPLOS 2025; tests/data/neusight, MIT
// licence) GPT-2 large and GPT-3 XL pipelined four ways with one micro-batch (Megatron-LM through
// Accelerate), predicted from the one GPU's step. The table goes to
// MESHSCOPE_TEST_OUTPUT/pp_from_one_validation.md and is in docs/WHATIF.md. Nothing here was fitted to these
// steps.
#include "analysis/compare/pipeline_stages.hpp"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/compare/link_edits.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/model/collectives.hpp"
#include "analysis/model/predict.hpp"
#include "analysis/model/presets.hpp"
#include "profiler/error.hpp"
#include "tests/compare/neusight_profile.hpp"
#include "tests/measure/cli_test_util.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Narayanan et al. 2021 (SC '21, §5.1): a layer's forward pass costs 24 B s h² + 4 B s² h FLOPs, the logit
// layer's 2 B s h V. GPT-2 large (h 1280, s 1024, V 50257, 36 layers) on four stages of nine layers: the
// first stage hands on after 9 layers' work, the last stage's backward (the logits' and nine layers')
// first. Its 774,030,080 parameters (Hugging Face's "774M"): the first stage holds the embeddings
// ((50257 + 1024) × 1280) with its nine layers (12 h² + 13 h each), each other stage nine layers.
TEST(PipelineStages, Gpt2LargeIsCutWhereMegatronCutsIt) {
  const StageShares shares = stage_shares(test::gpt2_large(), 1024, 4);
  EXPECT_EQ(shares.layers, (std::vector<int>{9, 9, 9, 9}));
  const double h = 1280, s = 1024, v = 50257;
  const double layer = 24 * h * h + 4 * s * h, logits = 2 * h * v, total = 36 * layer + logits;
  ASSERT_EQ(shares.forward.size(), 3u);
  ASSERT_EQ(shares.backward.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(shares.forward[k], 9 * (k + 1) * layer / total, 1e-3) << k;
    EXPECT_NEAR(shares.backward[k], (logits + 9 * (k + 1) * layer) / total, 1e-3) << k;
  }
  const double per_layer = 12 * h * h + 13 * h, embeddings = (50257 + 1024) * h;
  EXPECT_NEAR(shares.parameters[0], (embeddings + 9 * per_layer) / 774'030'080, 1e-3);
  for (int k = 1; k < 4; ++k) EXPECT_NEAR(shares.parameters[k], 9 * per_layer / 774'030'080, 1e-3) << k;
  EXPECT_THROW(stage_shares(test::gpt2_large(), 1024, 37), Error);
}

// Two stages with half the parameters each, the first ending at CUT of each pass's work (the second's
// backward likewise).
StageShares halves(double cut = 0.5) {
  StageShares shares;
  shares.layers = {1, 1};
  shares.forward = {cut};
  shares.backward = {cut};
  shares.parameters = {0.5, 0.5};
  return shares;
}

// Four micro-batches (gradient accumulation), each a forward pass of 2 ms and a backward of 4 ms on one
// GPU, then 2 ms of the optimizer's work after the last backward; cut in halves over two stages (1 ms
// forward, 2 ms backward each). 1F1B by hand, with h a send: stage 0 runs F0 F1 B0 F2 B1 F3 B2 B3, stage 1 F0
// B0 F1 B1 F2 B2 F3 B3; the last backward of stage 0 ends at 15 ms + 4 h ((m + p - 1)(F + B) with four sends
// on the way, Narayanan et al. 2021 §2.2.1); each stage sends four times; the 2 ms after, half each.
TEST(PipelineStages, OneFOneBAsWorkedByHand) {
  test::ProfileBuilder b("pp_by_hand");
  b.rank(0, 1);
  TimeNs gpu = 1000, call = 0;
  const TimeNs ms = 1'000'000;
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 2; ++j, call += 2, gpu += ms)
      b.launch(0, 1, call, call + 1, 7, gpu, gpu + ms, "sgemm_128x64_nn");
    const TimeNs from = call;
    for (int j = 0; j < 2; ++j, call += 2, gpu += 2 * ms)
      b.launch(0, 2, call, call + 1, 7, gpu, gpu + 2 * ms, "sgemm_128x64_nt");
    b.range(0, 2, RangeKind::kCpuOp, from, call, "autograd::engine::evaluate_function: MmBackward0");
  }
  // The optimizer's: each stage runs it for its half of the parameters.
  b.launch(0, 1, call, call + 1, 7, gpu, gpu + 2 * ms, "vectorized_elementwise_kernel");
  b.range(0, 1, RangeKind::kCpuOp, call, call + 1, "Optimizer.step#SGD.step");
  gpu += 2 * ms;
  b.step(0, 1, 0, call + 2, 1);
  const Profile profile = b.finish();
  const measure::Analysis analysis = measure::analyze(profile);
  measure::ReplayGraph graph(profile, analysis);
  const measure::Replay replay = graph.run({}, true);
  ASSERT_EQ(replay.steps.size(), 1u);
  EXPECT_EQ(replay.steps[0].replayed_ns, gpu);

  const StageShares shares = halves();
  const model::HardwareSpec h100 = model::load_hardware("h100-sxm");
  PipelineRequest request;
  request.pp = 2;
  request.message_bytes = 8e6;
  const Pipelined p = pipeline_stages(profile, analysis, {}, replay, shares, h100, request, "t");
  const double hop_s = model::collective_time(model::Collective::kSendRecv, 8e6, 2,
                                              model::intra_node_link(model::defaults_for(h100)));
  const auto hop = static_cast<TimeNs>(std::llround(hop_s * 1e9));
  ASSERT_GT(hop, 0);
  ASSERT_EQ(p.steps.size(), 2u);
  for (const PipelinedStep& s : p.steps) {
    EXPECT_EQ(s.micro_batches, 4);
    EXPECT_EQ(s.before_ns, 1000) << s.stage;
    EXPECT_EQ(s.after_ns, ms) << s.stage;
    EXPECT_EQ(s.forward_ns, 4 * ms) << s.stage;
    EXPECT_EQ(s.backward_ns, 8 * ms) << s.stage;
    EXPECT_NEAR(s.send_ns, 4 * hop, 4) << s.stage;
    EXPECT_NEAR(s.predicted_ns, 1000 + 15 * ms + 4 * hop + ms, 8) << s.stage;
    EXPECT_NEAR(s.bubble_ns, 3 * ms + 4 * hop, 8) << s.stage;
    EXPECT_EQ(s.rank, s.stage);
  }
  ASSERT_EQ(p.ranks.size(), 2u);
  // Busy: its pieces, the microsecond before, half the work after; exposed: its sends.
  EXPECT_NEAR(p.ranks[1].busy_ns, 12 * ms + ms + 4 * hop, 8);
  EXPECT_NEAR(p.ranks[1].exposed_comm_ns, 4 * hop, 4);

  // Drawn: each stage its half of each pass (the forward's first GEMM and the backward's second on stage 0),
  // half the work after, and its four sends on a stream of their own; stage 1's backward of micro-batch 0
  // right after its forward, at 1 ms + h.
  const Profile drawn = pipelined_profile(measure::replayed_profile(profile, replay), p, shares);
  ASSERT_EQ(drawn.ranks().size(), 2u);
  for (const Rank& r : drawn.ranks()) {
    ASSERT_EQ(r.streams.size(), 2u) << r.rank;
    EXPECT_EQ(r.streams[0].count, 9u) << r.rank;
    EXPECT_EQ(r.streams[1].count, 4u) << r.rank;
    EXPECT_EQ(r.streams[1].name, "pipeline sends (added by the what-if)");
    ASSERT_EQ(r.steps.size(), 1u);
    EXPECT_NEAR(r.steps[0].end_ns - r.steps[0].start_ns, 1000 + 15 * ms + 4 * hop + ms, 8);
    const auto gemms = r.stream_activities(0);
    EXPECT_EQ(gemms.back().duration(), ms) << r.rank;  // the 2 ms after, at half
    for (std::size_t k = 1; k < gemms.size(); ++k) EXPECT_GE(gemms[k].start_ns, gemms[k - 1].end_ns) << k;
  }
  const auto stage1 = drawn.ranks()[1].stream_activities(0);
  EXPECT_NEAR(stage1[0].start_ns, 1000 + ms + hop, 2);
  EXPECT_EQ(drawn.str(stage1[1].name), "sgemm_128x64_nt");
  EXPECT_NEAR(stage1[1].start_ns, 1000 + 2 * ms + hop, 2);
}

// Passes laid out on one stream by hand: "F" a forward of two 1 ms GEMMs, "B" a backward of two 2 ms ones
// (launched from an autograd range), each step a CPU range numbered NUMBER; what the pairing and the cut
// read.
Profile passes_profile(const std::vector<std::string>& steps, std::int64_t number) {
  test::ProfileBuilder b("pp_passes");
  b.rank(0, 1);
  TimeNs gpu = 1000, call = 0;
  const TimeNs ms = 1'000'000;
  for (const std::string& passes : steps) {
    const TimeNs step_start = call;
    for (const char pass : passes) {
      const bool backward = pass == 'B';
      const TimeNs from = call;
      for (int j = 0; j < 2; ++j, call += 2, gpu += (backward ? 2 : 1) * ms)
        b.launch(0, backward ? 2 : 1, call, call + 1, 7, gpu, gpu + (backward ? 2 : 1) * ms,
                 backward ? "sgemm_128x64_nt" : "sgemm_128x64_nn");
      if (backward)
        b.range(0, 2, RangeKind::kCpuOp, from, call, "autograd::engine::evaluate_function: MmBackward0");
    }
    b.step(0, 1, step_start, call, number);
    call = gpu + 1000;  // the next step launches after this one's GPU work
    gpu = call + 1000;
  }
  return b.finish();
}

// A backward with no forward before it is no micro-batch (its time stays before the passes, every stage runs
// it), two steps of one number are each their own, and each cut falls on the kernel boundary nearest the
// share: at 0.53 of a pass of two kernels the cut is after the first (0.5), not the second.
TEST(PipelineStages, PassesArePairedByTimeAndStepsByPosition) {
  const Profile profile = passes_profile({"BFB", "FB"}, 7);
  const measure::Analysis analysis = measure::analyze(profile);
  ASSERT_EQ(analysis.ranks[0].steps.size(), 2u);
  measure::ReplayGraph graph(profile, analysis);
  const measure::Replay replay = graph.run({}, true);
  const StageShares shares = halves(0.53);
  PipelineRequest request;
  request.pp = 2;
  request.message_bytes = 0;
  const Pipelined p =
      pipeline_stages(profile, analysis, {}, replay, shares, model::load_hardware("h100-sxm"), request, "t");
  ASSERT_EQ(p.steps.size(), 4u);
  const TimeNs ms = 1'000'000;
  // First step: the leading backward (4 ms) before the passes; one micro-batch of 1 + 2 ms per stage.
  EXPECT_EQ(p.steps[0].micro_batches, 1);
  EXPECT_NEAR(p.steps[0].before_ns, 4 * ms, 2000);
  EXPECT_EQ(p.steps[0].forward_ns, ms);
  EXPECT_EQ(p.steps[1].backward_ns, 2 * ms);
  // Second step, numbered 7 too: its own window, nothing before its passes but the launch.
  EXPECT_EQ(p.steps[2].step, 7);
  EXPECT_LT(p.steps[2].before_ns, 10'000);
  EXPECT_EQ(p.steps[2].forward_ns, ms);
  EXPECT_THAT(p.notes.front(), HasSubstr("1 pass without its other half"));
}

// --micro-batches 4: one measured micro-batch (a forward of two 1 ms GEMMs, a backward of two 2 ms ones) run
// as four over two stages, its kernels as given (the command re-times them for the smaller micro-batch
// first): the schedule of four micro-batches of 1 + 2 ms per stage, 15 ms plus four sends, and each stage's
// kernels drawn four times.
TEST(PipelineStages, AMicroBatchSplitFillsThePipeline) {
  const Profile profile = passes_profile({"FB"}, 1);
  const measure::Analysis analysis = measure::analyze(profile);
  measure::ReplayGraph graph(profile, analysis);
  const measure::Replay replay = graph.run({}, true);
  const StageShares shares = halves();
  const model::HardwareSpec h100 = model::load_hardware("h100-sxm");
  PipelineRequest request;
  request.pp = 2;
  request.message_bytes = 2e6;
  request.micro_batch_split = 4;
  const Pipelined p = pipeline_stages(profile, analysis, {}, replay, shares, h100, request, "t");
  const auto hop = static_cast<TimeNs>(
      std::llround(model::collective_time(model::Collective::kSendRecv, 2e6, 2,
                                          model::intra_node_link(model::defaults_for(h100))) *
                   1e9));
  const TimeNs ms = 1'000'000;
  ASSERT_EQ(p.steps.size(), 2u);
  for (const PipelinedStep& s : p.steps) {
    EXPECT_EQ(s.micro_batches, 4);
    EXPECT_EQ(s.forward_ns, 4 * ms) << s.stage;
    EXPECT_EQ(s.backward_ns, 8 * ms) << s.stage;
    EXPECT_NEAR(s.predicted_ns - s.before_ns - s.after_ns, 15 * ms + 4 * hop, 8) << s.stage;
  }
  // Busy: each piece four times, and the sends.
  for (const PipelinedRank& r : p.ranks) EXPECT_NEAR(r.busy_ns, 12 * ms + 4 * hop, 8) << r.stage;
  const Profile drawn = pipelined_profile(measure::replayed_profile(profile, replay), p, shares);
  for (const Rank& r : drawn.ranks()) {
    ASSERT_EQ(r.streams.size(), 2u) << r.rank;
    EXPECT_EQ(r.streams[0].count, 8u) << r.rank;  // its forward GEMM and its backward GEMM, four times each
    EXPECT_EQ(r.streams[1].count, 4u) << r.rank;  // its sends
  }
}

struct PipelineCheck {
  std::string file;
  double scale = 1;  // each GPU's batch × this
  double one_gpu_ms = 0, measured_ms = 0, predicted_ms = 0, bubble_ms = 0, send_ms = 0, replayed_ms = 0;
  double error() const { return 100.0 * (predicted_ms - measured_ms) / measured_ms; }
};

// NeuSight's one-GPU step (its batch × SCALE: compare::retime_layout's batch edit) cut over four stages,
// one micro-batch of MICRO_BATCH × SEQ tokens of FP32 activations (Accelerate's mixed_precision "no").
PipelineCheck check_pipeline(const fs::path& path, const model::ModelSpec& model, double scale,
                             double measured_ms) {
  const test::NeuSightStep step = test::read_neusight_step(path);
  const Profile profile = test::step_profile(step, "pp_" + path.stem().string());
  const measure::Analysis analysis = measure::analyze(profile);
  const model::HardwareSpec h100 = model::load_hardware("h100-sxm");
  measure::ReplayEdits edits;
  if (scale != 1) {
    model::ParallelConfig layout;
    layout.tp = layout.dp = layout.pp = layout.cp = 1;
    edits.transfer_factor =
        retime_layout(profile, analysis, layout, LayoutEdit{.batch_scale = scale}, h100, "t").factor;
  }
  measure::ReplayGraph graph(profile, analysis);
  const measure::Replay base = graph.run();
  const measure::Replay replay = graph.run(edits, true);
  PipelineRequest request;
  request.pp = 4;
  const double sequences =
      static_cast<double>(std::stoi(path.stem().string().substr(path.stem().string().rfind('-') + 1)));
  request.message_bytes = sequences * scale * model.seq * model.hidden * 4.0;
  const Pipelined p = pipeline_stages(profile, analysis, edits, replay, stage_shares(model, model.seq, 4),
                                      h100, request, "t");
  PipelineCheck c;
  c.file = path.stem().string();
  c.scale = scale;
  c.one_gpu_ms = step.step_ms;
  c.measured_ms = measured_ms;
  c.replayed_ms = static_cast<double>(replay.steps.at(0).replayed_ns) / 1e6;
  TimeNs predicted = 0;
  for (const PipelinedStep& s : p.steps)
    if (s.predicted_ns > predicted)
      predicted = s.predicted_ns, c.bubble_ms = s.bubble_ns / 1e6, c.send_ms = s.send_ns / 1e6;
  // The measured step × the change the edits make to the replay of it.
  c.predicted_ms =
      step.step_ms * static_cast<double>(predicted) / static_cast<double>(base.steps.at(0).replayed_ns);
  return c;
}

// GPT-3 XL as NeuSight ran it (its DLmodel_configs/gpt3_xl.json: GPT-2's architecture, 24 layers,
// n_embd 3072, 24 heads, 2048 positions, vocabulary 50257).
model::ModelSpec gpt3_xl() {
  model::ModelSpec m = test::gpt2_large();
  m.layers = 24;
  m.hidden = 3072;
  m.heads = m.kv_heads = 24;
  m.ffn = 4 * 3072;
  m.seq = 2048;
  return m;
}

// One H100's steps predict four H100s pipelined with one micro-batch: the same work passed along four
// stages.
TEST(PipelineStages, OneH100PredictsFourPipelineStages) {
  const fs::path dir = test::neusight_dir() / "NVIDIA_H100_80GB_HBM3";
  const test::NeuSightStep batch4 = test::read_neusight_step(dir / "gpt2_large-train-1024-4.tsv");
  ASSERT_GT(batch4.pp4_1_step_ms, 0);
  std::vector<PipelineCheck> checks;
  checks.push_back(
      check_pipeline(dir / "gpt2_large-train-1024-4.tsv", test::gpt2_large(), 1, batch4.pp4_1_step_ms));
  // Four times the batch (NeuSight's gpt2_large-train-1024-16-pp4_1 and gpt3_xl-train-2048-4-pp4_1 labels).
  checks.push_back(
      check_pipeline(dir / "gpt2_large-train-1024-4.tsv", test::gpt2_large(), 4, 2384.0092529296876));
  checks.push_back(check_pipeline(dir / "gpt3_xl-train-2048-1.tsv", gpt3_xl(), 4, 3554.4008544921876));
  std::string table =
      "| one GPU's step | batch | 1 GPU, measured ms | 4 stages, measured ms | predicted ms | error | "
      "bubble ms | sends ms |\n|---|---|---|---|---|---|---|---|\n";
  for (const PipelineCheck& c : checks) {
    // At the measured batch the pipeline alone: within 2 %. At four times the batch the batch edit's error
    // joins it (its kernels scale linearly but for their fixed cost; docs/WHATIF.md): within 10 %.
    EXPECT_LT(std::abs(c.error()), c.scale == 1 ? 2.0 : 10.0) << c.file << " x" << c.scale;
    table +=
        fmt::format("| {} | x{:g} | {:.1f} | {:.1f} | {:.1f} | {:+.1f} % | {:.1f} | {:.2f} |\n", c.file,
                    c.scale, c.one_gpu_ms, c.measured_ms, c.predicted_ms, c.error(), c.bubble_ms, c.send_ms);
  }
  fs::create_directories(MESHSCOPE_TEST_OUTPUT);
  std::ofstream(fs::path(MESHSCOPE_TEST_OUTPUT) / "pp_from_one_validation.md") << table;
}

// On a real trace of one H200 (the project's GPT of 8 layers): --pp 2 cuts its two steps over two stages;
// with --tp 2 each send is half the activations; --pp 16 is refused in one line.
TEST(PipelineStages, WhatifPipelinesAOneGpuTrace) {
  const fs::path dir = fs::path(MESHSCOPE_TEST_TMP) / ("pp-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path trace = fs::path(MESHSCOPE_SOURCE_DIR) / "tests/data/known_models/h200_gpt_train.json.gz";
  const std::string text = test::run_cli_ok("whatif '" + trace.string() + "' --pp 2", dir);
  EXPECT_THAT(text, HasSubstr("edits    pp 2;"));
  EXPECT_THAT(text, HasSubstr("pp 1 -> 2: the layers cut 4, 4 over the stages"));
  EXPECT_THAT(text, HasSubstr("rank   stage step"));
  // One micro-batch per step through both stages in turn; the optimizer's span after the passes halved on
  // each stage is what the steps lose.
  EXPECT_THAT(text, HasSubstr("35.157 ms    32.532 ms    -7.5 %"));
  EXPECT_THAT(text, HasSubstr("39.911 ms    37.554 ms    -5.9 %"));
  const std::string tp = test::run_cli_ok("whatif '" + trace.string() + "' --pp 2 --tp 2", dir);
  EXPECT_THAT(tp, HasSubstr("each send 1/2 of a micro-batch's activations"));
  EXPECT_THAT(tp, HasSubstr("each send between stages 4.19 MB"));
  const std::string json = test::run_cli_ok("whatif '" + trace.string() + "' --pp 2 --json", dir);
  for (const char* key :
       {"\"stages\": 2", "\"stage\": 1", "\"bubble_ns\"", "\"send_ns\"", "\"measured_rank\": 0"})
    EXPECT_THAT(json, HasSubstr(key)) << key;
  // Each of its 8-sequence micro-batches as two of 4: its steps, bound by their CPU thread, launch every
  // kernel twice as often and grow.
  const std::string split = test::run_cli_ok("whatif '" + trace.string() + "' --pp 2 --micro-batches 2", dir);
  EXPECT_THAT(split, HasSubstr("edits    pp 2, micro-batches x2;"));
  EXPECT_THAT(split, HasSubstr("x 0.5 for micro-batches 0.5 the measured one's size, 2 of them per"));
  EXPECT_THAT(split, ::testing::Not(HasSubstr("global batch too")));
  EXPECT_THAT(split, HasSubstr("35.157 ms    48.341 ms   +37.5 %"));
  // With --batch 2 as well, micro-batches of the measured size, twice as many: the kernels as measured.
  const std::string both =
      test::run_cli_ok("whatif '" + trace.string() + "' --pp 2 --micro-batches 2 --batch 2", dir);
  EXPECT_THAT(both, HasSubstr("each rank's batch x 2, so the global batch too"));
  // Micro-batches of 8 sequences split into none, half a sequence, 8/3 of one: refused in one line.
  for (const char* bad : {"--micro-batches 2", "--pp 2 --micro-batches 16",
                          "--pp 2 --micro-batches 8 --batch 0.5", "--pp 2 --micro-batches 3"}) {
    const test::CliResult r = test::run_cli("whatif '" + trace.string() + "' " + bad, dir);
    EXPECT_EQ(r.status, 1) << bad;
    EXPECT_THAT(r.err, HasSubstr("--micro-batches")) << bad;
  }
  const test::CliResult refused = test::run_cli("whatif '" + trace.string() + "' --pp 16", dir);
  EXPECT_EQ(refused.status, 1);
  EXPECT_THAT(refused.err, HasSubstr("--pp 16: the model has 8 layers, so a stage would hold none"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace meshscope::compare
