// The Summary panel: where each rank's time goes. What stands out (measure::findings, as `report` opens),
// per-rank stacked bars, the steps of one rank, the top kernels over all ranks and the collectives with their
// measured bus bandwidth beside the α-β model's for the Explorer's hardware, and the comparison with a
// baseline when one is open. A panel object: it owns its sort orders, its chosen rank and what it derived
// once per profile, draws from what the view hands it, and answers a followed link (a finding's rank, a
// step) with where the timeline should go.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/measure/diff.hpp"
#include "analysis/measure/findings.hpp"
#include "analysis/model/specs.hpp"
#include "app/gui/loaded_profile.hpp"
#include "app/gui/timeline_controller.hpp"

namespace meshscope {
class JsonWriter;
}  // namespace meshscope

namespace meshscope::gui {

class SummaryPanel {
 public:
  // What the Explorer supplies: the hardware the collectives' bandwidth is predicted for, where it came
  // from, and its efficiencies (the links'); READY false when the Explorer has no model yet.
  struct FromExplorer {
    const model::HardwareSpec* hardware = nullptr;
    std::string hardware_note;
    const model::Efficiencies* efficiencies = nullptr;
    bool ready = false;
  };
  // The baseline the open profile is compared with: the profile (null: none), whether it is still being
  // loaded and compared, why it failed ("" if not), and the diff once it is ready (A = the baseline).
  struct Baseline {
    const LoadedProfile* loaded = nullptr;
    bool busy = false;
    std::string error;
    const measure::Diff* diff = nullptr;
  };

  // Derives what the panel shows of LOADED once (nullptr: no profile open): the findings, the GPU line, the
  // kernels merged over all ranks; the chosen rank goes back to the first.
  void prepare(const LoadedProfile* loaded);
  std::optional<ShowOnTimeline> draw(const LoadedProfile* loaded, bool loading, const FromExplorer& explorer,
                                     const Baseline& baseline);
  // What stands out (`report`'s first section) and the GPU line, of the profile last prepared.
  const std::vector<measure::Finding>& findings() const { return findings_; }
  const std::string& gpu_line() const { return gpu_line_; }
  // The state dump's "summary": the chosen rank and where the steps table drew each step last frame.
  void dump_state(JsonWriter& j) const;

 private:
  void prepare_loaded();
  void draw_loaded(const FromExplorer& explorer, const Baseline& baseline);
  void draw_findings();
  void draw_rank_bars();
  void draw_steps();
  void draw_kernels();
  void draw_collectives(const FromExplorer& explorer);
  void draw_baseline(const Baseline& baseline);
  static double predicted_busbw(const FromExplorer& explorer, const std::string& op, std::int64_t group,
                                std::int64_t bytes);

  // The profile being drawn or prepared (set for the duration of draw() and prepare() only).
  const LoadedProfile* loaded_ = nullptr;
  // A link the user followed this frame.
  std::optional<ShowOnTimeline> followed_;
  int rank_ = 0;        // the rank whose steps are shown (an index of the job's analysis ranks)
  struct StepRowRect {  // where the steps table drew each step's row last frame (state dump)
    std::int64_t number;
    std::array<float, 4> rect;  // x0, y0, x1, y1
  };
  std::vector<StepRowRect> step_rects_;
  std::vector<measure::KernelStat> kernels_all_;  // every activity name over all ranks (built on prepare)
  std::vector<measure::Finding> findings_;        // what stands out, as `report` says it (built on prepare)
  std::string gpu_line_;                          // the GPU line (profile_gpu_line)
  std::vector<std::uint32_t> kernel_order_, collective_order_;  // current sort of the two tables
};

}  // namespace meshscope::gui
