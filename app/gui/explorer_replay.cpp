// explorer_replay.cpp: the Explorer's TP, DP, PP and global-batch controls driving a replay of the measured
// run (docs/WHATIF.md). When the layout chosen differs from what the open profile ran in its tensor- and
// data-parallel degrees, its pipeline degree (from one stage) and its global batch only, the profile's
// dependency graph is replayed with the layout edits of `whatif --tp --dp --pp --batch`
// (compare::whatif_edits; each rank's batch follows the global batch over the replicas, as the model's does;
// from one replica, DDP's work added; from one stage, the replay cut into stages and scheduled) and the
// change of its mean step is shown beside the model's prediction, saying which parts come from the replay
// (the measured kernels, launches, host work and waits, moved by their dependencies) and which from the model
// (the split of the sharded kernels, the collectives' α-β times).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "analysis/compare/link_edits.hpp"
#include "analysis/compare/measured.hpp"
#include "analysis/compare/whatif_request.hpp"
#include "app/gui/explorer_panel.hpp"
#include "app/gui/gui_util.hpp"
#include "profiler/error.hpp"

namespace meshscope::gui {
namespace {

// The mean of the replayed steps (as measured, or with the edits).
double mean_step_ns(const measure::Replay& replay) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& s : replay.steps) {
    if (s.replayed_ns <= 0) continue;
    sum += static_cast<double>(s.replayed_ns);
    ++n;
  }
  return n > 0 ? sum / static_cast<double>(n) : 0;
}

// The mean over steps of the pipelined step: each step's slowest stage (the stages end it together).
double mean_pipelined_ns(const compare::Pipelined& p) {
  std::map<std::pair<std::int32_t, std::int64_t>, TimeNs> steps;
  for (const compare::PipelinedStep& s : p.steps) {
    TimeNs& t = steps[{s.measured_rank, s.step}];
    t = std::max(t, s.predicted_ns);
  }
  double sum = 0;
  for (const auto& [key, t] : steps) sum += static_cast<double>(t);
  return steps.empty() ? 0 : sum / static_cast<double>(steps.size());
}

}  // namespace

// Replays the open profile with the layout edit from the degrees it ran (RAN_TP, RAN_DP, RAN_PP) to NOW's.
void ExplorerPanel::run_replay(const model::ParallelConfig& now, int ran_tp, int ran_dp, int tp, int dp,
                               int ran_pp) {
  ExplorerReplay& out = ex_.replay;
  out = {};
  out.for_layout = now;
  out.ran_tp = ran_tp;
  out.ran_dp = ran_dp;
  out.tp = tp;
  out.dp = dp;
  out.ran_pp = ran_pp;
  out.pp = now.pp;
  const compare::MeasuredModel& measured = *loaded_->measured;
  compare::WhatifRequest request;
  if (tp != ran_tp) request.tp = tp;
  if (dp != ran_dp) request.dp = dp;
  if (now.pp != ran_pp) {
    request.pp = now.pp;
    request.micro_batches = std::max(1, split_of(now));
    out.micro_batch_split = request.micro_batches;
  }
  const bool micro_batch_unknown = now.pp != ran_pp && !ex_.start.layout_known;
  const std::optional<double> scale = batch_scale(now, ran_dp, dp);
  out.batch_scale = scale.value_or(1.0);
  request.batch = out.batch_scale;
  try {
    // The same edits as `whatif --tp --dp --batch` (from one replica, DDP's work added).
    compare::WhatifEdits whatif =
        compare::whatif_edits(*loaded_->profile, loaded_->analysis(), measured.work, measured.workload,
                              request, nullptr, loaded_->source.filename().string());
    const measure::ReplayEdits& edits = whatif.edits;
    measure::ReplayGraph& graph = host_.replay_graph();
    out.measured_ns = mean_step_ns(graph.run());
    out.notes = std::move(whatif.notes);
    if (whatif.pipeline) {
      const measure::Replay replay = graph.run(edits, true);
      compare::Pipelined pipelined = compare::pipeline_stages(
          *loaded_->profile, loaded_->analysis(), edits, replay, whatif.pipeline->shares, whatif.pipeline->hw,
          whatif.pipeline->request, loaded_->source.filename().string());
      out.edited_ns = mean_pipelined_ns(pipelined);
      out.notes.insert(out.notes.end(), pipelined.notes.begin(), pipelined.notes.end());
    } else {
      out.edited_ns = mean_step_ns(graph.run(edits));
    }
    if (!scale)
      out.notes.push_back(
          "the global batch the profile ran, or the one chosen, is not known: each rank's batch as measured");
    if (micro_batch_unknown)
      out.notes.push_back("the micro-batch the profile ran is not known: each micro-batch as measured");
    out.done = out.measured_ns > 0;
    if (!out.done) out.error = "the replay holds no step with GPU work";
  } catch (const Error& e) {
    out.error = e.what();
  }
}

