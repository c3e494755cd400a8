// View_Baseline.cpp: a second profile opened as the baseline. A worker thread loads it (as any profile:
// import when needed, load, measured analysis, timeline index) and diffs it with the open profile
// (measure::diff_summaries of the two profiles' summaries, the baseline as A, the open profile as B: deltas
// read "this run minus the baseline"). The Summary shows the diff beside both runs' figures
// (summary_panel.cpp); the timeline can stack the baseline's rows under each rank of the same number
// (BaselineItem, timeline_items.cpp). When the open profile changes, the diff is computed again for it on the
// worker.
#include <algorithm>
#include <utility>

#include "analysis/model/presets.hpp"
#include "app/gui/View.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/lazy_ranks.hpp"
#include "app/gui/timeline_panel.hpp"
#include "profiler/error.hpp"

namespace meshscope::gui {

namespace {

bool same_owner(const std::weak_ptr<LoadedProfile>& a, const std::shared_ptr<LoadedProfile>& b) {
  return b && !a.owner_before(b) && !b.owner_before(a);
}

}  // namespace

void View::open_baseline(const std::vector<std::filesystem::path>& paths) {
  if (paths.empty() || bl_.busy.load()) return;
  baseline_start(paths);
}

// Loads PATHS as the new baseline (none: keeps the current one) and diffs it with the open profile, on the
// worker thread; baseline_poll() installs the result.
void View::baseline_start(std::vector<std::filesystem::path> paths) {
  if (bl_.worker.joinable()) bl_.worker.join();
  bl_.busy = true;
  bl_.paths = paths;
  std::shared_ptr<LoadedProfile> base = paths.empty() ? bl_.loaded : nullptr;
  std::shared_ptr<LoadedProfile> primary = loaded_;
  bl_.worker = std::jthread([this, paths = std::move(paths), base, primary, open = options_.open]() mutable {
    std::shared_ptr<const measure::Diff> diff;
    std::string error;
    try {
      // A large baseline opens on its summaries (lazy ranks), which are all its diff reads.
      if (!paths.empty()) base = load_profile(paths, {}, {}, {}, open);
      if (base && primary)
        diff =
            std::make_shared<const measure::Diff>(measure::diff_summaries(*base->summary, *primary->summary));
    } catch (const std::exception& e) {
      error = "baseline: " + std::string(e.what());
      if (!paths.empty()) base = nullptr;
    }
    std::lock_guard lock(bl_.mutex);
    bl_.pending = true;
    bl_.pending_loaded = error.empty() || paths.empty() ? base : nullptr;  // a failed load: none
    bl_.pending_diff = std::move(diff);
    bl_.pending_of = primary;
    bl_.pending_error = std::move(error);
    bl_.busy = false;
  });
}

void View::request_whatif(compare::WhatifRequest request, std::string text) {
  wi_.requested = std::move(request);
  wi_.requested_text = std::move(text);
}

// The replay edits of REQUEST on the open profile, as `whatif` makes them (compare::whatif_edits): the
// hardware, layout and link edits from the measured model's workload and work. Throws with one line.
compare::WhatifEdits View::whatif_edits(const compare::WhatifRequest& request) {
  if (request.needs_workload() && !loaded_->measured)
    throw Error("the hardware, layout and link edits need the measured model: " + loaded_->measured_error);
  std::optional<model::HardwareSpec> target;
  if (!request.hardware.empty()) target = model::load_hardware(request.hardware);
  static const compare::Workload kNoWorkload;
  static const measure::ProfileWork kNoWork;
  const compare::Workload& workload = loaded_->measured ? loaded_->measured->workload : kNoWorkload;
  const measure::ProfileWork& work = loaded_->measured ? loaded_->measured->work : kNoWork;
  return compare::whatif_edits(*loaded_->profile, loaded_->analysis(), work, workload, request,
                               target ? &*target : nullptr, loaded_->source.filename().string());
}

void View::run_whatif() {
  const compare::WhatifRequest request = std::move(*wi_.requested);
  wi_.requested.reset();
  if (loaded_->lazy) {
    wi_.error = "what-if replays every rank's events: this large job is open on its summaries (--lazy never)";
    bl_.error = wi_.error;
    return;
  }
  compare::WhatifEdits whatif_request;
  try {
    whatif_request = whatif_edits(request);
  } catch (const std::exception& e) {
    wi_.error = e.what();
    bl_.error = "what-if: " + wi_.error;
    return;
  }
  const measure::ReplayEdits& edits = whatif_request.edits;
  std::shared_ptr<const Profile> profile;
  measure::Replay replay;
  std::int32_t pipeline_world = 0;
  try {
    replay = replay_graph().run(edits, true);
    Profile replayed = measure::replayed_profile(*loaded_->profile, replay, edits);
    if (const auto& pp = whatif_request.pipeline) {
      // --pp: the replay cut into stages, each stage's rank drawn under the rank it came from.
      const compare::Pipelined pipelined =
          compare::pipeline_stages(*loaded_->profile, loaded_->analysis(), edits, replay, pp->shares, pp->hw,
                                   pp->request, loaded_->source.filename().string());
      profile = std::make_shared<const Profile>(compare::pipelined_profile(replayed, pipelined, pp->shares));
      replay.steps = compare::pipelined_steps(pipelined);
      pipeline_world = pipelined.world;
    } else {
      profile = std::make_shared<const Profile>(std::move(replayed));
    }
  } catch (const std::exception& e) {
    wi_.error = e.what();
    bl_.error = "what-if: " + wi_.error;
    return;
  }
  std::unique_ptr<LoadedProfile> whatif = index_profile(std::move(profile), nullptr);
  whatif->source = loaded_->source;
  whatif->msdb = loaded_->msdb;
  whatif->baseline_name = "what-if";
  whatif->whatif_edits = wi_.requested_text.empty() ? "replay" : wi_.requested_text;
  whatif->whatif_steps = std::move(replay.steps);
  whatif->pipeline_world = pipeline_world;
  wi_.error.clear();
  set_baseline(std::move(whatif));
  set_baseline_stacked(true);
}

void View::baseline_poll() {
  if (!bl_.busy.load()) {
    std::unique_lock lock(bl_.mutex);
    if (bl_.pending) {
      bl_.pending = false;
      bl_.error = std::move(bl_.pending_error);
      bl_.pending_error.clear();
      // A baseline that failed to load leaves the current one (and says why).
      if (bl_.pending_loaded) {
        if (bl_.pending_loaded != bl_.loaded) timeline_->drop_items();
        bl_.loaded = std::move(bl_.pending_loaded);
        bl_.diff = std::move(bl_.pending_diff);
        bl_.diff_of = bl_.pending_of;
      }
      bl_.pending_loaded.reset();
      bl_.pending_diff.reset();
    }
  }
  if (wi_.graph && wi_.graph_of.lock() != loaded_) wi_.graph.reset();  // another profile is open: not kept
  if (wi_.requested && loaded_ && loaded_->events && !loading_.load() && !bl_.busy.load()) run_whatif();
  // A baseline with no diff for the open profile (opened before it, or the profile changed): diff again.
  if (!bl_.busy.load() && bl_.loaded && loaded_ && bl_.error.empty() && !same_owner(bl_.diff_of, loaded_))
    baseline_start({});
}

void View::set_baseline(std::unique_ptr<LoadedProfile> baseline) {
  if (bl_.worker.joinable()) bl_.worker.join();
  {
    std::lock_guard lock(bl_.mutex);
    bl_.pending = false;
  }
  timeline_->drop_items();
  bl_.error.clear();
  bl_.loaded = std::move(baseline);
  bl_.diff.reset();
  bl_.diff_of.reset();
  if (bl_.loaded && loaded_) {
    bl_.diff = std::make_shared<const measure::Diff>(
        measure::diff_summaries(*bl_.loaded->summary, *loaded_->summary));
    bl_.diff_of = loaded_;
  }
}

void View::close_baseline() {
  if (bl_.worker.joinable()) bl_.worker.join();
  {
    std::lock_guard lock(bl_.mutex);
    bl_.pending = false;
    bl_.pending_loaded.reset();
    bl_.pending_diff.reset();
  }
  timeline_->drop_items();
  bl_.loaded.reset();
  bl_.diff.reset();
  bl_.diff_of.reset();
  bl_.error.clear();
}

const measure::Diff* View::baseline_diff() const {
  return bl_.diff && same_owner(bl_.diff_of, loaded_) ? bl_.diff.get() : nullptr;
}

void View::set_baseline_stacked(bool stacked) {
  if (stacked == bl_.stacked) return;
  bl_.stacked = stacked;
  timeline_->drop_items();
}

// The toolbar's What-if... button (disabled for a large job open on its summaries) and its editor: edits as
// one line, as `whatif` takes them (compare::parse_whatif_line), replayed when given.
void View::whatif_button() {
  same_line_if_fits(button_width("What-if..."));
  ImGui::BeginDisabled(loaded_->lazy.has_value());
  if (ImGui::Button("What-if...")) ImGui::OpenPopup("##whatif");
  ImGui::EndDisabled();
  note_if_past_edge();
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(loaded_->lazy ? "What-if replays every rank's events: this large job is open on its "
                                      "summaries (open it with --lazy never)"
                                    : "Replay this run by its dependency graph, with edits (GEMMs faster, "
                                      "communication slower, the straggler on time),\nand show the replay "
                                      "under each rank (docs/WHATIF.md)");
  if (!ImGui::BeginPopup("##whatif")) return;
  ImGui::TextUnformatted("Replay this run by its dependency graph, changed (docs/WHATIF.md)");
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 22);
  const bool entered =
      ImGui::InputText("edits", wi_.text, sizeof wi_.text, ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::TextDisabled("CLASS=F or PATTERN=F (gemm, attention, conv, norm, elementwise, comm, memcpy),");
  ImGui::TextDisabled(
      "fix-straggler, --tp N, --dp N, --link DOMAIN=GB/s, --latency DOMAIN=us, --hardware GPU;");
  ImGui::TextDisabled("empty: the replay as measured");
  if (ImGui::Button("Replay") || entered) {
    compare::WhatifRequest request;
    std::string error;
    if (compare::parse_whatif_line(wi_.text, request, error)) {
      request_whatif(std::move(request), wi_.text);
      wi_.error.clear();
      ImGui::CloseCurrentPopup();
    } else {
      wi_.error = error;
    }
  }
  if (!wi_.error.empty()) ImGui::TextColored(to_vec4(kColExposed), "%s", wi_.error.c_str());
  ImGui::EndPopup();
}

measure::ReplayGraph& View::replay_graph() {
  if (!wi_.graph || wi_.graph_of.lock() != loaded_ || wi_.graph_profile != loaded_->profile.get()) {
    wi_.graph.reset();
    wi_.graph = std::make_unique<measure::ReplayGraph>(*loaded_->profile, loaded_->analysis());
    wi_.graph_of = loaded_;
    wi_.graph_profile = loaded_->profile.get();
  }
  return *wi_.graph;
}

}  // namespace meshscope::gui
