// Labels that avoid each other: each label goes to the first of a fixed list of spots around its anchor
// (right, left, above, below, the four corners, then the same further out) that stays inside the bounds and
// overlaps no obstacle and no label placed before it; a label with no free spot is left out (its point
// still shows it on hover). Greedy, in the order given: callers put the labels that matter most first.
// Plain C++; tests/gui/label_layout_test.cpp.
#pragma once

#include <optional>
#include <vector>

namespace meshscope::gui {

struct Box {
  float x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool inside(const Box& o) const { return x0 >= o.x0 && y0 >= o.y0 && x1 <= o.x1 && y1 <= o.y1; }
};

struct LabelRequest {
  float x, y;  // anchor (the point's centre)
  float w, h;  // label size
};

struct LabelPlace {
  Box box;
  bool far;  // placed at the outer ring: draw a leader line to the anchor
};

// Places LABELS (GAP pixels from their anchors) inside BOUNDS, avoiding OBSTACLES (point markers, fixed
// texts) and each other. Returns one entry per label, empty where none fits.
std::vector<std::optional<LabelPlace>> place_labels(const std::vector<LabelRequest>& labels,
                                                    std::vector<Box> obstacles, const Box& bounds, float gap);

// The labels of a horizontal stacked bar from X0 to X1: each segment [x0, x1) may show a label of width W
// (its share) at its left edge plus PAD, and a marker at MARKER_X (capacity) a label of width MARKER_W beside
// it. The marker's label goes right of the marker when it fits inside the bar, else left of it; a segment's
// label shows only where it fits inside its segment and clear of the marker's label (its value stays in the
// tooltip and the legend). Returns the marker label's left edge (NaN without one) and which segments show.
struct BarSegmentLabel {
  float x0, x1, w;
};
struct BarLabels {
  float marker_x;
  std::vector<bool> shown;
};
BarLabels place_bar_labels(const std::vector<BarSegmentLabel>& segments, float bar_x0, float bar_x1,
                           float marker_x, float marker_w, float pad);

}  // namespace meshscope::gui
