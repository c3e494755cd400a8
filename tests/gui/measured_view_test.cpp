// The GUI reads the one measured model: on real shared traces, the Explorer opens
// on what the profile ran and its measured column is the MeasuredModel's mean step (the figures `meshscope
// compare` prints), the Roofline plots the profile's measured points on its own GPU's ceilings, and a profile
// that is not a transformer (or records no shapes) says so instead of comparing. Traces:
//   * tracelens/h100_qwen1.5_0.5b_inference: Qwen1.5-0.5B on one H100, recorded with shapes;
//   * hta/trace_filter: two ranks of a 128-rank recommender (DLRM-like: embedding bags and MLPs, no
//     attention), V100;
//   * hta/ns_resolution_trace: recorded without shapes;
//   * the other shared traces recorded with shapes (V100, A100, MI300X, MI250): measured roofline points;
//   * the Qwen profile with a damaged kernel_work row (bad input).
#include <gtest/gtest.h>
#include <simdjson.h>
#include <sqlite3.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "analysis/compare/measured.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/work.hpp"
#include "app/gui/measured_view.hpp"
#include "app/gui/roofline_panel.hpp"
#include "job/profile_work.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

using test::NullImGui;
using test::options_for;

std::filesystem::path qwen() {
  return test::imported(test::shared_trace("tracelens/h100_qwen1.5_0.5b_inference.json.gz"));
}

