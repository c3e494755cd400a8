// The Explorer's search for the best layouts (plain C++, no ImGui, unit-tested): model::search on a worker
// thread's copy of the inputs, layouts of equal step time merged into one row that names what varies among
// them, and, when no layout fits in memory, the smallest multiple of the GPU count on which one does.
#pragma once

#include <string>
#include <vector>

#include "analysis/model/predict.hpp"
#include "analysis/model/search.hpp"

namespace meshscope::gui {

// Layouts top[first, first + count) of a search, whose step times are equal within the tolerance: one row.
struct LayoutGroup {
  std::size_t first = 0, count = 1;
  std::string varies;  // what differs among them ("ZeRO 1-3, recompute none/selective"), empty for one layout
};

// Consecutive layouts of TOP (best first) whose step times differ by at most TOLERANCE of the first's, as
// groups; at most MAX_GROUPS.
std::vector<LayoutGroup> group_equal_layouts(const std::vector<model::Prediction>& top, double tolerance,
                                             std::size_t max_groups);

struct ExplorerSearch {
  model::SearchResult result;  // the layouts on the asked GPU count (more than shown: ties are merged)
  std::vector<LayoutGroup> groups;
  std::string error;  // the search refused its inputs (one line)
  // When no layout fits: the smallest GPU count (the asked one times 2, 4, ... 64) on which one does, 0 when
  // none of those does, and the best layout there.
  int fits_from_gpus = 0;
  int tried_up_to_gpus = 0;
  model::Prediction fits_from_best;
};

// Runs the search of OPTIONS (its top widened so that ties do not crowd out other layouts), groups equal
// layouts and, when none fits, looks for the GPU count that would do. Inputs are taken by value: it runs on a
// worker thread.
ExplorerSearch run_explorer_search(model::ModelSpec model, model::HardwareSpec hw, model::Efficiencies eff,
                                   model::SearchOptions options, std::size_t rows = 12);

}  // namespace meshscope::gui