// Each rank's sequences per step at NOW over those the profile ran: the global batch chosen (as the
// prediction resolved it) over DP replicas against the one the profile ran (as the Explorer started) over
// RAN_DP. Nothing where either global batch is unknown.
std::optional<double> ExplorerPanel::batch_scale(const model::ParallelConfig& now, int ran_dp, int dp) const {
  const int ran_batch = ex_.start.layout_known ? ex_.start.layout.global_batch : 0;
  const int batch = ex_.valid ? ex_.resolved.global_batch : now.global_batch;
  if (!(ran_batch > 0 && batch > 0 && dp > 0 && ran_dp > 0)) return std::nullopt;
  return (static_cast<double>(batch) / dp) / (static_cast<double>(ran_batch) / ran_dp);
}

// Whether NOW differs from what the profile ran in its TP, DP and PP only (PP from one stage): its CP and EP
// (and, where the Explorer started from the profile's own layout, everything else) as the profile ran them.
bool ExplorerPanel::only_tp_dp_pp(const model::ParallelConfig& now) const {
  const compare::Workload& w = loaded_->measured->workload;
  // PP from one stage only, scheduled 1F1B as `whatif --pp` schedules it.
  if (now.pp != w.pp.value_or(1) && (w.pp.value_or(1) != 1 || now.schedule != model::Schedule::k1F1B))
    return false;
  if (now.cp != w.cp.value_or(1) || now.ep != w.ep.value_or(1)) return false;
  if (!ex_.start.layout_known) return true;
  model::ParallelConfig others = now;
  const model::ParallelConfig& ran = ex_.start.layout;
  others.tp = ran.tp;
  others.dp = ran.dp;
  others.pp = ran.pp;
  // The stages' own settings follow the pipeline degree: its schedule, its chunks.
  others.schedule = ran.schedule;
  others.schedule_set = ran.schedule_set;
  others.virtual_stages = ran.virtual_stages;
  others.gpus = ran.gpus;
  others.global_batch = ran.global_batch;
  // Pipelined from one stage, a micro-batch that divides the measured one: each run as several
  // (`whatif --micro-batches`).
  if (now.pp != ran.pp && split_of(now) > 0) others.micro_batch = ran.micro_batch;
  return others == ran;
}

// How many micro-batches each measured one becomes at NOW's micro-batch: the measured one, times each rank's
// batch factor at NOW (batch_scale), over NOW's, when that is a whole number; 0 when it is not, or the
// measured micro-batch is not known.
int ExplorerPanel::split_of(const model::ParallelConfig& now) const {
  const compare::Workload& w = loaded_->measured->workload;
  const int ran = ex_.start.layout_known ? ex_.start.layout.micro_batch : 0;
  if (ran <= 0 || now.micro_batch <= 0 || !w.dp) return 0;
  const double factor = batch_scale(now, static_cast<int>(*w.dp), auto_dp(now)).value_or(1.0);
  const double k = ran * factor / now.micro_batch;
  if (!(k >= 1) || k > 4096 || std::abs(k - std::round(k)) > 1e-9) return 0;
  return static_cast<int>(std::lround(k));
}