std::string run(const std::string& args) {
  std::string out;
  FILE* pipe = popen((std::string("'") + MESHSCOPE_BINARY + "' " + args + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  pclose(pipe);
  return out;
}

compare::MeasuredModel measured_of(const std::filesystem::path& msdb) {
  const Profile p = Profile::load(msdb);
  return compare::measure_profile(p, measure::analyze(p), load_work(p, {.uncounted_shapes = true}));
}

TEST(MeasuredView, QwenStartsOnItsInferredModelHardwareAndLayout) {
  const auto msdb = qwen();
  ASSERT_FALSE(msdb.empty());
  const compare::MeasuredModel m = measured_of(msdb);
  const ProfileStart s = profile_start(m, 1);
  EXPECT_TRUE(s.comparable) << s.reason;
  ASSERT_TRUE(s.model.has_value());
  EXPECT_EQ(s.model->hidden, 1024);
  EXPECT_EQ(s.model->layers, 24);
  EXPECT_EQ(s.model->heads, 16);
  EXPECT_EQ(s.model->ffn, 2816);
  EXPECT_EQ(s.hardware, "h100-sxm");
  EXPECT_EQ(s.layout.gpus, 1);
  EXPECT_EQ(s.layout.tp, 1);
  EXPECT_NE(s.sources.find("the GPU name 'NVIDIA H100"), std::string::npos) << s.sources;
  EXPECT_NE(
      s.summary.find("hidden 1024, 24 layers, ffn 2816, 16 heads (16 kv), vocab 151936, inference; h100-sxm"),
      std::string::npos)
      << s.summary;
}

// The Summary's GPU line says what the profile records of its GPU. HTA's cupti_profiler trace ran on an
// "NVIDIA A100-PG509-200" (a 40 GB A100 board no preset describes for certain; the devices table:
// 42,505,273,344 bytes, compute capability 8.0, 108 SMs), which is described from those records;
// TraceLens's Qwen trace on an H100 SXM.
TEST(MeasuredView, TheSummarysGpuLineSaysWhatTheProfileRecordsOfIt) {
  const auto a100 = test::imported(test::shared_trace("hta/cupti_profiler"));
  ASSERT_FALSE(a100.empty());
  const Profile p = Profile::load(a100);
  const compare::MeasuredModel m =
      compare::measure_profile(p, measure::analyze(p), load_work(p, {.uncounted_shapes = true}));
  const ProfileStart s = profile_start(m, 1);
  ASSERT_TRUE(s.recorded_hardware.has_value());
  EXPECT_EQ(s.hardware, "a100-pg509-200");
  EXPECT_EQ(
      profile_gpu_line(p, m.workload.gpu, s.hardware, HardwareOrigin::kRecorded),
      "NVIDIA A100-PG509-200 (described by 1 rank): 39.6 GiB memory, compute capability 8.0, 108 SMs; no "
      "preset names it: predicted as a100-pg509-200, described from these records");
  EXPECT_EQ(
      profile_gpu_line(p, m.workload.gpu, ""),
      "NVIDIA A100-PG509-200 (described by 1 rank): 39.6 GiB memory, compute capability 8.0, 108 SMs; no "
      "hardware preset describes it (the Explorer predicts on the hardware chosen there)");
  const Profile q = Profile::load(qwen());
  const compare::MeasuredModel mq =
      compare::measure_profile(q, measure::analyze(q), load_work(q, {.uncounted_shapes = true}));
  const std::string line = profile_gpu_line(q, mq.workload.gpu, profile_start(mq, 1).hardware);
  EXPECT_TRUE(line.starts_with("NVIDIA H100")) << line;
  EXPECT_NE(line.find("compute capability 9.0, 132 SMs; hardware preset h100-sxm"), std::string::npos)
      << line;
  EXPECT_EQ(profile_gpu_line(q, "", ""), "the profile names no GPU");
}

TEST(MeasuredView, QwenRooflinePointsAreTheMeasuredRooflinesOperators) {
  const auto msdb = qwen();
  ASSERT_FALSE(msdb.empty());
  const compare::MeasuredModel m = measured_of(msdb);
  const MeasuredPoints points = measured_points(m);
  ASSERT_FALSE(points.ops.empty());
  ASSERT_FALSE(points.categories.empty());
  ASSERT_TRUE(points.step.has_value());
  // Grouping by name and shapes keeps every FLOP of the plotted operators: the sums equal the roofline's.
  double flops = 0, seconds = 0;
  std::int64_t calls = 0;
  for (const auto& p : points.ops) {
    flops += p.flops;
    seconds += p.seconds;
    calls += p.count;
    EXPECT_LE(p.attained(), 989e12) << p.name << " " << p.dims;  // the H100's dense BF16 peak
  }
  EXPECT_NEAR(flops, m.roofline.flops, 1e-9 * m.roofline.flops);
  double category_flops = 0;
  for (const auto& c : points.categories) category_flops += c.flops;
  EXPECT_NEAR(category_flops, m.roofline.flops, 1e-9 * m.roofline.flops);
  EXPECT_EQ(points.categories.front().category, measure::WorkCategory::kGemm);
  // One of them is the QKV projection the workload test computes by hand (2 x 16 x 559 x 1024 x 1024 FLOPs
  // of the matmul plus the bias, 72 calls).
  bool qkv = false;
  for (const auto& p : points.ops) {
    if (p.name == "aten::linear" && p.dims == "[[16, 559, 1024], [1024, 1024], [1024]]") {
      qkv = true;
      EXPECT_EQ(p.count, 72);
      EXPECT_DOUBLE_EQ(p.flops, 72 * 18756927488.0);
    }
  }
  EXPECT_TRUE(qkv);
  EXPECT_DOUBLE_EQ(points.step->flops, m.flops_per_step);
  EXPECT_DOUBLE_EQ(points.step->seconds, m.steps.mean.dur_s);
}

TEST(MeasuredView, ExplorerShowsCompareMeasuredStepAndPredictsWhatCompareDoes) {
  const auto msdb = qwen();
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kExplorer));
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_TRUE(view.explorer_start().comparable) << view.explorer_start().reason;
  const compare::MeasuredStep* shown = view.explorer_measured_shown();
  ASSERT_NE(shown, nullptr) << "no measured column";
  const compare::MeasuredModel m = measured_of(msdb);
  EXPECT_DOUBLE_EQ(shown->dur_s, m.steps.mean.dur_s);
  EXPECT_DOUBLE_EQ(shown->compute_s, m.steps.mean.compute_s);
  EXPECT_DOUBLE_EQ(shown->comm_s, m.steps.mean.comm_s);
  EXPECT_DOUBLE_EQ(shown->exposed_comm_s, m.steps.mean.exposed_comm_s);
  EXPECT_DOUBLE_EQ(shown->memory_exposed_s, m.steps.mean.memory_exposed_s);
  EXPECT_DOUBLE_EQ(shown->idle_s, m.steps.mean.idle_s);
  for (std::size_t i = 0; i < shown->parts.size(); ++i)
    EXPECT_DOUBLE_EQ(shown->parts[i], m.steps.mean.parts[i]);
  // `meshscope compare PROFILE` (no flags) measures the same step and predicts the same model and layout.
  const std::string json = run("compare --json '" + msdb.string() + "'");
  simdjson::dom::parser parser;
  simdjson::dom::element c;
  ASSERT_EQ(parser.parse(json).get(c), simdjson::SUCCESS) << json;
  EXPECT_NEAR(double(c["measured"]["mean"]["dur_s"]), shown->dur_s, 1e-12);
  EXPECT_NEAR(double(c["measured"]["mean"]["compute_s"]), shown->compute_s, 1e-12);
  EXPECT_NEAR(double(c["measured"]["mean"]["idle_s"]), shown->idle_s, 1e-12);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  const auto& cfg = view.prediction()->config;
  EXPECT_EQ(std::string_view(c["config"]["hardware"]), "h100-sxm");
  EXPECT_EQ(int64_t(c["config"]["gpus"]), cfg.gpus);
  EXPECT_EQ(int64_t(c["config"]["micro_batch"]), cfg.micro_batch);
  EXPECT_EQ(int64_t(c["config"]["global_batch"]), cfg.global_batch);
  EXPECT_EQ(int64_t(c["config"]["seq"]), cfg.seq);
  EXPECT_EQ(int64_t(c["config"]["zero"]), cfg.zero);
  const double predicted = c["predicted"]["step_time_s"];
  EXPECT_NEAR(view.prediction()->step_time_s, predicted, 1e-9 * predicted);
  // The profile ran one forward pass (inference): both predict inference, never a training step.
  EXPECT_EQ(std::string_view(c["config"]["mode"]), "inference");
  EXPECT_EQ(cfg.mode, model::Mode::kInference);
  view.set_explorer_mode(model::Mode::kTraining);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  EXPECT_EQ(view.prediction()->config.mode, model::Mode::kTraining);
  EXPECT_EQ(view.explorer_measured_shown(), nullptr) << "an inference profile beside a training step";
  view.set_explorer_mode(model::Mode::kInference);
  for (int i = 0; i < 2; ++i) imgui.frame(view);
  EXPECT_NE(view.explorer_measured_shown(), nullptr);
}

