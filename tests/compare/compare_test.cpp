// analysis/compare and `meshscope compare`: calibration of α/β and compute efficiency from profiles (the
// bundled sample job and shared traces with collective sizes), the prediction-vs-measurement mapping (both
// sides sum to the step time), and the command's contract (JSON keys, the world-size warning, exit codes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/compare/calibrate.hpp"
#include "analysis/compare/compare.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/model/calibration.hpp"
#include "analysis/model/presets.hpp"
#include "job/profile_work.hpp"
#include "profiler/profile.hpp"
#include "tests/compare/compare_test_util.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;

using test::imported;
using test::Result;
using test::run;
using test::shared_trace;

fs::path sample() {
  return imported("sample", fs::path(MESHSCOPE_SOURCE_DIR) / "assets" / "sample" / "sample_job");
}

// The sample job's shape (assets/sample/README.md): GPT-style, hidden 4096, FFN 16384, seq 4096, 5 layers,
// TP 2 x DP 2.
const char* kSampleShape = "--model gpt --layers 5 --hidden 4096 --heads 32 --seq 4096";
const std::string kSampleModel = std::string(kSampleShape) + " --global-batch 2";

model::ModelSpec sample_model() {
  model::ModelSpec m = model::load_model("gpt");
  model::ModelOverrides o;
  o.layers = 5;
  o.hidden = 4096;
  o.heads = 32;
  o.seq = 4096;
  model::apply_overrides(m, o);
  return m;
}

model::ParallelConfig sample_config(const model::ModelSpec& m, const model::HardwareSpec& hw, int gpus = 4) {
  model::ParallelConfig c;
  c.gpus = gpus;
  c.tp = 2;
  c.global_batch = gpus / 2;  // one sequence per data-parallel rank
  return model::resolve(c, m, hw);
}

double number(const std::string& json, const std::string& key) {
  const std::regex re("\"" + key + "\": ?(-?[0-9.eE+-]+)");
  std::smatch m;
  if (!std::regex_search(json, m, re)) return std::nan("");
  return std::stod(m[1]);
}

// ---------------------------------------------------------------------------------------------------------------
// Calibration

TEST(CompareCalibration, SampleJobLinkFitIsPhysicalAndReproducesTheTransfers) {
  const Profile profile = Profile::load(sample());
  const measure::Analysis analysis = measure::analyze(profile);
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  const std::vector<LinkPoint> points = collect_link_points(profile, analysis, hw);
  // Every collective of the sample is matched on all its peers (Seq per group): transfers, wait taken out.
  ASSERT_GT(points.size(), 100u);
  std::map<model::Collective, int> ops;
  for (const LinkPoint& p : points) {
    EXPECT_TRUE(p.transfer);
    EXPECT_EQ(p.link, LinkClass::kIntraNode);  // 4 ranks, 8 GPUs per node
    ++ops[p.op];
  }
  EXPECT_GT(ops[model::Collective::kAllReduce], 0);
  EXPECT_GT(ops[model::Collective::kReduceScatter], 0);
  EXPECT_GT(ops[model::Collective::kAllGather], 0);

  const LinkFit fit = fit_link(points, LinkClass::kIntraNode);
  ASSERT_TRUE(fit.fitted) << fit.reason;
  // Physically sensible: a few µs per ring step, a bus bandwidth below the NVLink's 450 GB/s per direction.
  EXPECT_GT(fit.fit.alpha_step_s, 0.0);
  EXPECT_LT(fit.fit.alpha_step_s, 50e-6);
  EXPECT_GT(fit.fit.busbw_Bps, 50e9);
  EXPECT_LT(fit.fit.busbw_Bps, hw.intra_node_gbps * 1e9);
  // It reproduces the measured transfer times.
  EXPECT_GT(fit.r2, 0.95);
  EXPECT_LT(fit.mean_error, 0.10);
  double err = 0;
  for (const LinkPoint& p : points) {
    const double t = model::collective_time(p.op, p.bytes, p.group_size, fit.fit.link());
    err += std::abs(t / p.seconds - 1);
  }
  EXPECT_NEAR(err / static_cast<double>(points.size()), fit.mean_error, 1e-9);
  // No inter-node collectives: not fitted, and it says why.
  const LinkFit inter = fit_link(points, LinkClass::kInterNode);
  EXPECT_FALSE(inter.fitted);
  EXPECT_FALSE(inter.reason.empty());
}

