#include "app/gui/label_layout.hpp"

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

}  // namespace meshscope::gui
