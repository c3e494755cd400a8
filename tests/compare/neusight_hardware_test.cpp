// `whatif --hardware` checked against training steps really measured on other GPUs: NeuSight's (Lee et al.,
// ASPLOS 2025; tests/data/neusight, MIT licence): BERT-large, GPT-2 large, OPT-1.3B and GPT-3 XL / 2.7B
// training steps in FP32 on an H100 SXM, an A100 80GB PCIe, a V100 PCIe 32GB, an L4, an MI210 and an MI250
// (one die), each step's end-to-end latency measured and each operator's forward + backward latency measured
// alone. One GPU's operators become a profile (one kernel per measured kernel, each operator's FLOPs and
// bytes counted by meshscope's own formulas from the shapes NeuSight recorded); the edit's own code
// (compare::retime_hardware, as `whatif --hardware` runs it) re-times it for each other GPU's preset; the
// measured step times the kernels' total after over before (what launches no kernel, views and sizes, kept as
// host time) is the prediction, set against the step measured on that GPU. The table goes to
// MESHSCOPE_TEST_OUTPUT/hardware_validation.md and is summarised in docs/WHATIF.md. Nothing here was fitted
// to these steps.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/compare/hardware_edit.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/op_work.hpp"
#include "analysis/model/presets.hpp"
#include "job/profile_work.hpp"
#include "tests/compare/neusight_steps.hpp"
#include "tests/measure/profile_builder.hpp"