TEST(CompareCalibration, SampleJobComputeEfficiencyAndTheCalibratedPrediction) {
  const Profile profile = Profile::load(sample());
  const measure::Analysis analysis = measure::analyze(profile);
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  const model::ModelSpec m = sample_model();
  const model::ParallelConfig c = sample_config(m, hw);
  const model::Efficiencies eff = model::defaults_for(hw);
  const ProfileCalibration cal = calibrate(profile, analysis, m, hw, c, eff, load_work(profile));
  ASSERT_TRUE(cal.compute.fitted) << cal.compute.reason;
  EXPECT_EQ(cal.compute.samples, 12);  // 4 ranks x 3 steps
  EXPECT_GT(cal.compute.effective_efficiency, 0.05);
  EXPECT_LT(cal.compute.effective_efficiency, 1.0);
  EXPECT_GT(cal.compute.gemm_efficiency, 0.05);
  EXPECT_LE(cal.compute.gemm_efficiency, 1.0);
  EXPECT_TRUE(cal.intra.applied);
  EXPECT_FALSE(cal.inter.fitted);
  // The calibrated prediction's compute row (compute + recompute + optimizer) is the measured compute time.
  const model::Prediction p = model::predict(m, hw, c, cal.efficiencies);
  EXPECT_NEAR(p.time.compute + p.time.recompute + p.time.optimizer, cal.compute.measured_compute_s,
              1e-6 * cal.compute.measured_compute_s);
  EXPECT_DOUBLE_EQ(cal.efficiencies.intra_node_Bps, cal.intra.fit.busbw_Bps);
  EXPECT_DOUBLE_EQ(cal.efficiencies.intra_node_alpha_s, cal.intra.fit.alpha_step_s);
  EXPECT_DOUBLE_EQ(cal.efficiencies.inter_node_Bps, eff.inter_node_Bps);  // default kept
  bool says_inter_default = false;
  for (const auto& n : cal.notes) says_inter_default |= n.find("inter_node: not fitted") != std::string::npos;
  EXPECT_TRUE(says_inter_default);
}

TEST(CompareCalibration, SingleRankTracesUseWholeDurationsAndSaySo) {
  // HTA nccl_parser_config: rank 0 of 2 (A100); TraceLens MI300X: rank 0 of 8. The peers are missing, so the
  // waits cannot be taken out: the points are whole durations, the shortest of each repeated message.
  struct Case {
    std::string name, path, hardware;
    int group_size;
  };
  for (const Case& k : {Case{"nccl_data", "hta/nccl_parser_config/nccl_data.json.gz", "a100-80gb", 2},
                        Case{"mi300", "tracelens/mi300_resnet_act_checkpoint.json.gz", "mi300x", 8}}) {
    SCOPED_TRACE(k.name);
    const Profile profile = Profile::load(shared_trace(k.name, k.path));
    const measure::Analysis analysis = measure::analyze(profile);
    const model::HardwareSpec hw = model::load_hardware(k.hardware);
    const std::vector<LinkPoint> points = collect_link_points(profile, analysis, hw);
    ASSERT_GE(points.size(), 4u);
    for (const LinkPoint& p : points) {
      EXPECT_FALSE(p.transfer);
      EXPECT_EQ(p.group_size, k.group_size);
      EXPECT_EQ(p.link, LinkClass::kIntraNode);
      EXPECT_TRUE(p.op == model::Collective::kAllReduce || p.op == model::Collective::kBroadcast);
    }
    const LinkFit fit = fit_link(points, LinkClass::kIntraNode);
    ASSERT_TRUE(fit.fitted) << fit.reason;
    EXPECT_GE(fit.fit.alpha_step_s, 0.0);
    EXPECT_LT(fit.fit.alpha_step_s, 1e-3);
    EXPECT_GT(fit.fit.busbw_Bps, 0.0);
    // Waits inflate the durations: the fitted bandwidth is below the hardware's link.
    EXPECT_LT(fit.fit.busbw_Bps, hw.intra_node_gbps * 1e9);
    const model::ModelSpec gpt = model::load_model("gpt");
    model::ParallelConfig config;
    config.gpus = k.group_size;
    const ProfileCalibration cal = calibrate(profile, analysis, gpt, hw, model::resolve(config, gpt, hw),
                                             model::defaults_for(hw), load_work(profile));
    // Broadcasts alone lie on a line (two sizes per trace).
    for (const auto& g : cal.groups) {
      if (g.op == model::Collective::kBroadcast) {
        ASSERT_TRUE(g.fit.fitted) << g.fit.reason;
        EXPECT_GT(g.fit.r2, 0.95);
      }
    }
    bool explained = false;
    for (const auto& n : cal.notes)
      explained |= n.find("lower bound") != std::string::npos || n.find("not applied") != std::string::npos;
    EXPECT_TRUE(explained);
    // The default gpt model is far bigger than what these traces ran: the compute fit refuses, with a reason.
    EXPECT_FALSE(cal.compute.fitted);
    EXPECT_FALSE(cal.compute.reason.empty());
  }
}

