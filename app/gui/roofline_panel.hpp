// The Roofline panel: an extended roofline (compute per precision, HBM, the network ceilings) with the
// Explorer configuration's predicted operations and the open profile's measured points. A panel object: it
// owns what it drew last frame and draws from what the view hands it, the open profile and the Explorer's
// current prediction (re-predicted by the view before it draws).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "analysis/model/predict.hpp"
#include "analysis/model/roofline.hpp"
#include "analysis/model/specs.hpp"
#include "app/gui/loaded_profile.hpp"

namespace meshscope::gui {

// What the Roofline panel drew in the last frame (tests).
struct RooflineShown {
  std::string hardware;  // whose ceilings
  int predicted = 0;     // predicted points
  int measured = 0;      // measured points (operator shapes, categories, the step)
  int left_out = 0;      // measured operators above the drawn peak, counted in a note
  std::vector<std::string> notes;
  std::vector<std::array<float, 4>> ceiling_labels;  // where the ceilings' labels were drawn (x0, y0, x1, y1)
  std::vector<std::array<float, 4>> markers;         // where the points were drawn, the same way
};

class RooflinePanel {
 public:
  // What the Explorer supplies: its hardware and where it came from, its precision, model and GPU count, the
  // operations of its layout and its prediction (null when the layout does not resolve: LAYOUT_ERROR says
  // why), and what the open profile ran (START).
  struct FromExplorer {
    const model::HardwareSpec* hardware = nullptr;
    std::string hardware_note;
    model::Precision precision = model::Precision::kBF16;
    const model::ModelSpec* model = nullptr;
    int gpus = 0;
    const std::vector<model::RooflineOperation>* operations = nullptr;
    const model::Prediction* prediction = nullptr;
    std::string layout_error;
    const ProfileStart* start = nullptr;
  };

  // Ceilings: LOADED's own GPU when it has a hardware preset, else the Explorer's hardware. Predicted points:
  // the Explorer's model and layout when it predicts for those same ceilings. Measured points: LOADED's
  // measured roofline (LoadedProfile::roofline). LOADED may be null (no profile open).
  void draw(const LoadedProfile* loaded, const FromExplorer& explorer);
  const RooflineShown& shown() const { return shown_; }

 private:
  std::vector<model::RooflineOperation> predicted_points(const FromExplorer& explorer, bool predicted);
  void canvas(const std::vector<model::RooflineOperation>& points, const model::Roof& roof,
              const char* precision, bool fp8, const model::HardwareSpec& hw, const MeasuredPoints* measured);
  void table(const std::vector<model::RooflineOperation>& points, const model::Roof& roof,
             const char* precision, const model::HardwareSpec& hw, const MeasuredPoints* measured);

  RooflineShown shown_;
};

}  // namespace meshscope::gui
