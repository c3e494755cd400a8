// No-window tests of comparing runs in the view: a baseline profile compared in the Summary (the figures
// shown are measure::diff_profiles'), the baseline's rows stacked under each rank of the timeline, the
// critical path overlay (it outlines exactly the events of the step's path from measure::critical_paths) and
// the measured pipeline schedule in the Explorer (one row per stage with its measured bubble). Jobs come from
// the job generator (tools/gen_job), the sample job from assets/sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <tuple>

#include "analysis/compare/link_edits.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/compare/statement.hpp"
#include "analysis/model/presets.hpp"
#include "app/gui/explorer_panel.hpp"
#include "profiler/profile_meta.hpp"
#include "profiler/text_format.hpp"
#include "tests/gui/gui_test_util.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::gui {
namespace {

using test::frame_text;
using test::NullImGui;
using test::options_for;

// A generated job (meshscope_gen_job ARGS --format msdb), once per process and argument list.
std::unique_ptr<LoadedProfile> generated(const std::string& name, const std::string& args) {
  const auto out = test::generated_job(name, args);
  return out.empty() ? nullptr : load_profile(out);
}

std::string duration(TimeNs ns) {
  char t[32];
  duration_text(t, sizeof t, static_cast<double>(ns));
  return t;
}

TEST(GuiCompareRuns, SummaryShowsBothRunsWithTheDiffsFigures) {
  // Two runs of one job: a different seed and one more layer in the second.
  auto a = generated("diff-a", "--ranks 4 --tp 2 --layers 2 --steps 3 --seed 1");
  auto b = generated("diff-b", "--ranks 4 --tp 2 --layers 3 --steps 4 --seed 2");
  ASSERT_TRUE(a && b);
  const measure::Diff expected =
      measure::diff_profiles(*a->profile, a->analysis(), *b->profile, b->analysis());
  NullImGui imgui(1600, 1000);
  View view(options_for(Panel::kSummary));
  view.set_profile(std::move(b));
  view.set_baseline(std::move(a));
  ASSERT_NE(view.baseline_diff(), nullptr);
  const measure::Diff& shown = *view.baseline_diff();
  EXPECT_EQ(shown.step_delta_ns, expected.step_delta_ns);
  EXPECT_EQ(shown.kernels.size(), expected.kernels.size());
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  const std::string text = frame_text(view);
  EXPECT_NE(text.find("COMPARED WITH THE BASELINE"), std::string::npos);
  // The headline, both runs' step means and every class per step, as measure::diff_profiles gives them.
  for (const auto& line : expected.headline) EXPECT_NE(text.find(line.text), std::string::npos) << line.text;
  EXPECT_NE(text.find(duration(expected.a.step_ns)), std::string::npos);
  EXPECT_NE(text.find(duration(expected.b.step_ns)), std::string::npos);
  const auto table = text.find("step (GPU span)");
  ASSERT_NE(table, std::string::npos);
  for (const auto& c : expected.classes) {
    if (c.name == "step") continue;
    const auto at = text.find(c.name, table);
    ASSERT_NE(at, std::string::npos) << c.name;
    // A and B follow the class name on its row.
    const auto a_at = text.find(duration(c.a_step_ns), at);
    ASSERT_NE(a_at, std::string::npos) << c.name;
    EXPECT_NE(text.find(duration(c.b_step_ns), a_at), std::string::npos) << c.name;
  }
  // The kernel with the largest change is the first row, with both counts.
  ASSERT_FALSE(expected.kernels.empty());
  const auto& top = expected.kernels.front();
  const auto row = text.find(std::string(top.name.substr(0, 30)));
  ASSERT_NE(row, std::string::npos) << top.name;
  EXPECT_NE(text.find(std::to_string(top.a_count), row), std::string::npos);
  EXPECT_NE(text.find(std::to_string(top.b_count), row), std::string::npos);
}

// A baseline of other ranks (rank 3 of one job against ranks 0-1 of another) is stacked in order, and the
// toolbar says so; with the same rank numbers nothing is said.
TEST(GuiCompareRuns, ABaselineOfOtherRanksIsPairedInOrderAndSaysSo) {
  auto job = [](const std::string& name, std::vector<std::int32_t> ranks) {
    meshscope::test::ProfileBuilder b(name);
    for (std::int32_t r : ranks) {
      b.rank(r, 8);
      b.step(r, 1, 0, 1000, 1);
      b.launch(r, 1, 10, 20, 7, 100, 900, "gemm");
    }
    (void)b.finish();  // committed
    return load_profile(b.path());
  };
  const Profile mine = [&] {
    meshscope::test::ProfileBuilder b("pair-mine-probe");
    b.rank(3, 8);
    b.launch(3, 1, 10, 20, 7, 100, 900, "gemm");
    return b.finish();
  }();
  auto other = job("pair-other", {0, 1});
  const BaselinePairing pairing = baseline_pairing(mine, *other->profile);
  EXPECT_TRUE(pairing.in_order);
  ASSERT_EQ(pairing.base_of.size(), 1u);
  EXPECT_EQ(pairing.base_of[0], 0);
  EXPECT_FALSE(baseline_pairing(*other->profile, *other->profile).in_order);

  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kTimeline));
  view.set_profile(job("pair-3", {3}));
  view.set_baseline(std::move(other));
  view.set_baseline_stacked(true);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  simdjson::dom::parser parser;
  const std::string json = view.state_json();
  std::size_t baseline_rows = 0;
  for (auto row : parser.parse(json)["timeline"]["rows"].get_array())
    baseline_rows += std::string_view(row["kind"]).substr(0, 8) == "baseline";
  EXPECT_GT(baseline_rows, 0u) << "rank 3 has rank 0 of the baseline under it";
  const std::string text = frame_text(view);
  EXPECT_NE(text.find("no rank in common: the baseline's 2 rank(s) 0-1 paired in order"), std::string::npos)
      << text;
}

