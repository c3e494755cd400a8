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

MeasuredModel measure_profile(const Profile& profile, const measure::Analysis& analysis,
                              const model::ParallelConfig* layout) {
  MeasuredModel out;
  out.work = measure::load_work(profile);
  out.workload = infer_workload(profile, out.work);
  if (out.workload.stated_hardware) {
    out.hardware = out.workload.stated_hardware;
  } else if (out.workload.hardware) {
    try {
      out.hardware = model::load_hardware(*out.workload.hardware);
    } catch (const model::InvalidInput&) {
      out.hardware.reset();  // a preset the assets folder lacks: treated as unknown hardware
    }
  }
  out.layout_inferred = layout == nullptr;
  out.layout = layout != nullptr ? *layout : inferred_layout(out.workload);
  out.steps = measure_steps(profile, analysis, out.layout);

  measure::WorkCeilings ceilings;
  if (out.hardware) {
    ceilings.hardware = out.hardware->name;
    ceilings.peak_flops = out.hardware->peak_tflops_bf16 * 1e12;
    ceilings.peak_fp8_flops = out.hardware->peak_tflops_fp8 * 1e12;
  }
  out.roofline = measure::measured_roofline(out.work, ceilings);

  // Measured work per rank-step: the kernels with work that started inside the step's GPU window (the
  // operators the roofline left out excluded).
  std::vector<bool> plotted(out.work.ops.size(), false);
  for (std::uint32_t i : out.roofline.points) plotted[i] = true;
  std::vector<std::vector<std::pair<TimeNs, std::uint32_t>>> starts(profile.ranks().size());
  for (std::uint32_t k = 0; k < out.work.kernels.size(); ++k) {
    const auto& share = out.work.kernels[k];
    if (!plotted[share.op]) continue;
    starts[share.rank_index].push_back(
        {profile.ranks()[share.rank_index].activities[share.activity].start_ns, k});
  }
  for (auto& list : starts) std::sort(list.begin(), list.end());
  double flops = 0, bytes = 0;
  for (const auto& rr : analysis.ranks) {
    auto add_window = [&](TimeNs begin, TimeNs end) {
      const auto& list = starts[rr.rank_index];
      auto it = std::lower_bound(list.begin(), list.end(), std::pair<TimeNs, std::uint32_t>{begin, 0});
      for (; it != list.end() && it->first <= end; ++it) {
        flops += out.work.kernels[it->second].flops;
        bytes += out.work.kernels[it->second].bytes;
      }
      ++out.rank_steps;
    };
    bool any = false;
    for (const auto& s : rr.steps) {
      if (s.gpu.activities > 0 && !out.steps.whole_profile) {
        add_window(s.gpu.start_ns, s.gpu.end_ns);
        any = true;
      }
    }
    if (!any && out.steps.whole_profile && rr.total.span_ns > 0)
      add_window(rr.total.start_ns, rr.total.end_ns);
  }
  if (out.rank_steps > 0) {
    out.flops_per_step = flops / static_cast<double>(out.rank_steps);
    out.bytes_per_step = bytes / static_cast<double>(out.rank_steps);
  }
  return out;
}

}  // namespace meshscope::compare
