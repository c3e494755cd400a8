// The Planner panel: the checkpoint interval (Young 1974 / Daly 2006) and the compute-optimal scaling-law
// budget (Kaplan et al. 2020, Hoffmann et al. 2022), with their inputs as sliders. The numbers come from
// analysis/model/planner.hpp; this panel only lays them out. A panel object (as query_panel.hpp): it owns its
// sliders and draws from what the view hands it, the Explorer's current prediction.
#pragma once

#include "analysis/model/predict.hpp"
#include "analysis/model/specs.hpp"

namespace meshscope::gui {

class PlannerPanel {
 public:
  // What the Explorer supplies: its GPU count, model and hardware, and its prediction (null when the layout
  // does not resolve: the budget then assumes 40 % MFU at the hardware's BF16 peak).
  struct FromExplorer {
    int gpus = 1;
    const model::ModelSpec* model = nullptr;
    const model::HardwareSpec* hardware = nullptr;
    const model::Prediction* prediction = nullptr;
  };

  void draw(const FromExplorer& explorer);

 private:
  void draw_checkpoints(const FromExplorer& explorer, float width);
  void draw_budget(const FromExplorer& explorer);

  float gpu_mtbf_hours_ = 50000.0f;  // per GPU (Llama 3: 419 interruptions / 54 days / 16384 GPUs)
  float checkpoint_s_ = 60.0f;
  float restart_s_ = 300.0f;
  float tokens_per_param_ = 20.0f;
  float days_ = 30.0f;
  float budget_log10_ = 24.0f;  // log10 FLOPs of the budget box
};

}  // namespace meshscope::gui