TEST(GuiCompareRuns, StackedBaselineRowsSitUnderEachRanksOwn) {
  auto a = generated("diff-a", "--ranks 4 --tp 2 --layers 2 --steps 3 --seed 1");
  auto b = generated("diff-b", "--ranks 4 --tp 2 --layers 3 --steps 4 --seed 2");
  ASSERT_TRUE(a && b);
  std::size_t base_streams = 0;
  for (const Rank& r : a->profile->ranks()) base_streams += r.streams.size();
  NullImGui imgui(1600, 4000);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(b));
  view.set_baseline(std::move(a));
  view.set_all_ranks_open(true);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  simdjson::dom::parser parser;
  std::string json = view.state_json();
  auto rows = parser.parse(json)["timeline"]["rows"].get_array();
  for (auto row : rows) EXPECT_EQ(std::string_view(row["kind"]).substr(0, 8) == "baseline", false);
  view.set_baseline_stacked(true);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  json = view.state_json();
  rows = parser.parse(json)["timeline"]["rows"].get_array();
  std::size_t streams = 0, steps = 0;
  std::int64_t rank = -1;
  bool own_gpu_seen = false;
  double last_y = -1;
  for (auto row : rows) {
    const std::string_view kind = row["kind"];
    const std::int64_t r = row["rank"];
    const double y = row["y"];
    EXPECT_GT(y, last_y) << "rows are laid out top to bottom";
    last_y = y;
    if (r != rank) rank = r, own_gpu_seen = false;
    if (kind == "gpu_stream") {
      own_gpu_seen = true;
      continue;
    }
    if (kind == "baseline_stream" || kind == "baseline_steps") {
      EXPECT_TRUE(own_gpu_seen) << "rank " << r << ": the baseline's rows come after the rank's own streams";
      EXPECT_EQ(std::string_view(row["label"]).substr(0, 9), "baseline ");
      (kind == "baseline_stream" ? streams : steps) += 1;
    }
  }
  EXPECT_EQ(streams, base_streams);
  EXPECT_EQ(steps, 4u) << "one baseline steps row per rank";
}

// What-if: the open profile replayed with edits becomes the baseline, its rows ("what-if ...") stacked under
// each rank, its steps those of measure::replay with the same edits.
TEST(GuiCompareRuns, WhatIfRowsAreTheReplayUnderEachRank) {
  auto b = generated("diff-b", "--ranks 4 --tp 2 --layers 3 --steps 4 --seed 2");
  ASSERT_TRUE(b);
  compare::WhatifRequest request;
  std::string error;
  ASSERT_TRUE(compare::parse_whatif_line("gemm=0.5 comm=2", request, error)) << error;
  measure::ReplayEdits edits;
  edits.scales = request.scales;
  const measure::Replay expected = measure::replay(*b->profile, b->analysis(), edits);
  NullImGui imgui(1600, 4000);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(b));
  view.set_all_ranks_open(true);
  view.request_whatif(request, "gemm=0.5 comm=2");
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  ASSERT_NE(view.baseline(), nullptr);
  EXPECT_EQ(view.baseline()->baseline_name, "what-if");
  EXPECT_EQ(view.baseline()->whatif_edits, "gemm=0.5 comm=2");
  ASSERT_EQ(view.baseline()->whatif_steps.size(), expected.steps.size());
  for (std::size_t i = 0; i < expected.steps.size(); ++i)
    EXPECT_EQ(view.baseline()->whatif_steps[i].replayed_ns, expected.steps[i].replayed_ns);
  EXPECT_TRUE(view.baseline_stacked());
  simdjson::dom::parser parser;
  const std::string json = view.state_json();
  std::size_t steps = 0;
  for (auto row : parser.parse(json)["timeline"]["rows"].get_array()) {
    const std::string_view kind = row["kind"];
    if (kind != "baseline_stream" && kind != "baseline_steps") continue;
    EXPECT_EQ(std::string_view(row["label"]).substr(0, 8), "what-if ");
    steps += kind == "baseline_steps";
  }
  EXPECT_EQ(steps, 4u) << "one what-if steps row per rank";
}