TEST(CompareCalibration, PooledFitOfAzureCurvesEqualsTheModelsFit) {
  // nccl_allreduce_busbw_curves_azure.csv through this path: the pooled per-step form fitted by fit_link is
  // the model's own fit_alpha_beta of the same all-reduce curve (same α per step, same busbw), and R² of the
  // measured times is high.
  std::ifstream in(fs::path(MESHSCOPE_SHARED_DIR) / "calibration" / "nccl_allreduce_busbw_curves_azure.csv");
  ASSERT_TRUE(in) << "missing calibration CSV";
  std::map<std::string, std::vector<LinkPoint>> curves;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) f.push_back(cell);
    ASSERT_EQ(f.size(), 9u) << line;
    LinkPoint p;
    p.op = model::Collective::kAllReduce;
    p.group_size = std::stoi(f[1]);
    p.bytes = std::stod(f[5]);
    p.seconds = std::stod(f[8]) * 1e-6;
    curves[f[0]].push_back(p);
  }
  ASSERT_EQ(curves.size(), 4u);
  for (const auto& [system, points] : curves) {
    SCOPED_TRACE(system);
    const LinkFit pooled = fit_link(points, LinkClass::kIntraNode);
    ASSERT_TRUE(pooled.fitted) << pooled.reason;
    std::vector<model::SizeTime> raw;
    for (const LinkPoint& p : points) raw.push_back({p.bytes, p.seconds});
    const model::AlphaBetaFit direct =
        model::fit_alpha_beta(raw, model::Collective::kAllReduce, points.front().group_size);
    EXPECT_NEAR(pooled.fit.alpha_step_s / direct.alpha_step_s, 1.0, 1e-9);
    EXPECT_NEAR(pooled.fit.busbw_Bps / direct.busbw_Bps, 1.0, 1e-9);
    EXPECT_NEAR(pooled.mean_error, direct.mape, 1e-9);
    EXPECT_GT(pooled.r2, 0.97);
    EXPECT_EQ(pooled.points, 24);
  }
  // One message size cannot separate α from β; one point is too few.
  std::vector<LinkPoint> one_size(3, curves.begin()->second.front());
  EXPECT_FALSE(fit_link(one_size, LinkClass::kIntraNode).fitted);
  EXPECT_NE(fit_link(one_size, LinkClass::kIntraNode).reason.find("one message size"), std::string::npos);
  EXPECT_FALSE(fit_link(std::span(one_size).first(1), LinkClass::kIntraNode).fitted);
}

TEST(CompareCalibration, LinkClassAndOperationNames) {
  const Profile profile = Profile::load(sample());
  const std::vector<int> node0 = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<int> across = {0, 8};
  EXPECT_EQ(link_class_of(profile, node0, 8, 8), LinkClass::kIntraNode);
  EXPECT_EQ(link_class_of(profile, across, 2, 8), LinkClass::kInterNode);
  EXPECT_EQ(link_class_of(profile, {}, 16, 8), LinkClass::kInterNode);
  EXPECT_EQ(link_class_of(profile, {}, 4, 8), LinkClass::kIntraNode);
  model::Collective op{};
  ASSERT_TRUE(collective_of("allreduce", op));
  EXPECT_EQ(op, model::Collective::kAllReduce);
  ASSERT_TRUE(collective_of("_reduce_scatter_base", op));
  EXPECT_EQ(op, model::Collective::kReduceScatter);
  ASSERT_TRUE(collective_of("all_gather_into_tensor_coalesced", op));
  EXPECT_EQ(op, model::Collective::kAllGather);
  ASSERT_TRUE(collective_of("recv", op));
  EXPECT_EQ(op, model::Collective::kSendRecv);
  EXPECT_FALSE(collective_of("barrier", op));
}

