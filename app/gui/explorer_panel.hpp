// The Explorer panel: the model, hardware and parallel layout as controls, the prediction they give
// (memory, step time and its parts, the pipeline), the best layouts found by a search, and beside them what
// the open profile measured (its step, its pipeline, its run replayed at the layout chosen). A panel object:
// it owns its controls, prediction and search; the view hands it the open profile and what it cannot do
// itself (the replay graph it shares with the timeline's what-if, re-stating a profile whose statement was
// saved). The Roofline, Summary and Planner panels draw from its current prediction.
#pragma once

#include <imgui.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/statement.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/model/predict.hpp"
#include "analysis/model/roofline.hpp"
#include "analysis/model/timeline.hpp"
#include "app/gui/explorer_search.hpp"
#include "app/gui/explorer_steps.hpp"
#include "app/gui/loaded_profile.hpp"

namespace meshscope {
class JsonWriter;
}  // namespace meshscope

namespace meshscope::gui {

// The Explorer's replay of the measured run at the layout chosen (explorer_replay.cpp): the layout it was run
// for, the degrees the profile ran and the chosen ones, the mean replayed step as measured and with the edit.
struct ExplorerReplay {
  model::ParallelConfig for_layout;
  int ran_tp = 0, ran_dp = 0, tp = 0, dp = 0;
  int ran_pp = 1, pp = 1;     // pp from one stage: the replay cut into stages (compare::pipeline_stages)
  int micro_batch_split = 1;  // with pp: each measured micro-batch run as this many (whatif --micro-batches)
  // Each rank's sequences per step at the layout chosen over the profile's (global batch / dp); 1 where
  // either global batch is unknown.
  double batch_scale = 1;
  double measured_ns = 0, edited_ns = 0;
  bool done = false;
  std::string error;               // why there is no replay ("" with one)
  std::vector<std::string> notes;  // what the edit scaled (compare::retime_layout)
};

// The measured pipeline's rows as the Explorer drew them last frame (pipeline_measured.cpp): one per stage.
struct MeasuredPipelineRow {
  std::int32_t stage, rank;
  std::int64_t step;
  std::int32_t blocks;     // forward and backward blocks drawn
  double bubble_fraction;  // the stage's measured bubble in that step
  float y0, y1;
};

class ExplorerPanel {
 public:
  // What the view lends the panel.
  struct Host {
    // The view's open profile (its own pointer, so that the panel always sees the profile shown).
    const std::shared_ptr<LoadedProfile>* loaded = nullptr;
    // The open profile's replay graph, built once and shared with the timeline's what-if.
    std::function<measure::ReplayGraph&()> replay_graph;
    // STATEMENT was saved in the open profile: the view shows the profile as stating it.
    std::function<void(const compare::Statement& statement)> saved;
  };
  explicit ExplorerPanel(Host host);

  void draw();
  // The presets, read once (the first frame, or a test before it).
  void init();
  // The model, hardware and layout the open profile ran (ProfileStart) become the controls' values.
  void open_profile();
  // A new profile is open: the last save's message goes.
  void forget_save() { ex_.save_message.clear(); }
  // Re-predicts when a control changed since the last prediction (the panels that read it call this first).
  void repredict_if_changed() {
    if (ex_.dirty) repredict();
  }

  // Its model (a preset name with shape overrides, 0 = the preset's) and layout (View::configure_explorer).
  void configure(const std::string& model_name, int layers, int hidden, int heads, int seq, int gpus, int tp,
                 int global_batch);
  void set_layout(int gpus, int tp, int pp, int cp, int ep, int etp);
  void set_mode(model::Mode mode);
  void set_global_batch(int sequences);
  void set_micro_batch(int sequences);
  void use_measured_pipeline();

  // What it predicts from: ready once the presets are read (else SPEC_ERROR says why).
  bool ready() const { return ex_.ready; }
  const std::string& spec_error() const { return ex_.spec_error; }
  const model::ModelSpec& model() const { return ex_.model; }
  const model::HardwareSpec& hardware() const { return ex_.hw; }
  const model::Efficiencies& efficiencies() const { return ex_.eff; }
  const model::ParallelConfig& layout() const { return ex_.layout; }      // as the controls show it
  const model::ParallelConfig& resolved() const { return ex_.resolved; }  // as the prediction resolved it
  // Where its hardware came from ("the profile's GPU '...'", "chosen in the Explorer; ...").
  std::string hardware_note() const;
  // The prediction and the layout's roofline operations; null when the layout does not resolve (ERROR).
  const model::Prediction* prediction() const { return ex_.valid ? &ex_.prediction : nullptr; }
  const std::vector<model::RooflineOperation>& roofline_operations() const { return ex_.roofline; }
  const std::string& layout_error() const { return ex_.error; }
  const ProfileStart& start() const { return ex_.start; }
  const compare::MeasuredStep* measured_shown() const { return ex_.measured_shown; }
  const ExplorerReplay& replay_shown() const { return ex_.replay; }
  const std::vector<MeasuredPipelineRow>& measured_pipeline_rows() const { return pipeline_rows_; }
  // A search still running: one that finished while no one drew the Explorer (which takes its result) is not.
  bool searching() const {
    return ex_.search_job.valid() &&
           ex_.search_job.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
  }
  // The state dump's "explorer": the layout fields, the start, the save button and the measured pipeline's
  // rows, the controls' rectangles.
  void dump_state(JsonWriter& j) const;