// VIEW on the H200 GPT trace this project recorded (one GPU), three frames drawn.
void open_h200(NullImGui& imgui, View& view) {
  const auto msdb = test::imported(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                   "tests/data/known_models/h200_gpt_train.json.gz");
  ASSERT_FALSE(msdb.empty());
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
}

// The timeline of the H200 GPT trace this project recorded (one GPU) with the What-if line LINE replayed
// under its rank, every rank open.
void open_whatif_of_h200(NullImGui& imgui, View& view, const std::string& line) {
  compare::WhatifRequest request;
  std::string error;
  ASSERT_TRUE(compare::parse_whatif_line(line, request, error)) << error;
  open_h200(imgui, view);
  if (::testing::Test::HasFatalFailure()) return;
  view.set_all_ranks_open(true);
  view.request_whatif(request, line);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  ASSERT_NE(view.baseline(), nullptr) << view.baseline_error();
}

// `--dp 8` on a run measured on one GPU: the what-if rows hold DDP's work the replay added, the all-reduces
// on a stream of their own under the rank and the bucket copies on the backward's stream.
TEST(GuiCompareRuns, WhatIfRowsDrawTheWorkAnEditAdds) {
  NullImGui imgui(1600, 2000);
  View view(options_for(Panel::kTimeline));
  open_whatif_of_h200(imgui, view, "--dp 8");
  if (HasFatalFailure()) return;
  const Profile& whatif = *view.baseline()->profile;
  const Rank& rank = whatif.ranks().at(0);
  std::size_t all_reduces = 0, copies = 0;
  for (const GpuStream& s : rank.streams)
    for (const Activity& a : rank.stream_activities(static_cast<std::size_t>(&s - rank.streams.data()))) {
      const std::string& name = whatif.str(a.name);
      if (name.starts_with("ncclDevKernel_AllReduce_Sum (added: dp 8")) {
        ++all_reduces;
        EXPECT_EQ(s.name, "added by the what-if");
      }
      copies += name.starts_with("DDP: ");
    }
  EXPECT_EQ(all_reduces, 28u);  // 14 buckets in each of two steps
  EXPECT_EQ(copies, 112u);      // a scaling copy per gradient (42), a copy back per bucket, in each step
  EXPECT_EQ(rank.collectives.size(), 28u);
  simdjson::dom::parser parser;
  std::size_t added_rows = 0;
  for (auto row : parser.parse(view.state_json())["timeline"]["rows"].get_array())
    added_rows += std::string_view(row["label"]).find("added by the") != std::string_view::npos;
  EXPECT_EQ(added_rows, 1u);
}

// "--pp 2" draws the H200 trace's rank as two pipeline stages, each under rank 0: its steps (labelled with
// their change), its stream with its half of each pass, and its sends.
TEST(GuiCompareRuns, WhatIfRowsDrawEachPipelineStage) {
  NullImGui imgui(1600, 2000);
  View view(options_for(Panel::kTimeline));
  open_whatif_of_h200(imgui, view, "--pp 2");
  if (HasFatalFailure()) return;
  std::size_t kernels = 0;
  for (const Activity& a : view.loaded()->profile->ranks().at(0).activities)
    kernels += a.kind == ActivityKind::kKernel;
  EXPECT_EQ(view.baseline()->pipeline_world, 1);
  const Profile& whatif = *view.baseline()->profile;
  ASSERT_EQ(whatif.ranks().size(), 2u);
  std::size_t drawn = 0;
  for (const Rank& r : whatif.ranks()) {
    EXPECT_EQ(r.steps.size(), 2u) << r.rank;
    ASSERT_NE(view.baseline()->whatif_step(r.rank, r.steps.front().number), nullptr) << r.rank;
    for (const GpuStream& s : r.streams)
      if (s.name != "pipeline sends (added by the what-if)") drawn += s.count;
  }
  // Every kernel on one stage or the other, the work after the passes (the optimizer's) on both.
  EXPECT_GT(drawn, kernels);
  simdjson::dom::parser parser;
  std::size_t stage_rows = 0, send_rows = 0;
  for (auto row : parser.parse(view.state_json())["timeline"]["rows"].get_array()) {
    const std::string_view label(row["label"]);
    stage_rows += label.find("what-if steps (rank 1, stage 1)") != std::string_view::npos;
    send_rows += label.find("pipeline sends") != std::string_view::npos;
  }
  EXPECT_EQ(stage_rows, 1u);
  EXPECT_EQ(send_rows, 2u);
}

