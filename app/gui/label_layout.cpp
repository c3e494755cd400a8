#include "app/gui/label_layout.hpp"

#include <cmath>
#include <limits>

namespace meshscope::gui {

std::vector<std::optional<LabelPlace>> place_labels(const std::vector<LabelRequest>& labels,
                                                    std::vector<Box> obstacles, const Box& bounds,
                                                    float gap) {
  std::vector<std::optional<LabelPlace>> out;
  out.reserve(labels.size());
  for (const LabelRequest& l : labels) {
    std::optional<LabelPlace> chosen;
    for (int ring = 1; ring <= 3 && !chosen; ring += 2) {
      const float g = gap * static_cast<float>(ring);
      // Top-left corners: right, left, above, below, then the corners.
      const float spots[][2] = {{l.x + g, l.y - l.h / 2},       {l.x - g - l.w, l.y - l.h / 2},
                                {l.x - l.w / 2, l.y - g - l.h}, {l.x - l.w / 2, l.y + g},
                                {l.x + g, l.y - g - l.h},       {l.x + g, l.y + g},
                                {l.x - g - l.w, l.y - g - l.h}, {l.x - g - l.w, l.y + g}};
      for (const auto& s : spots) {
        const Box box{s[0], s[1], s[0] + l.w, s[1] + l.h};
        if (!box.inside(bounds)) continue;
        bool free = true;
        for (const Box& o : obstacles) {
          if (box.overlaps(o)) {
            free = false;
            break;
          }
        }
        if (!free) continue;
        chosen = LabelPlace{box, ring > 1};
        break;
      }
    }
    if (chosen) obstacles.push_back(chosen->box);
    out.push_back(chosen);
  }
  return out;
}

BarLabels place_bar_labels(const std::vector<BarSegmentLabel>& segments, float bar_x0, float bar_x1,
                           float marker_x, float marker_w, float pad) {
  BarLabels out{std::numeric_limits<float>::quiet_NaN(), std::vector<bool>(segments.size(), false)};
  float m0 = 0, m1 = 0;  // the marker label's extent, with a pad on each side
  const bool marker = marker_w > 0 && std::isfinite(marker_x);
  if (marker) {
    out.marker_x = marker_x + pad + marker_w <= bar_x1 ? marker_x + pad : marker_x - pad - marker_w;
    out.marker_x = std::max(out.marker_x, bar_x0);
    m0 = out.marker_x - pad;
    m1 = out.marker_x + marker_w + pad;
  }
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const BarSegmentLabel& s = segments[i];
    const float l0 = s.x0 + pad, l1 = s.x0 + pad + s.w;
    if (l1 + pad > s.x1) continue;
    if (marker && l0 < m1 && m0 < l1) continue;
    out.shown[i] = true;
  }
  return out;
}

}  // namespace meshscope::gui