namespace meshscope::compare {
namespace {

namespace fs = std::filesystem;

// A kernel name of each kind of work, as the libraries name theirs (measure::kernel_work_category reads them
// back): an FP32 GEMM on the FP32 units (cuBLAS's sgemm; NeuSight trains with TF32 off), ATen's layer norm,
// element-wise and index-select kernels.
const char* kernel_name(measure::WorkCategory category) {
  switch (category) {
    case measure::WorkCategory::kGemm:
      return "sgemm_128x64_nn";
    case measure::WorkCategory::kNorm:
      return "vectorized_layer_norm_kernel";
    case measure::WorkCategory::kOther:
      return "indexSelectLargeIndex";
    default:
      return "vectorized_elementwise_kernel";
  }
}

// The source GPU's measured operators as a profile: kernels back to back on one stream, each counted
// operator's work on its kernels. HOST_MS: the operators that launch no kernel.
struct OperatorProfile {
  Profile profile;
  double host_ms = 0;
};

OperatorProfile operator_profile(const test::NeuSightStep& step, const std::string& name) {
  test::ProfileBuilder b(name);
  b.rank(0, 1);
  ProfileWriter& writer = b.writer();
  double host_ms = 0;
  TimeNs t = 0;
  std::int64_t external_id = 0;
  for (const test::NeuSightOperator& op : step.operators) {
    if (op.aten.empty() || op.aten == "-") {
      host_ms += op.times * op.latency_ms;
      continue;
    }
    measure::OpWork work;
    const bool counted =
        measure::op_work(op.aten, {op.input_dims, op.input_types, ""}, work) == measure::WorkStatus::kOk;
    const TimeNs each = std::max<TimeNs>(1, std::llround(op.latency_ms * 1e6 / op.kernels));
    for (int call = 0; call < op.times; ++call) {
      std::int64_t op_id = 0;
      if (counted) {
        OpWorkRecord r;
        r.external_id = ++external_id;
        r.pid = 1;
        r.tid = 1;
        r.start_ns = t;
        r.name = writer.intern(op.aten);
        r.category = static_cast<std::int64_t>(work.category);
        r.flops = work.flops;
        r.bytes = work.bytes;
        r.input_dims = writer.intern(canonical_list(op.input_dims));
        r.input_types = writer.intern(canonical_list(op.input_types));
        r.kernels = op.kernels;
        r.kernel_ns = each * op.kernels;
        op_id = writer.add_op_work(r);
      }
      for (int k = 0; k < op.kernels; ++k) {
        const std::int64_t id =
            b.launch(0, 1, t, t + 1, 7, t, t + each,
                     kernel_name(counted ? work.category : measure::WorkCategory::kElementwise));
        if (counted)
          writer.add_kernel_work({.activity_id = id,
                                  .rank = 0,
                                  .op_id = op_id,
                                  .flops = work.flops / op.kernels,
                                  .bytes = work.bytes / op.kernels});
        t += each;
      }
    }
  }
  return {b.finish(), host_ms};
}

struct Prediction {
  std::string model, from, to;
  double measured_from = 0, measured_to = 0, predicted = 0;
  // The same for the sums of the operators each measured alone (what the rule re-times), leaving out what the
  // step holds beyond them.
  double operators_from = 0, operators_to = 0, operators_predicted = 0;
  double error() const { return 100.0 * (predicted - measured_to) / measured_to; }
  double operators_error() const { return 100.0 * (operators_predicted - operators_to) / operators_to; }
};

// FROM's operators (a profile of them, SOURCE's preset) re-timed for TARGET: their sum before and after.
std::pair<double, double> retimed_operators_ms(const OperatorProfile& from, const model::HardwareSpec& source,
                                               const model::HardwareSpec& target) {
  const measure::Analysis analysis = measure::analyze(from.profile);
  const measure::ProfileWork work = load_work(from.profile);
  const HardwareRetiming retimed = retime_hardware(from.profile, analysis, work, source, target);
  double before = from.host_ms, after = from.host_ms;
  const Rank& rank = from.profile.ranks().at(0);
  for (std::size_t i = 0; i < rank.activities.size(); ++i) {
    const double ms = static_cast<double>(rank.activities[i].duration()) / 1e6;
    before += ms;
    after += ms * retimed.factor[0][i];
  }
  return {before, after};
}

double operators_ms(const test::NeuSightStep& step) {
  double sum = 0;
  for (const test::NeuSightOperator& op : step.operators) sum += op.times * op.latency_ms;
  return sum;
}

std::string device_of(const std::string& dir) {
  std::string device = dir;
  for (char& c : device)
    if (c == '_') c = ' ';
  return device;
}

TEST(HardwareEdit, NeuSightStepsOnOneGpuPredictTheOthers) {
  const fs::path data = test::neusight_dir();
  const std::vector<std::string> gpus = {"NVIDIA_H100_80GB_HBM3", "NVIDIA_A100_80GB_PCIe",
                                         "Tesla_V100-PCIE-32GB",  "NVIDIA_L4",
                                         "AMD_Instinct_MI210",    "AMD_Instinct_MI250"};
  std::map<std::string, model::HardwareSpec> presets;
  for (const std::string& gpu : gpus) {
    const std::string preset = hardware_preset_for(device_of(gpu));
    ASSERT_FALSE(preset.empty()) << gpu << ": every GPU of the cut has a preset";
    presets[gpu] = model::load_hardware(preset);
  }
  std::vector<Prediction> predictions;
  for (const std::string& from : gpus) {
    for (const auto& entry : fs::directory_iterator(data / from)) {
      if (entry.path().extension() != ".tsv") continue;
      const std::string file = entry.path().filename().string();
      const test::NeuSightStep source_step = test::read_neusight_step(entry.path());
      ASSERT_GT(source_step.step_ms, 0) << entry.path();
      const OperatorProfile profile =
          operator_profile(source_step, presets[from].name + "-" + entry.path().stem().string());
      for (const std::string& to : gpus) {
        if (to == from || !fs::exists(data / to / file)) continue;
        const test::NeuSightStep target_step = test::read_neusight_step(data / to / file);
        Prediction p{entry.path().stem().string(), presets[from].name, presets[to].name, source_step.step_ms,
                     target_step.step_ms};
        const auto [before, after] = retimed_operators_ms(profile, presets[from], presets[to]);
        // The step: the measured step × the operators' total after / before.
        p.predicted = source_step.step_ms * after / before;
        p.operators_from = before;
        p.operators_to = operators_ms(target_step);
        p.operators_predicted = after;
        predictions.push_back(p);
        // Each prediction within a factor of 2.2 of the step measured there (the worst today: the L4's
        // BERT-large step predicted on the V100, 2.1 x: the L4 reaches 45 % of its FP32 peak, the V100 97 %,
        // see docs/WHATIF.md).
        EXPECT_LT(std::abs(std::log(p.predicted / p.measured_to)), std::log(2.2))
            << p.model << " " << p.from << " -> " << p.to;
      }
    }
  }
  ASSERT_GE(predictions.size(), 100u) << "every pair of GPUs that ran the same model";

  std::string table =
      "| model | GPU → GPU | measured ms | predicted ms | error | operators' sum: measured ms | predicted ms "
      "| "
      "error |\n|---|---|---|---|---|---|---|---|\n";
  struct Sums {
    double step = 0, operators = 0;
    int n = 0;
  };
  std::map<std::pair<std::string, std::string>, Sums> by_pair;
  double sum_abs = 0, operators_abs = 0;
  for (const Prediction& p : predictions) {
    table += fmt::format(
        "| {} | {} → {} | {:.1f} → {:.1f} | {:.1f} | {:+.1f} % | {:.1f} → {:.1f} | {:.1f} | {:+.1f} % |\n",
        p.model, p.from, p.to, p.measured_from, p.measured_to, p.predicted, p.error(), p.operators_from,
        p.operators_to, p.operators_predicted, p.operators_error());
    Sums& sums = by_pair[{p.from, p.to}];
    sums.step += p.error();
    sums.operators += p.operators_error();
    ++sums.n;
    sum_abs += std::abs(p.error());
    operators_abs += std::abs(p.operators_error());
  }
  const double n = static_cast<double>(predictions.size());
  const double mape = sum_abs / n;
  table += fmt::format(
      "\nMean |error| over {} predictions: {:.1f} % on the steps, {:.1f} % on the operators' sums\n\n"
      "Mean error by pair of GPUs:\n\n",
      predictions.size(), mape, operators_abs / n);
  table += "| from | to | predictions | step | operators' sum |\n|---|---|---|---|---|\n";
  for (const auto& [pair, sums] : by_pair)
    table += fmt::format("| {} | {} | {} | {:+.1f} % | {:+.1f} % |\n", pair.first, pair.second, sums.n,
                         sums.step / sums.n, sums.operators / sums.n);
  fs::create_directories(MESHSCOPE_TEST_OUTPUT);
  std::ofstream(fs::path(MESHSCOPE_TEST_OUTPUT) / "hardware_validation.md") << table;
  // What the rule reaches today (23.0 %), as a guard against it getting worse.
  EXPECT_LT(mape, 25.0) << table;
}

}  // namespace
}  // namespace meshscope::compare