// "--dp 2 --pp 2 --micro-batches 2": DDP's all-reduces, once per step, are drawn as often as without the
// split although the backward pieces they start in run twice.
std::size_t drawn_all_reduces(const std::string& line) {
  NullImGui imgui(1600, 2000);
  View view(options_for(Panel::kTimeline));
  open_whatif_of_h200(imgui, view, line);
  if (!view.baseline()) return 0;
  const Profile& whatif = *view.baseline()->profile;
  EXPECT_EQ(whatif.ranks().size(), 2u);
  std::size_t all_reduces = 0;
  for (const Rank& r : whatif.ranks())
    for (const Activity& a : r.activities)
      all_reduces += whatif.str(a.name).starts_with("ncclDevKernel_AllReduce_Sum (added: dp 2");
  return all_reduces;
}

TEST(GuiCompareRuns, WhatIfRowsDrawTheGradientsOncePerStep) {
  const std::size_t whole = drawn_all_reduces("--dp 2 --pp 2");
  EXPECT_GE(whole, 28u);  // 14 buckets in each of two steps, those after the passes on both stages
  EXPECT_EQ(drawn_all_reduces("--dp 2 --pp 2 --micro-batches 2"), whole);
}

// With the critical path shown, the what-if rows carry the edited run's own path: every activity they outline
// is on a step path of the replayed profile (LoadedProfile::critical of the what-if).
TEST(GuiCompareRuns, WhatIfRowsShowTheEditedRunsCriticalPath) {
  auto b = generated("diff-b", "--ranks 4 --tp 2 --layers 3 --steps 4 --seed 2");
  ASSERT_TRUE(b);
  compare::WhatifRequest edits;
  std::string error;
  ASSERT_TRUE(compare::parse_whatif_line("gemm=0.25", edits, error)) << error;
  NullImGui imgui(1600, 4000);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(b));
  view.set_all_ranks_open(true);
  view.set_critical_path_shown(true);
  view.request_whatif(edits, "gemm=0.25");
  for (int i = 0; i < 4; ++i) imgui.frame(view);
  ASSERT_NE(view.baseline(), nullptr);
  const auto& outlined = view.critical_path_baseline_events();
  ASSERT_FALSE(outlined.empty());
  const LoadedProfile& whatif = *view.baseline();
  for (const auto& [rank, activity] : outlined) {
    bool on_path = false;
    for (const auto& step : whatif.critical.ranks.at(static_cast<std::size_t>(rank)).steps)
      for (const auto& seg : step.segments)
        on_path |= seg.ref == measure::PathSegment::Ref::kActivity && seg.index == activity;
    EXPECT_TRUE(on_path) << "rank " << rank << " activity " << activity;
  }
  // A step selected on rank 1: the what-if rows show that step's path alone, under rank 1 only.
  const Profile& measured = *view.loaded()->profile;
  const std::int64_t number = measured.ranks()[1].steps[1].number;
  view.select_event({EventKind::kStep, 1, 1});
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  ASSERT_FALSE(view.critical_path_baseline_events().empty());
  const std::int32_t base_rank =
      static_cast<std::int32_t>(whatif.profile->rank_index(measured.ranks()[1].rank));
  for (const auto& [rank, activity] : view.critical_path_baseline_events()) {
    EXPECT_EQ(rank, base_rank);
    bool in_step = false;
    for (const auto& step : whatif.critical.ranks.at(static_cast<std::size_t>(rank)).steps) {
      if (step.step != number) continue;
      for (const auto& seg : step.segments)
        in_step |= seg.ref == measure::PathSegment::Ref::kActivity && seg.index == activity;
    }
    EXPECT_TRUE(in_step) << "activity " << activity << " is not on step " << number << "'s path";
  }
  // Off again: nothing is drawn on the what-if rows.
  view.set_critical_path_shown(false);
  imgui.frame(view);
  EXPECT_TRUE(view.critical_path_baseline_events().empty());
}

// The mean replayed step of JOB with the layout edit EDIT from the layout it ran (what the Explorer shows).
double replayed_mean_ns(const LoadedProfile& job, const compare::LayoutEdit& edit) {
  measure::ReplayEdits edits;
  edits.transfer_factor =
      compare::retime_layout(*job.profile, job.analysis(), compare::inferred_layout(job.measured->workload),
                             edit, compare::hardware_spec(job.measured->workload), "job")
          .factor;
  measure::ReplayGraph graph(*job.profile, job.analysis());
  const measure::Replay r = graph.run(edits);
  double sum = 0;
  for (const auto& s : r.steps) sum += static_cast<double>(s.replayed_ns);
  return sum / static_cast<double>(r.steps.size());
}

