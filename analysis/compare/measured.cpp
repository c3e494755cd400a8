#include "analysis/compare/measured.hpp"

#include <algorithm>

#include "analysis/model/presets.hpp"

namespace meshscope::compare {

model::ParallelConfig inferred_layout(const Workload& w) {
  model::ParallelConfig c;
  c.tp = static_cast<int>(w.tp.value_or(1));
  c.pp = static_cast<int>(w.pp.value_or(1));
  c.cp = static_cast<int>(w.cp.value_or(1));
  c.ep = static_cast<int>(w.ep.value_or(1));
  c.dp = static_cast<int>(w.dp.value_or(1));
  c.gpus = c.tp * c.pp * c.cp * c.dp;
  return c;
}

model::ParallelConfig profile_layout(const Workload& w, std::int64_t world_size, model::ParallelConfig given,
                                     bool shown, LayoutOrigins& origins) {
  const StatedLayout& said = w.stated_layout;
  auto take = [&](int& field, const std::optional<std::int64_t>& value,
                  const std::optional<std::int64_t>& stated, const char* name) {
    if (field != 0) return;
    if (stated) {
      field = static_cast<int>(*stated);
      origins.stated.push_back(name);
    } else if (shown && value && *value > 0) {
      field = static_cast<int>(*value);
      origins.shown.push_back(name);
    }
  };
  take(given.tp, w.tp, said.tp, "tp");
  take(given.pp, w.pp, said.pp, "pp");
  take(given.dp, w.dp, said.dp, "dp");
  take(given.cp, w.cp, said.cp, "cp");
  take(given.ep, w.ep, said.ep, "ep");
  take(given.micro_batch, w.micro_batch, said.micro_batch, "micro_batch");
  take(given.seq, w.seq, said.seq, "seq");
  take(given.global_batch, std::nullopt, said.global_batch, "global_batch");
  if (shown && given.global_batch == 0 && given.micro_batch > 0 && given.dp > 0) {
    // One micro-batch per step and data-parallel rank: what a profile of one step shows.
    given.global_batch = given.micro_batch * given.dp;
    origins.shown.push_back("global_batch");
  }
  // The GPUs default to the profile's world size (DESIGN.md: missing choices get sensible defaults).
  if (given.gpus == 0 && given.dp == 0) given.gpus = static_cast<int>(world_size);
  return given;
}

ProfileConfig profile_config(const Workload& w, std::int64_t world_size, model::ParallelConfig given,
                             bool shown, bool precision_given, LayoutOrigins& origins) {
  ProfileConfig out;
  out.config = profile_layout(w, world_size, given, shown, origins);
  if (w.training) {
    out.ran = *w.training ? model::Mode::kTraining : model::Mode::kInference;
    if (!out.config.mode_set) {
      out.config.mode = *out.ran;
      (w.stated_layout.mode ? origins.stated : origins.shown).push_back("mode");
    }
  }
  if (!precision_given && w.precision) {
    if (*w.precision == measure::WorkPrecision::kFP8) {
      out.config.precision = model::Precision::kFP8;
      origins.shown.push_back("precision");
    } else if (*w.precision == measure::WorkPrecision::kFP32) {
      out.precision_warning =
          "the profile's GEMMs ran in FP32, which the model does not predict: the prediction is of 16-bit "
          "GEMMs (pass --precision to choose another)";
    }
  }
  return out;
}

namespace {

// The hardware of WORKLOAD: the stated one, else the preset of its GPU, else its recorded description.
std::optional<model::HardwareSpec> hardware_of(const Workload& workload) {
  try {
    return hardware_spec(workload);
  } catch (const model::InvalidInput&) {
    return std::nullopt;  // a preset the assets folder lacks: treated as unknown hardware
  }
}

measure::MeasuredRoofline roofline_of(const measure::ProfileWork& work,
                                      const std::optional<model::HardwareSpec>& hardware) {
  return measure::measured_roofline(work, hardware ? ceilings_of(*hardware) : measure::WorkCeilings{});
}

}  // namespace

measure::WorkCeilings ceilings_of(const model::HardwareSpec& hw) {
  measure::WorkCeilings c;
  c.hardware = hw.name;
  c.peak_flops = hw.peak_tflops_bf16 * 1e12;
  c.peak_fp8_flops = hw.peak_tflops_fp8 * 1e12;
  c.fp32_is_tf32 = hw.peak_tflops_tf32 > 0;
  c.peak_fp32_flops = (c.fp32_is_tf32 ? hw.peak_tflops_tf32 : hw.peak_tflops_fp32) * 1e12;
  c.bf16 = hw.bf16;
  return c;
}

void restate(MeasuredModel& measured, const Statement& statement) {
  measured.workload = measured.recorded;
  apply_statement(statement, measured.workload);
  measured.hardware = hardware_of(measured.workload);
  if (measured.layout_inferred) measured.layout = inferred_layout(measured.workload);
  measured.roofline = roofline_of(measured.work, measured.hardware);
}

MeasuredModel measure_profile(const Profile& profile, const measure::Analysis& analysis,
                              measure::ProfileWork work, const model::ParallelConfig* layout) {
  MeasuredModel out;
  out.work = std::move(work);
  out.recorded = infer_recorded_workload(profile, out.work);
  out.workload = out.recorded;
  apply_statement(stated(profile), out.workload);
  out.hardware = hardware_of(out.workload);
  out.layout_inferred = layout == nullptr;
  out.layout = layout != nullptr ? *layout : inferred_layout(out.workload);
  out.steps = measure_steps(profile, analysis, out.layout);
  out.roofline = roofline_of(out.work, out.hardware);

  // Measured work per rank-step: the kernels with work that started inside the step's GPU window (the
  // operators the roofline left out excluded).
  std::vector<bool> plotted(out.work.ops.size(), false);
  for (std::uint32_t i : out.roofline.points) plotted[i] = true;
  out.flops_per_step = flops_per_rank_step(profile, analysis, out.work, out.steps.whole_profile, &plotted,
                                           &out.rank_steps, &out.bytes_per_step);
  // Without the output layer, as the prediction's work is (compare's coverage).
  model::ModelSpec spec;
  std::vector<bool> layers_work(out.work.ops.size(), true);
  if (inferred_model(out.workload, spec)) layers_work = without_output_layer(out.work, spec, out.layout);
  out.work_flops_per_step =
      flops_per_rank_step(profile, analysis, out.work, out.steps.whole_profile, &layers_work);
  return out;
}

}  // namespace meshscope::compare