// Below the measured column: the measured run replayed at the layout chosen, when only TP and DP differ from
// what the profile ran (its process groups, or what it states).
void ExplorerPanel::draw_replay() {
  const compare::Workload& w = loaded_->measured->workload;
  const model::ParallelConfig& now = ex_.layout;
  const int ran_pp = static_cast<int>(w.pp.value_or(1));
  if (!w.tp || !w.dp ||
      (now.tp == *w.tp && auto_dp(now) == *w.dp && now.pp == ran_pp &&
       batch_scale(now, static_cast<int>(*w.dp), auto_dp(now)).value_or(1.0) == 1.0)) {
    ex_.replay = {};
    return;
  }
  const int ran_tp = static_cast<int>(*w.tp), ran_dp = static_cast<int>(*w.dp);
  const int tp = now.tp, dp = auto_dp(now);
  ImGui::Spacing();
  ImGui::TextDisabled("REPLAY OF THE MEASURED RUN AT THIS LAYOUT (whatif --tp --dp --pp --batch)");
  ImGui::PushTextWrapPos(0);
  if (!only_tp_dp_pp(now)) {
    ex_.replay = {};
    ImGui::TextDisabled(
        "The replay follows TP, DP, PP (from one stage, with the 1F1B schedule) and the global batch "
        "only: set the other controls back to what the profile ran to see the measured run replayed at this "
        "TP, DP, PP "
        "and global batch.");
  } else if (loaded_->lazy || !loaded_->events) {
    ex_.replay = {};
    ImGui::TextDisabled("The replay needs every rank's events: this large job is open on its summaries.");
  } else {
    if (!(ex_.replay.for_layout == now) || !(ex_.replay.done || !ex_.replay.error.empty()))
      run_replay(now, ran_tp, ran_dp, tp, dp, ran_pp);
    const ExplorerReplay& r = ex_.replay;
    if (!r.done) {
      ImGui::TextColored(to_vec4(kColExposed), "Not replayed: %s", r.error.c_str());
    } else {
      const double ratio = r.edited_ns / r.measured_ns;
      char a[32], b[32];
      ImGui::TextColored(
          to_vec4(kColMemory),
          "tp %d -> %d, dp %d -> %d, pp %d -> %d%s, each rank's batch x %.3g: replayed step %s -> %s "
          "(%+.1f %%; the mean step from its CPU range's start to the end of the GPU work it launched, as "
          "`whatif` measures it; pipelined, its slowest stage's)",
          r.ran_tp, r.tp, r.ran_dp, r.dp, r.ran_pp, r.pp,
          r.micro_batch_split > 1 ? fmt::format(" (each micro-batch as {})", r.micro_batch_split).c_str()
                                  : "",
          r.batch_scale, seconds_text(a, sizeof a, r.measured_ns / 1e9),
          seconds_text(b, sizeof b, r.edited_ns / 1e9), 100.0 * (ratio - 1.0));
      ImGui::TextDisabled(
          "From the replay: every kernel, copy, launch, host gap and wait as measured, moved by its "
          "dependencies. From the model: the split of the sharded kernels (x tp / N), each rank's share of "
          "the global batch, the re-timed collectives' alpha-beta times, from one GPU the collectives and "
          "copies DDP and Megatron-LM would add, and from one stage the cut of each pass into stages, their "
          "1F1B schedule and the sends between them (hover for what each was scaled by or added).");
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        for (const auto& n : r.notes) ImGui::BulletText("%s", n.c_str());
        ImGui::EndTooltip();
      }
    }
  }
  ImGui::PopTextWrapPos();
}

}  // namespace meshscope::gui