// VIEW opened on JOB, at the run's own layout (nothing to replay), then at tp 4 on the same 8 GPUs (dp 2):
// the Explorer's replay.
const ExplorerReplay& explorer_replay_at_tp4(View& view, NullImGui& imgui,
                                             std::unique_ptr<LoadedProfile> job) {
  view.set_profile(std::move(job));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_FALSE(view.explorer_replay_shown().done) << "nothing to replay at the run's own layout";
  view.set_layout(8, 4, 1);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  return view.explorer_replay_shown();
}

// The Explorer's TP control on a profile whose layout its process groups show (8 ranks, tp 2 × dp 4; no
// shapes, so no model is inferred and the prediction is of the model chosen) replays the measured run at the
// new layout: tp 4 on the same 8 GPUs is `whatif --tp 4 --dp 2`, and the Explorer's replayed step is that
// replay's mean step. A layout that changes more than TP and DP (pp 2) is not replayed.
TEST(GuiCompareRuns, ExplorerTensorParallelControlReplaysTheMeasuredRun) {
  auto job = generated("explorer-replay", "--ranks 8 --tp 2 --layers 4 --steps 3 --seed 3");
  ASSERT_TRUE(job);
  const auto layout = compare::inferred_layout(job->measured->workload);
  ASSERT_EQ(layout.tp, 2);
  ASSERT_EQ(layout.dp, 4);
  const double measured = replayed_mean_ns(*job, {}), edited = replayed_mean_ns(*job, {.tp = 4, .dp = 2});
  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kExplorer));
  const ExplorerReplay& r = explorer_replay_at_tp4(view, imgui, std::move(job));
  ASSERT_TRUE(r.done) << r.error;
  EXPECT_EQ(r.ran_tp, 2);
  EXPECT_EQ(r.tp, 4);
  EXPECT_EQ(r.ran_dp, 4);
  EXPECT_EQ(r.dp, 2);
  EXPECT_DOUBLE_EQ(r.measured_ns, measured);
  EXPECT_DOUBLE_EQ(r.edited_ns, edited);
  EXPECT_NE(r.edited_ns, r.measured_ns);
  view.set_layout(8, 2, 2);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  EXPECT_FALSE(view.explorer_replay_shown().done);
}

// With the run's model, GPU and global batch stated (what `annotate` stores: gpt on h100-sxm, 16 sequences
// per step over the job's dp 4, four per rank), the Explorer knows each rank's share of the batch: tp 4 on
// the same 8 GPUs leaves dp 2, so each rank runs 16 / 2 = 8 sequences, twice what it ran, and the replay is
// `whatif --tp 4 --dp 2 --batch 2`, not the weak scaling of `--tp 4 --dp 2` alone.
TEST(GuiCompareRuns, ExplorerReplayKeepsTheGlobalBatchTheModelKeeps) {
  const auto path = test::generated_job("explorer-batch", "--ranks 8 --tp 2 --layers 4 --steps 3 --seed 4");
  ASSERT_FALSE(path.empty());
  compare::Statement statement;
  statement.model = model::load_model("gpt");
  statement.hardware = model::load_hardware("h100-sxm");
  statement.layout = compare::parse_layout("tp=2,dp=4,micro_batch=4,global_batch=16");
  update_meta(path, compare::meta_changes(statement));
  auto job = load_profile(path);
  ASSERT_TRUE(job);
  const double doubled = replayed_mean_ns(*job, {.tp = 4, .dp = 2, .batch_scale = 2}),
               weak = replayed_mean_ns(*job, {.tp = 4, .dp = 2});
  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kExplorer));
  const ExplorerReplay& r = explorer_replay_at_tp4(view, imgui, std::move(job));
  ASSERT_TRUE(r.done) << r.error;
  EXPECT_EQ(r.dp, 2);
  EXPECT_DOUBLE_EQ(r.batch_scale, 2.0);
  EXPECT_DOUBLE_EQ(r.edited_ns, doubled);
  EXPECT_NE(r.edited_ns, weak);
}

// The Explorer on a run measured on one GPU (the H200 GPT step, dp 1, 8 sequences): 8 GPUs at tp 1 and a
// global batch of 64 replays it as eight DDP replicas, each rank's batch as measured, the edit adding DDP's
// work as `whatif --dp 8` does (compare::whatif_edits).
TEST(GuiCompareRuns, ExplorerReplaysOneGpuAsDataParallelReplicas) {
  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kExplorer));
  open_h200(imgui, view);
  if (HasFatalFailure()) return;
  view.set_layout(8, 1, 1);
  view.set_global_batch(64);  // each replica's 8 sequences, as measured
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  const ExplorerReplay& r = view.explorer_replay_shown();
  ASSERT_TRUE(r.done) << r.error;
  EXPECT_EQ(r.ran_dp, 1);
  EXPECT_EQ(r.dp, 8);
  EXPECT_GT(r.edited_ns, 0);
  EXPECT_THAT(::testing::PrintToString(r.notes),
              ::testing::HasSubstr("dp 1 -> 8: the gradients' all-reduces"));
}