// ---------------------------------------------------------------------------------------------------------------
// The comparison

TEST(CompareMapping, ProcessGroupsMapToParallelDimensions) {
  model::ParallelConfig c;
  c.tp = 2, c.pp = 2, c.dp = 2, c.cp = 1, c.ep = 1, c.gpus = 8;
  const std::vector<int> tp = {2, 3}, dp = {1, 3}, pp = {0, 4}, world = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(group_part(tp, 2, "allreduce", "", c), Part::kTp);
  EXPECT_EQ(group_part(dp, 2, "reduce_scatter", "", c), Part::kDp);
  EXPECT_EQ(group_part(pp, 2, "send", "", c), Part::kPp);
  EXPECT_EQ(group_part(world, 8, "allreduce", "default_pg", c), Part::kCommOther);
  // Without member lists: a unique size decides, else the description.
  c.pp = 1, c.dp = 4;
  EXPECT_EQ(group_part({}, 4, "allreduce", "", c), Part::kDp);
  c.dp = 2;
  EXPECT_EQ(group_part({}, 2, "allreduce", "tensor_model_parallel", c), Part::kTp);
  EXPECT_EQ(group_part({}, 2, "allreduce", "data_parallel", c), Part::kDp);
}

TEST(CompareMapping, BothSidesSumToTheStepTime) {
  const Profile profile = Profile::load(sample());
  const measure::Analysis analysis = measure::analyze(profile);
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  const model::ModelSpec m = sample_model();
  const model::ParallelConfig c = sample_config(m, hw);
  const Comparison cmp =
      compare::compare(profile, analysis, m, hw, c, model::defaults_for(hw), true, load_work(profile));
  EXPECT_TRUE(cmp.warnings.empty());
  ASSERT_EQ(cmp.measured.steps.size(), 3u);
  EXPECT_EQ(cmp.measured.steps.front().step, 12);
  auto sum = [](const PartSeconds& parts) {
    double s = 0;
    for (double v : parts) s += v;
    return s;
  };
  EXPECT_NEAR(sum(predicted_parts(cmp.predicted)), cmp.predicted.step_time_s, 1e-12);
  ASSERT_TRUE(cmp.calibrated);
  EXPECT_NEAR(sum(predicted_parts(*cmp.calibrated)), cmp.calibrated->step_time_s, 1e-12);
  for (const MeasuredStep& s : cmp.measured.steps) {
    SCOPED_TRACE(s.step);
    EXPECT_EQ(s.ranks, 4);
    EXPECT_NEAR(sum(s.parts), s.dur_s, 1e-9);
    EXPECT_NEAR(s.compute_s + s.exposed_comm_s + s.memory_exposed_s + s.idle_s, s.dur_s, 1e-9);
    // TP all-reduces and the DP parameter all-gathers are exposed in the sample (README); attributed so.
    EXPECT_GT(s.parts[static_cast<int>(Part::kTp)], 0.0);
    EXPECT_GT(s.parts[static_cast<int>(Part::kDp)], 0.0);
    EXPECT_LE(s.parts[static_cast<int>(Part::kCommOther)], 0.05 * s.exposed_comm_s);
  }
  EXPECT_NEAR(sum(cmp.measured.mean.parts), cmp.measured.mean.dur_s, 1e-9);
  // The sample's measured compute is what calibration makes the compute row.
  const auto d = difference(predicted_parts(*cmp.calibrated), cmp.measured.mean.parts);
  EXPECT_NEAR(d[static_cast<int>(Part::kCompute)].diff_pct, 0.0, 1e-3);
}

TEST(CompareMapping, WorldSizeMismatchIsAWarning) {
  const Profile profile = Profile::load(sample());
  const measure::Analysis analysis = measure::analyze(profile);
  const model::HardwareSpec hw = model::load_hardware("h100-sxm");
  const model::ModelSpec m = sample_model();
  const Comparison cmp = compare::compare(profile, analysis, m, hw, sample_config(m, hw, 8),
                                          model::defaults_for(hw), false, load_work(profile));
  ASSERT_EQ(cmp.warnings.size(), 1u);
  EXPECT_NE(cmp.warnings[0].find("world size is 4"), std::string::npos) << cmp.warnings[0];
  EXPECT_FALSE(cmp.calibration);
}

