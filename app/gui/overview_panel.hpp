// The Overview panel: the whole job at a glance, one row per rank and one column per time bucket, coloured by
// a metric's share of each bucket, from the per-rank summaries (it never reads the events). The layout
// (grid, order, outliers, aggregation to pixels) is in overview_layout.*; docs/GUI.md "Overview" says what
// each part means. A panel object: it owns its choices and what it built for the open profile, draws from
// the LoadedProfile the view hands it, and answers a click with where the timeline should go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "app/gui/loaded_profile.hpp"
#include "app/gui/overview_layout.hpp"
#include "app/gui/timeline_controller.hpp"

namespace meshscope {
class JsonWriter;
}  // namespace meshscope

namespace meshscope::gui {

class OverviewPanel {
 public:
  // Builds the grid of LOADED (nullptr: no profile open). The metric the user chose and the sort stay.
  void prepare(const LoadedProfile* loaded);
  // One frame of the panel; LOADING says a profile is being opened (shown when none is). A clicked cell
  // answers the rank and the cell's time window, for the timeline.
  std::optional<ShowOnTimeline> draw(const LoadedProfile* loaded, bool loading);
  // The state dump's "overview" (what the canvas drew last frame).
  void dump_state(JsonWriter& j, const LoadedProfile& loaded) const;

 private:
  void toolbar(const LoadedProfile& loaded);
  std::optional<ShowOnTimeline> canvas(const LoadedProfile& loaded);
  void cell_tooltip(const LoadedProfile& loaded, std::int64_t row, std::int64_t column);
  void row_tooltip(const LoadedProfile& loaded, std::int64_t map_row);
  std::optional<ShowOnTimeline> cell_window(std::size_t grid_row, std::int64_t column) const;
  // The order and the outliers for the current sort and metric; the map for the pixels available.
  void refresh(const ProfileSummary& summary, std::int64_t rows, std::int64_t columns);

  OverviewMetric metric_ = OverviewMetric::kExposedComm;
  bool metric_chosen_ = false;  // by the user: kept for every profile; else chosen per profile
  OverviewSort sort_ = OverviewSort::kRank;
  // What was built for the open profile (prepare() starts it afresh).
  struct Built {
    OverviewGrid grid;
    std::optional<SlowestStep> slowest;
    std::vector<std::int32_t> rank_index;  // per grid row: index in Profile::ranks(), -1 none
    // For the current choices and size.
    std::vector<std::uint32_t> order;   // grid rows in display order
    std::vector<std::uint8_t> outlier;  // per grid row
    MadCut cut;                         // the outlier rule's median and MAD for the metric
    OverviewMap map;
    bool dirty = true;  // order, outliers and map must be rebuilt
    std::int64_t map_rows = 0, map_columns = 0;
    float canvas[4] = {};  // where the heat map was drawn last frame (x0, y0, x1, y1; state dump)
    float row_h = 0;
  } built_;
};

}  // namespace meshscope::gui