// The Explorer's PP drives the replay from one stage too: the H200 trace on two GPUs at PP 2, each step's
// passes cut over two stages and scheduled as `whatif --pp 2` schedules them (compare::pipeline_stages).
TEST(GuiCompareRuns, ExplorerReplaysOneGpuAsPipelineStages) {
  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kExplorer));
  open_h200(imgui, view);
  if (HasFatalFailure()) return;
  view.set_layout(2, 1, 2);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  const ExplorerReplay& r = view.explorer_replay_shown();
  ASSERT_TRUE(r.done) << r.error;
  EXPECT_EQ(r.ran_pp, 1);
  EXPECT_EQ(r.pp, 2);
  EXPECT_EQ(r.dp, 1);
  EXPECT_GT(r.edited_ns, 0);
  EXPECT_THAT(::testing::PrintToString(r.notes), ::testing::HasSubstr("pp 1 -> 2: the layers cut 4, 4"));
  EXPECT_EQ(r.micro_batch_split, 1);
  const double one_micro_batch_ns = r.edited_ns;
  // A micro-batch of 2 sequences (the trace ran 8): each measured micro-batch as four, as `whatif --pp 2
  // --micro-batches 4` runs it.
  view.set_micro_batch(2);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  const ExplorerReplay& split = view.explorer_replay_shown();
  ASSERT_TRUE(split.done) << split.error;
  EXPECT_EQ(split.micro_batch_split, 4);
  EXPECT_GT(split.edited_ns,
            one_micro_batch_ns);  // its steps bound by their CPU thread: four times the launches
  // Twice the global batch (16 sequences, each rank's batch x 2) in micro-batches of 2: each measured
  // micro-batch of 8 runs as 8 of 2 (`--batch 2 --micro-batches 8`).
  view.set_global_batch(16);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  const ExplorerReplay& doubled = view.explorer_replay_shown();
  ASSERT_TRUE(doubled.done) << doubled.error;
  EXPECT_DOUBLE_EQ(doubled.batch_scale, 2.0);
  EXPECT_EQ(doubled.micro_batch_split, 8);
}

// The What-if line takes `whatif`'s layout flags: "--tp 4 --dp 2 --keep-global-batch" replays the run as
// `whatif
// --tp 4 --dp 2 --keep-global-batch` does (compare::retime_layout; the job's dp 4 over 2 replicas: each
// rank's batch x 2); a degree the profile cannot show is the baseline's one-line error.
TEST(GuiCompareRuns, WhatIfLineTakesTheLayoutFlagsOfWhatif) {
  auto job = generated("whatif-layout", "--ranks 8 --tp 2 --layers 4 --steps 3 --seed 3");
  ASSERT_TRUE(job);
  measure::ReplayEdits edits;
  edits.transfer_factor = compare::retime_layout(*job->profile, job->analysis(),
                                                 compare::inferred_layout(job->measured->workload),
                                                 compare::LayoutEdit{.tp = 4, .dp = 2, .batch_scale = 2},
                                                 compare::hardware_spec(job->measured->workload), "job")
                              .factor;
  const measure::Replay expected = measure::replay(*job->profile, job->analysis(), edits);
  compare::WhatifRequest request;
  std::string error;
  ASSERT_TRUE(compare::parse_whatif_line("--tp 4 --dp=2 --keep-global-batch", request, error)) << error;
  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(job));
  view.request_whatif(request, "--tp 4 --dp=2 --keep-global-batch");
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  ASSERT_NE(view.baseline(), nullptr) << view.baseline_error();
  EXPECT_EQ(view.baseline()->whatif_edits, "--tp 4 --dp=2 --keep-global-batch");
  ASSERT_EQ(view.baseline()->whatif_steps.size(), expected.steps.size());
  for (std::size_t i = 0; i < expected.steps.size(); ++i)
    EXPECT_EQ(view.baseline()->whatif_steps[i].replayed_ns, expected.steps[i].replayed_ns);

  // One rank: no tensor-parallel group to re-time (its degree unknown, or 1), said in one line.
  auto single = generated("whatif-layout-single", "--ranks 1 --layers 2 --steps 2 --seed 1");
  ASSERT_TRUE(single);
  View alone(options_for(Panel::kTimeline));
  alone.set_profile(std::move(single));
  ASSERT_TRUE(compare::parse_whatif_line("--tp 4", request, error)) << error;
  alone.request_whatif(request, "--tp 4");
  for (int i = 0; i < 3; ++i) imgui.frame(alone);
  EXPECT_EQ(alone.baseline(), nullptr);
  EXPECT_THAT(alone.baseline_error(), ::testing::HasSubstr("what-if: "));
  EXPECT_THAT(alone.baseline_error(), ::testing::HasSubstr("--tp"));
}