// ---------------------------------------------------------------------------------------------------------------
// The command

TEST(CompareCli, JsonHasTheKeysAndThePartsSum) {
  const Result r =
      run("compare \"" + sample().string() + "\" " + kSampleModel + " --tp 2 --json --calibrate");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* key : {"\"profile\"",    "\"ranks\"",       "\"world_size\"",
                          "\"config\"",     "\"predicted\"",   "\"step_time_s\"",
                          "\"time_s\"",     "\"pp_bubble\"",   "\"measured\"",
                          "\"steps\"",      "\"step\"",        "\"dur_s\"",
                          "\"compute_s\"",  "\"comm_s\"",      "\"exposed_comm_s\"",
                          "\"idle_s\"",     "\"memory_s\"",    "\"mean\"",
                          "\"difference\"", "\"calibration\"", "\"fitted\"",
                          "\"intra_node\"", "\"alpha_us\"",    "\"beta_gbps\"",
                          "\"points\"",     "\"r2\"",          "\"compute_efficiency\"",
                          "\"notes\"",      "\"calibrated\"",  "\"warnings\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  EXPECT_EQ(number(r.out, "ranks"), 4);
  EXPECT_EQ(number(r.out, "world_size"), 4);
  // measured.mean: compute + exposed comm + exposed memory + idle = dur.
  const std::string mean = r.out.substr(r.out.find("\"mean\""));
  EXPECT_NEAR(number(mean, "compute_s") + number(mean, "exposed_comm_s") + number(mean, "memory_exposed_s") +
                  number(mean, "idle_s"),
              number(mean, "dur_s"), 1e-6);
  const double alpha = number(r.out.substr(r.out.find("\"calibration\"")), "alpha_us");
  EXPECT_GT(alpha, 0);
  EXPECT_LT(alpha, 50);
  const double eff = number(r.out, "compute_efficiency");
  EXPECT_GT(eff, 0);
  EXPECT_LT(eff, 1);
}

TEST(CompareCli, TextTablesFitIn120Columns) {
  const Result r = run("compare \"" + sample().string() + "\" " + kSampleModel + " --tp 2 --calibrate");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Step time by part"), std::string::npos);
  EXPECT_NE(r.out.find("Per step"), std::string::npos);
  EXPECT_NE(r.out.find("Calibration from the profile"), std::string::npos);
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    // Columns, not bytes: µ, α, ², − are two or three bytes in UTF-8.
    std::size_t columns = 0;
    for (unsigned char ch : line) columns += (ch & 0xC0) != 0x80 ? 1 : 0;
    EXPECT_LE(columns, 120u) << line;
  }
}

TEST(CompareCli, WorldSizeMismatchWarnsAndSucceeds) {
  const std::string args =
      "compare \"" + sample().string() + "\" " + kSampleShape + " --gpus 8 --tp 2 --global-batch 4";
  const Result text = run(args);
  EXPECT_EQ(text.status, 0) << text.out;
  EXPECT_NE(text.out.find(
                "WARNING: CONFIG has tp 2 x pp 1 x dp 4 x cp 1 = 8 GPUs but the profile's world size is 4"),
            std::string::npos)
      << text.out;
  const Result json = run(args + " --json", true);
  EXPECT_EQ(json.status, 0) << json.out;
  EXPECT_NE(json.out.find("warning: CONFIG has"), std::string::npos);
}

TEST(CompareCli, BadInputExitsOneWithOneLine) {
  const Result missing = run("compare /nonexistent/profile.msdb --model gpt", true);
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_EQ(std::count(missing.out.begin(), missing.out.end(), '\n'), 1) << missing.out;
  const Result layout = run("compare \"" + sample().string() + "\" --model gpt --tp 3", true);
  EXPECT_EQ(layout.status, 1) << layout.out;
  EXPECT_EQ(std::count(layout.out.begin(), layout.out.end(), '\n'), 1) << layout.out;
  EXPECT_NE(layout.out.find("--tp 3"), std::string::npos) << layout.out;
  const Result preset = run("compare \"" + sample().string() + "\" --model no-such-model", true);
  EXPECT_EQ(preset.status, 1) << preset.out;
  const Result usage = run("compare", true);
  EXPECT_EQ(usage.status, 2) << usage.out;
}

}  // namespace
}  // namespace meshscope::compare