TEST(MeasuredView, RooflinePlotsMeasuredPointsOnTheProfilesOwnGpu) {
  const auto msdb = qwen();
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kRoofline));
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  const auto& shown = view.roofline_shown();
  EXPECT_EQ(shown.hardware, "h100-sxm");
  const MeasuredPoints& points = view.loaded()->roofline;
  EXPECT_EQ(shown.measured,
            static_cast<int>(points.ops.size() + points.categories.size() + (points.step ? 1 : 0)));
  EXPECT_GT(shown.measured, 0);
  EXPECT_GT(shown.predicted, 0) << "the inferred model's operations on the same GPU";
  EXPECT_EQ(shown.left_out, 0);
}

// Every shared trace recorded with shapes whose operators launched kernels (`report --json` counts their
// kernels in roofline.kernels): the Roofline draws measured points, on the ceilings of the profile's own GPU
// when it has a preset, and every drawn operator is at or under the peak (none left out where the GPU is
// known: the measured roofline already left those out).
class RooflineOnTrace : public ::testing::TestWithParam<const char*> {};

TEST_P(RooflineOnTrace, HasMeasuredPoints) {
  const auto msdb = test::imported(test::shared_trace(GetParam()));
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kRoofline));
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  const LoadedProfile& loaded = *view.loaded();
  ASSERT_TRUE(loaded.measured.has_value()) << loaded.measured_error;
  EXPECT_GT(loaded.measured->roofline.kernels, 0);
  const auto& shown = view.roofline_shown();
  EXPECT_GT(shown.measured, 0);
  if (loaded.measured->hardware) {
    EXPECT_EQ(shown.hardware, loaded.measured->hardware->name);
    EXPECT_EQ(shown.left_out, 0);
  }
  for (const auto& p : loaded.roofline.ops) EXPECT_GT(p.flops, 0) << p.name;
}

INSTANTIATE_TEST_SUITE_P(Gui, RooflineOnTrace,
                         ::testing::Values("hta/trace_diff/test/test.json.gz",
                                           "hta/negative_queue_length_values_check/rank0.json.gz",
                                           "tracelens/mi300_resnet_act_checkpoint.json.gz",
                                           "kineto/resnet50_num_workers_0", "hta/amd_trace"));

TEST(MeasuredView, RecommenderIsNotComparable) {
  const auto msdb = test::imported(test::shared_trace("hta/trace_filter"));
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kExplorer));
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_FALSE(view.explorer_start().comparable);
  EXPECT_EQ(view.explorer_start().reason, compare::kNotATransformer);
  EXPECT_FALSE(view.explorer_start().model.has_value());
  EXPECT_EQ(view.explorer_measured_shown(), nullptr) << "a measured column against an unrelated model";
  EXPECT_NE(view.explorer_start().summary.find("not a recognised transformer"), std::string::npos)
      << view.explorer_start().summary;
}