// With nothing selected and the whole profile in view, the overlay covers every step's path of the open ranks
// (the bound on what one frame draws counts merged bands, not segments): ResNet-50 recorded with the PyTorch
// profiler, 6 steps.
TEST(GuiCompareRuns, CriticalPathOverlayCoversEveryStepAtFullZoom) {
  const auto msdb = test::imported(test::shared_trace("kineto/resnet50_num_workers_0"));
  ASSERT_FALSE(msdb.empty());
  auto loaded = load_profile(msdb);
  ASSERT_TRUE(loaded);
  const auto& paths = loaded->critical.ranks.at(0);
  ASSERT_GE(paths.steps.size(), 6u);
  std::size_t segments = 0;
  for (const auto& s : paths.steps) segments += s.segments.size();
  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(loaded));
  view.set_critical_path_shown(true);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  std::set<std::tuple<int, std::uint32_t>> drawn;
  for (const EventRef& e : view.critical_path_events()) drawn.insert({static_cast<int>(e.kind), e.index});
  const auto& steps = view.loaded()->critical.ranks.at(0).steps;
  for (const auto& s : steps) {
    // The last segment of the step that names an event is among those drawn.
    const measure::PathSegment* last = nullptr;
    for (const auto& seg : s.segments) {
      if (seg.ref != measure::PathSegment::Ref::kNone) last = &seg;
    }
    if (!last) continue;  // a step whose path names no event
    const EventKind kind = last->ref == measure::PathSegment::Ref::kActivity  ? EventKind::kActivity
                           : last->ref == measure::PathSegment::Ref::kApiCall ? EventKind::kApiCall
                                                                              : EventKind::kRange;
    EXPECT_TRUE(drawn.count({static_cast<int>(kind), last->index}))
        << "step " << s.step << " of " << steps.size() << " (" << segments << " segments in all)";
  }
}

TEST(GuiCompareRuns, CriticalPathOverlayOutlinesExactlyTheStepsPath) {
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  auto loaded = load_profile(msdb);
  const Rank& rank = loaded->profile->ranks()[0];
  ASSERT_GE(rank.steps.size(), 2u);
  const std::uint32_t k = 1;
  const auto& paths = loaded->critical.ranks[0];
  const measure::StepPath* path = nullptr;
  for (const auto& s : paths.steps) {
    if (s.step == rank.steps[k].number) path = &s;
  }
  ASSERT_NE(path, nullptr);
  std::set<std::tuple<int, std::int32_t, std::uint32_t>> expected;
  for (const auto& seg : path->segments) {
    switch (seg.ref) {
      case measure::PathSegment::Ref::kActivity:
        expected.insert({static_cast<int>(EventKind::kActivity), 0, seg.index});
        break;
      case measure::PathSegment::Ref::kApiCall:
        expected.insert({static_cast<int>(EventKind::kApiCall), 0, seg.index});
        break;
      case measure::PathSegment::Ref::kRange:
        expected.insert({static_cast<int>(EventKind::kRange), 0, seg.index});
        break;
      case measure::PathSegment::Ref::kNone:
        break;
    }
  }
  ASSERT_GT(expected.size(), 3u);
  NullImGui imgui(1600, 1200);
  View view(options_for(Panel::kTimeline));
  view.set_profile(std::move(loaded));
  imgui.frame(view);
  view.set_time_range(path->start_ns - 1000, path->end_ns + 1000);
  view.select_event({EventKind::kStep, 0, k});
  imgui.frame(view);
  EXPECT_TRUE(view.critical_path_events().empty()) << "the overlay is off until asked for";
  view.set_critical_path_shown(true);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  std::set<std::tuple<int, std::int32_t, std::uint32_t>> drawn;
  for (const EventRef& e : view.critical_path_events())
    drawn.insert({static_cast<int>(e.kind), e.rank_index, e.index});
  EXPECT_EQ(drawn, expected);
  // The step's details give the path's length by kind.
  const std::string text = frame_text(view);
  EXPECT_NE(text.find("CRITICAL PATH " + duration(path->length_ns())), std::string::npos);
  for (int kind = 0; kind < measure::kPathKindCount; ++kind) {
    if (path->by_kind[static_cast<std::size_t>(kind)] > 0) {
      EXPECT_NE(text.find(measure::to_string(static_cast<measure::PathKind>(kind))), std::string::npos);
    }
  }
}

