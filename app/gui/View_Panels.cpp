// View_Panels.cpp: what the view hands each panel object (the open profile, the Explorer's prediction, the
// baseline) and what it does with what they answer; the accessors tests and scripts read through the view.
#include <imgui.h>

#include "analysis/compare/measured.hpp"
#include "app/gui/View.hpp"
#include "app/gui/explorer_panel.hpp"
#include "app/gui/gui_util.hpp"
#include "app/gui/planner_panel.hpp"
#include "app/gui/roofline_panel.hpp"
#include "app/gui/summary_panel.hpp"

namespace meshscope::gui {

void View::draw_roofline() {
  explorer_->repredict_if_changed();
  if (!explorer_->ready()) {
    ImGui::TextColored(to_vec4(kColExposed), "%s", explorer_->spec_error().c_str());
    return;
  }
  const ExplorerPanel& ex = *explorer_;
  roofline_->draw(loaded_.get(), {.hardware = &ex.hardware(),
                                  .hardware_note = ex.hardware_note(),
                                  .precision = ex.layout().precision,
                                  .model = &ex.model(),
                                  .gpus = ex.resolved().gpus,
                                  .operations = &ex.roofline_operations(),
                                  .prediction = ex.prediction(),
                                  .layout_error = ex.layout_error(),
                                  .start = &ex.start()});
}

void View::draw_summary() {
  const ExplorerPanel& ex = *explorer_;
  const auto followed = summary_->draw(
      loaded_.get(), loading(),
      {.hardware = &ex.hardware(),
       .hardware_note = ex.hardware_note(),
       .efficiencies = &ex.efficiencies(),
       .ready = ex.ready()},
      {.loaded = bl_.loaded.get(), .busy = bl_.busy.load(), .error = bl_.error, .diff = baseline_diff()});
  if (followed) show_on_timeline(*followed);
}

void View::draw_planner() {
  explorer_->repredict_if_changed();
  const ExplorerPanel& ex = *explorer_;
  planner_->draw({.gpus = ex.layout().gpus,
                  .model = &ex.model(),
                  .hardware = &ex.hardware(),
                  .prediction = ex.prediction()});
}

void View::restate_loaded() {
  if (!loaded_ || !loaded_->measured || !saved_statement_) return;
  auto copy = std::make_shared<LoadedProfile>(*loaded_);
  compare::MeasuredModel& m = *copy->measured;
  compare::restate(m, *saved_statement_);
  // The exposed communication split by the stated layout, where the events are at hand (a lazily loaded
  // profile's steps were measured on a sample of its ranks and keep their split).
  if (!copy->lazy && m.layout_inferred)
    m.steps = compare::measure_steps(*copy->profile, copy->analysis(), m.layout);
  copy->start = profile_start(m, copy->profile->world_size());
  copy->roofline = measured_points(m);
  loaded_ = std::move(copy);
}

const std::vector<measure::Finding>& View::stands_out() const {
  return summary_->findings();
}

const std::string& View::summary_gpu_line() const {
  return summary_->gpu_line();
}

const RooflineShown& View::roofline_shown() const {
  return roofline_->shown();
}

void View::configure_explorer(const std::string& model_name, int layers, int hidden, int heads, int seq,
                              int gpus, int tp, int global_batch) {
  explorer_->configure(model_name, layers, hidden, heads, seq, gpus, tp, global_batch);
}

void View::set_layout(int gpus, int tp, int pp, int cp, int ep, int etp) {
  explorer_->set_layout(gpus, tp, pp, cp, ep, etp);
}

void View::set_global_batch(int sequences) {
  explorer_->set_global_batch(sequences);
}

void View::set_micro_batch(int sequences) {
  explorer_->set_micro_batch(sequences);
}

void View::set_explorer_mode(model::Mode mode) {
  explorer_->set_mode(mode);
}

bool View::explorer_searching() const {
  return explorer_->searching();
}

const model::Prediction* View::prediction() const {
  return explorer_->prediction();
}

const ProfileStart& View::explorer_start() const {
  return explorer_->start();
}

const compare::MeasuredStep* View::explorer_measured_shown() const {
  return explorer_->measured_shown();
}

const ExplorerReplay& View::explorer_replay_shown() const {
  return explorer_->replay_shown();
}

const std::vector<MeasuredPipelineRow>& View::measured_pipeline_rows() const {
  return explorer_->measured_pipeline_rows();
}

void View::explorer_use_measured_pipeline() {
  explorer_->use_measured_pipeline();
}

const std::string& View::layout_error() const {
  return explorer_->layout_error();
}

}  // namespace meshscope::gui