 private:
  void layout_controls();
  bool step_control(LayoutField field, const char* help);
  void inferred_line();
  void apply_shape();
  void repredict();
  void run_search();
  void apply(const model::ParallelConfig& config);
  void draw_pipeline(float height);
  void draw_bars();
  void draw_measured();
  void draw_replay();  // explorer_replay.cpp
  void run_replay(const model::ParallelConfig& now, int ran_tp, int ran_dp, int tp, int dp, int ran_pp);
  std::optional<double> batch_scale(const model::ParallelConfig& now, int ran_dp, int dp) const;
  bool only_tp_dp_pp(const model::ParallelConfig& now) const;
  int split_of(const model::ParallelConfig& now) const;
  // Saves the model, hardware and layout in the open profile as what it ran (its meta table,
  // analysis/compare/statement.hpp), and has the view show the profile as stating them.
  void save_statement();
  void save_button();
  void draw_measured_pipeline();  // pipeline_measured.cpp

  Host host_;
  const std::shared_ptr<LoadedProfile>& loaded_;  // *host_.loaded
  struct State {
    bool ready = false;
    std::vector<std::string> models, hardware;
    int model_index = 0, hardware_index = 0;
    int inferred_index = -1;  // the models entry that is the open profile's inferred model, -1 none
    // The hardware entry that is the open profile's own hardware when no preset is it: the hardware stated in
    // the profile, or its GPU described from the profile's records.
    int own_hw_index = -1;
    model::HardwareSpec own_hw;
    std::string save_message;  // what the last "save as what the profile ran" did
    bool save_failed = false;
    ImVec4 save_button_rect = {};  // where that button was drawn (state dump)
    model::ModelSpec inferred;     // that model (compare::inferred_model)
    ProfileStart start;            // what the open profile ran, or why it is not comparable
    const compare::MeasuredStep* measured_shown = nullptr;
    model::ModelSpec base_model;            // the preset as loaded (parsed once per combo change)
    model::ModelSpec model;                 // base_model with the shape sliders applied
    int layers = 0, hidden = 0, heads = 0;  // shape overrides, 0 = the preset's
    model::HardwareSpec hw;
    model::Efficiencies eff;
    model::ParallelConfig layout =
        explorer_layout();  // what the controls show (a profile's layout when one is open)
    // Per layout control, the values it steps through (with their problems), recomputed when the layout
    // or the model changes.
    std::vector<LayoutStep> steps[kLayoutFieldCount];
    model::ParallelConfig steps_for;  // the layout and model (key) the steps were computed for
    std::string steps_key;
    bool steps_dirty = true;
    std::vector<int> positions;  // scratch: the valid steps of one control
    int typing = -1;             // the control a Ctrl+click turned into a text field (LayoutField), -1 none
    int typed = 0;
    bool typing_focus = false;
    ImVec4 control_rects[kLayoutFieldCount] = {};  // where each control's slider was drawn (state dump)
    ImVec4 cp_comm_rect = {};                      // the CP exchange combo, when CP > 1 (state dump)
    bool dirty = true;
    bool valid = false;
    std::string error;
    std::string spec_error;
    model::Prediction prediction;
    model::Timeline timeline;
    std::vector<model::RooflineOperation> roofline;  // the layout's operations for the Roofline panel
    model::ParallelConfig resolved;
    // Search: on a worker thread (a search over thousands of GPUs takes most of a second); the table shows a
    // busy sign, never the previous inputs' layouts, until it is back.
    bool search_dirty = true;
    ExplorerSearch search;
    std::future<ExplorerSearch> search_job;
    std::vector<std::future<ExplorerSearch>> search_abandoned;  // superseded runs, dropped once they end
    int search_selected = -1;
    ExplorerReplay replay;  // the measured run replayed at the layout chosen (explorer_replay.cpp)
  } ex_;

  int pipeline_group_ = 0, pipeline_step_ = 0;  // the measured pipeline shown
  std::vector<MeasuredPipelineRow> pipeline_rows_;
  ImVec4 pipeline_button_ = {};  // where "Predict this pipeline" was drawn last frame (state dump)
};

}  // namespace meshscope::gui