TEST(GuiCompareRuns, MeasuredPipelineHasOneRowPerStageWithItsBubble) {
  auto loaded = generated("pp4", "--ranks 4 --tp 1 --pp 4 --micro-batches 8 --layers 4 --steps 2 --seed 3");
  ASSERT_TRUE(loaded);
  ASSERT_TRUE(loaded->pipeline.found);
  const measure::PipelineGroup group = loaded->pipeline.groups.front();
  ASSERT_EQ(group.stages.size(), 4u);
  NullImGui imgui(1600, 1400);
  View view(options_for(Panel::kExplorer));
  view.set_profile(std::move(loaded));
  view.configure_explorer("gpt", 4, 4096, 32, 4096, 4, 1, 8);
  view.set_layout(4, 1, 4);
  for (int i = 0; i < 4; ++i) imgui.frame(view);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  const auto& rows = view.measured_pipeline_rows();
  ASSERT_EQ(rows.size(), group.stages.size());
  for (std::size_t s = 0; s < rows.size(); ++s) {
    const auto& stage = group.stages[s];
    EXPECT_EQ(rows[s].stage, stage.stage);
    EXPECT_EQ(rows[s].rank, stage.rank);
    EXPECT_EQ(rows[s].step, group.steps.front().step);
    EXPECT_EQ(rows[s].bubble_fraction, stage.steps.front().bubble_fraction);
    EXPECT_EQ(rows[s].blocks, stage.steps.front().forwards + stage.steps.front().backwards);
    if (s > 0) {
      EXPECT_GT(rows[s].y0, rows[s - 1].y0);
    }
  }
  char bubble[32];
  std::snprintf(bubble, sizeof bubble, "bubble measured %.1f %%", 100.0 * group.measured_bubble);
  EXPECT_NE(frame_text(view).find(bubble), std::string::npos);
  // "Predict this pipeline": the Explorer predicts the measured shape (4 stages, 1F1B, 8 micro-batches), so
  // its bubble is the one the measured view states as predicted, (p - 1) / (m + p - 1) = 3 / 11 (Narayanan et
  // al. 2021, section 2.2).
  view.set_layout(4, 1, 1);
  view.explorer_use_measured_pipeline();
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  EXPECT_EQ(group.schedule, "1f1b");
  EXPECT_NEAR(view.prediction()->bubble_fraction, group.predicted_bubble, 1e-12);
  EXPECT_NEAR(group.predicted_bubble, 3.0 / 11.0, 1e-12);
}

TEST(GuiCompareRuns, InterleavedPipelineKeepsItsChunksAndPredictsTheInterleavedBubble) {
  auto loaded = generated("pp8i",
                          "--ranks 8 --tp 1 --pp 8 --schedule interleaved --virtual-stages 2 "
                          "--micro-batches 8 --layers 16 --steps 2 --seed 4");
  ASSERT_TRUE(loaded);
  ASSERT_TRUE(loaded->pipeline.found);
  const measure::PipelineGroup group = loaded->pipeline.groups.front();
  ASSERT_EQ(group.schedule, "interleaved");
  ASSERT_EQ(group.virtual_stages, 2);
  NullImGui imgui(1600, 1600);
  View view(options_for(Panel::kExplorer));
  view.set_profile(std::move(loaded));
  view.configure_explorer("gpt", 16, 4096, 32, 4096, 8, 1, 8);
  view.set_layout(8, 1, 1);
  view.explorer_use_measured_pipeline();
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  const auto& rows = view.measured_pipeline_rows();
  ASSERT_EQ(rows.size(), 8u);
  for (std::size_t s = 0; s < rows.size(); ++s) {
    const auto& first = group.stages[s].steps.front();
    EXPECT_EQ(rows[s].bubble_fraction, first.bubble_fraction);
    EXPECT_EQ(rows[s].blocks, first.forwards + first.backwards);
    EXPECT_EQ(first.forwards, 16) << "v x m forward blocks per stage";
  }
  // (p - 1) / (v m + p - 1) = 7 / 23 (Narayanan et al. 2021, section 2.2), in the Explorer and the measured
  // view.
  EXPECT_NEAR(group.predicted_bubble, 7.0 / 23.0, 1e-12);
  EXPECT_NEAR(view.prediction()->bubble_fraction, group.predicted_bubble, 1e-12);
}

TEST(GuiCompareRuns, ProfileWithoutPipelineSaysSo) {
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 1400);
  View view(options_for(Panel::kExplorer));
  view.set_profile(load_profile(msdb));
  view.configure_explorer("gpt", 5, 4096, 32, 4096, 4, 2, 2);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_TRUE(view.measured_pipeline_rows().empty());
  EXPECT_NE(frame_text(view).find("no pipeline parallelism found"), std::string::npos);
}

}  // namespace
}  // namespace meshscope::gui
