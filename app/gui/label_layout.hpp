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

}  // namespace meshscope::gui