// The Explorer opens on what the profile ran and says which of its values are assumed: the TP 2 × DP 2 job of
// tests/data/known_models records only the default process group, so PP, CP and EP 1 and DP 2 are assumed.
TEST(MeasuredView, TheExplorerSaysWhatIsAssumed) {
  const auto msdb = test::imported(std::filesystem::path(MESHSCOPE_SOURCE_DIR) /
                                   "tests/data/known_models/llama_tp2_dp2_train");
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kExplorer));
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_NE(
      view.explorer_start().summary.find("transformer: hidden 256, 4 layers, ffn 704, 8 heads (2 kv), vocab "
                                         "2048, training (assumed, as the profile does not show them: pp 1, "
                                         "dp 2, cp 1, ep 1)"),
      std::string::npos)
      << view.explorer_start().summary;
}

// Bad input: a kernel_work row with negative FLOPs makes the measured model fail with one line naming the
// file; the profile still opens, the Explorer says why it is not comparable and the Roofline why it has no
// measured points.
TEST(MeasuredView, DamagedWorkTablesStillOpenAndSayWhy) {
  const auto msdb = qwen();
  ASSERT_FALSE(msdb.empty());
  const auto damaged =
      std::filesystem::path(MESHSCOPE_TEST_TMP) / ("damaged-work-" + std::to_string(::getpid()) + ".msdb");
  std::filesystem::copy_file(msdb, damaged, std::filesystem::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(damaged.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "UPDATE kernel_work SET flops = -1 WHERE rowid = (SELECT MIN(rowid) FROM kernel_work)",
                   nullptr, nullptr, nullptr),
      SQLITE_OK);
  EXPECT_EQ(sqlite3_changes(db), 1);
  sqlite3_close(db);
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kRoofline));
  view.set_profile(load_profile(damaged));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  const LoadedProfile& loaded = *view.loaded();
  EXPECT_FALSE(loaded.measured.has_value());
  EXPECT_NE(loaded.measured_error.find(damaged.string()), std::string::npos) << loaded.measured_error;
  EXPECT_NE(loaded.measured_error.find("kernel_work"), std::string::npos) << loaded.measured_error;
  EXPECT_FALSE(view.explorer_start().comparable);
  EXPECT_NE(view.explorer_start().reason.find(loaded.measured_error), std::string::npos);
  ASSERT_FALSE(view.roofline_shown().notes.empty());
  EXPECT_EQ(view.roofline_shown().notes.front(), "no measured points: " + loaded.measured_error);
  EXPECT_EQ(view.roofline_shown().measured, 0);
  view.select_panel(Panel::kExplorer);
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  EXPECT_EQ(view.explorer_measured_shown(), nullptr);
  ASSERT_NE(view.prediction(), nullptr) << view.layout_error();
  std::filesystem::remove(damaged);
}

TEST(MeasuredView, TraceWithoutShapesSaysSoOnTheRoofline) {
  const auto msdb = test::imported(test::shared_trace("hta/ns_resolution_trace"));
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kRoofline));
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  const auto& notes = view.roofline_shown().notes;
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes.front(), measure::kNoShapesNote);
  EXPECT_EQ(view.roofline_shown().measured, 0);
  EXPECT_FALSE(view.explorer_start().comparable);
}

}  // namespace
}  // namespace meshscope::gui

namespace meshscope::gui {
namespace {

// The Summary opens with what `report` says stands out, from the same function: on the sample job, the
// straggler (rank 1 loads data slowly, assets/sample/README.md) first, then the rest, sentence for sentence.
TEST(MeasuredView, SummarySaysWhatReportSaysStandsOut) {
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  NullImGui imgui(1600, 900);
  View view(options_for(Panel::kSummary));
  view.set_profile(load_profile(msdb));
  for (int i = 0; i < 3; ++i) imgui.frame(view);
  const auto& findings = view.stands_out();
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings.front().kind, measure::Finding::Kind::kStraggler);
  EXPECT_EQ(findings.front().rank, 1);
  const std::string report = run("report '" + msdb.string() + "'");
  const auto section = report.find("What stands out\n");
  ASSERT_NE(section, std::string::npos) << report;
  std::string expected;
  for (const auto& f : findings) expected += f.text;
  std::string printed;  // the section's bullets, their wrapped lines joined again
  std::size_t at = report.find('\n', report.find('\n', section) + 1) + 1;
  for (std::size_t end; (end = report.find('\n', at)) != std::string::npos && end > at; at = end + 1) {
    const std::string line = report.substr(at, end - at);
    printed += line.rfind("* ", 0) == 0 ? line.substr(2) : " " + line.substr(2);
  }
  EXPECT_EQ(printed, expected);
}

}  // namespace
}  // namespace meshscope::gui
