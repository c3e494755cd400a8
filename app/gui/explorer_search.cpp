#include "app/gui/explorer_search.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <set>
#include <string_view>

#include <fmt/format.h>

namespace meshscope::gui {

namespace {

// One integer field of the layouts of a group: "ZeRO 1-3" when it varies, nothing when it does not.
void describe_range(std::string& out, const char* name, const std::vector<int>& values) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  if (*lo == *hi) return;
  if (!out.empty()) out += ", ";
  out += fmt::format("{} {}-{}", name, *lo, *hi);
}

// One named field: "recompute none/selective".
void describe_names(std::string& out, const char* name, const std::vector<std::string>& values) {
  std::vector<std::string> distinct;
  for (const std::string& v : values) {
    if (std::find(distinct.begin(), distinct.end(), v) == distinct.end()) distinct.push_back(v);
  }
  if (distinct.size() < 2) return;
  if (!out.empty()) out += ", ";
  out += name;
  out += ' ';
  for (std::size_t i = 0; i < distinct.size(); ++i) out += (i ? "/" : "") + distinct[i];
}

std::string what_varies(const std::vector<model::Prediction>& top, std::size_t first, std::size_t count) {
  std::vector<int> tp, pp, dp, cp, ep, mb, zero;
  std::vector<std::string> recompute, schedule;
  for (std::size_t i = first; i < first + count; ++i) {
    const model::ParallelConfig& c = top[i].config;
    tp.push_back(c.tp);
    pp.push_back(c.pp);
    dp.push_back(c.dp);
    cp.push_back(c.cp);
    ep.push_back(c.ep);
    mb.push_back(c.micro_batch);
    zero.push_back(c.zero);
    recompute.emplace_back(model::to_string(c.recompute));
    schedule.push_back(c.schedule == model::Schedule::kInterleaved
                           ? fmt::format("interleaved v{}", c.virtual_stages)
                           : std::string(model::to_string(c.schedule)));
  }
  std::string out;
  describe_range(out, "TP", tp);
  describe_range(out, "PP", pp);
  describe_range(out, "DP", dp);
  describe_range(out, "CP", cp);
  describe_range(out, "EP", ep);
  describe_range(out, "micro-batch", mb);
  describe_range(out, "ZeRO", zero);
  describe_names(out, "recompute", recompute);
  describe_names(out, "schedule", schedule);
  return out;
}

}  // namespace

std::vector<LayoutGroup> group_equal_layouts(const std::vector<model::Prediction>& top, double tolerance,
                                             std::size_t max_groups) {
  std::vector<LayoutGroup> groups;
  std::size_t i = 0;
  while (i < top.size() && groups.size() < max_groups) {
    std::size_t j = i + 1;
    while (j < top.size() && top[j].fits == top[i].fits &&
           std::abs(top[j].step_time_s - top[i].step_time_s) <= tolerance * top[i].step_time_s)
      ++j;
    groups.push_back({i, j - i, j - i > 1 ? what_varies(top, i, j - i) : std::string()});
    i = j;
  }
  return groups;
}

ExplorerSearch run_explorer_search(model::ModelSpec model, model::HardwareSpec hw, model::Efficiencies eff,
                                   model::SearchOptions options, std::size_t rows) {
  ExplorerSearch out;
  // Equal within 0.05 %: below what the step-time column shows, so merged rows would read the same anyway.
  constexpr double kTolerance = 5e-4;
  options.top = static_cast<int>(rows * 4);
  try {
    out.result = model::search(model, hw, eff, options);
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  out.groups = group_equal_layouts(out.result.top, kTolerance, rows);
  if (out.result.fitting > 0 || out.result.evaluated == 0) return out;
  // Nothing fits: the search already tried every ZeRO stage and recompute setting, so more GPUs is what
  // would.
  model::SearchOptions more = options;
  more.top = 1;
  more.global_batch = out.result.global_batch;
  for (int factor = 2; factor <= 64; factor *= 2) {
    more.gpus = options.gpus * factor;
    out.tried_up_to_gpus = more.gpus;
    try {
      const model::SearchResult r = model::search(model, hw, eff, more);
      if (r.fitting > 0 && !r.top.empty()) {
        out.fits_from_gpus = more.gpus;
        out.fits_from_best = r.top.front();
        break;
      }
    } catch (const std::exception&) {
      // No valid layout on that many GPUs at this batch: try the next.
    }
  }
  return out;
}

}  // namespace meshscope::gui
