// Labels that avoid each other (the roofline's point labels).
#include "app/gui/label_layout.hpp"
#include "app/gui/roofline_panel.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "app/gui/gui_util.hpp"
#include "tests/gui/gui_test_util.hpp"

namespace meshscope::gui {
namespace {

TEST(LabelLayout, ClusteredPointsGetLabelsThatDoNotOverlap) {
  // Eight points within a few pixels of each other, each with a 10 x 14 label.
  std::vector<LabelRequest> labels;
  std::vector<Box> markers;
  for (int i = 0; i < 8; ++i) {
    const float x = 200 + 3.0f * static_cast<float>(i), y = 200 + 2.0f * static_cast<float>(i % 3);
    labels.push_back({x, y, 10, 14});
    markers.push_back({x - 5, y - 5, x + 5, y + 5});
  }
  const Box bounds{0, 0, 400, 400};
  const auto placed = place_labels(labels, markers, bounds, 8);
  ASSERT_EQ(placed.size(), labels.size());
  std::vector<Box> boxes;
  for (const auto& p : placed) {
    if (!p) continue;
    EXPECT_TRUE(p->box.inside(bounds));
    for (const Box& m : markers) EXPECT_FALSE(p->box.overlaps(m)) << "a label over a point";
    for (const Box& b : boxes) EXPECT_FALSE(p->box.overlaps(b)) << "two labels overlap";
    boxes.push_back(p->box);
  }
  EXPECT_GE(boxes.size(), 6u) << "most labels find a spot";
}

TEST(LabelLayout, ALoneLabelGoesRightAndStaysInsideTheBounds) {
  const auto right = place_labels({{100, 100, 20, 10}}, {}, {0, 0, 400, 400}, 6);
  ASSERT_TRUE(right[0]);
  EXPECT_FLOAT_EQ(right[0]->box.x0, 106);
  EXPECT_FALSE(right[0]->far);
  // At the right edge it goes left.
  const auto left = place_labels({{395, 100, 20, 10}}, {}, {0, 0, 400, 400}, 6);
  ASSERT_TRUE(left[0]);
  EXPECT_LE(left[0]->box.x1, 400);
  EXPECT_LT(left[0]->box.x0, 395);
  // With no room at all, it is left out.
  const auto none = place_labels({{5, 5, 100, 100}}, {}, {0, 0, 50, 50}, 6);
  EXPECT_FALSE(none[0]);
}

// CHECK(what the Roofline drew, width, height) after a few frames of the profile MSDB at the smallest, a
// common and a large window size.
void at_three_sizes(const std::filesystem::path& msdb,
                    const std::function<void(const RooflineShown&, float, float)>& check) {
  for (auto [w, h] : {std::pair{1024.0f, 640.0f}, {1600.0f, 900.0f}, {2560.0f, 1440.0f}}) {
    test::NullImGui imgui(w, h);
    View view(test::options_for(Panel::kRoofline));
    view.set_profile(load_profile(msdb));
    for (int i = 0; i < 3; ++i) imgui.frame(view);
    check(view.roofline_shown(), w, h);
  }
}

// The Roofline's ceiling labels (peaks, HBM, scale-up link, network) never run into each other, from the
// smallest window to a large one: the sloped ones move along their lines to a free spot.
TEST(LabelLayout, RooflineCeilingLabelsDoNotOverlapAtAnySize) {
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  at_three_sizes(msdb, [](const RooflineShown& shown, float w, float h) {
    const auto& boxes = shown.ceiling_labels;
    ASSERT_GE(boxes.size(), 4u) << w;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      for (std::size_t j = i + 1; j < boxes.size(); ++j) {
        const Box a{boxes[i][0], boxes[i][1], boxes[i][2], boxes[i][3]};
        const Box b{boxes[j][0], boxes[j][1], boxes[j][2], boxes[j][3]};
        EXPECT_FALSE(a.overlaps(b)) << w << "x" << h << ": labels " << i << " and " << j;
      }
    }
  });
}

// On a real trace's measured operators (hta/trace_filter: some 200 points under the ceilings), no ceiling
// label covers a point or another label, and the legend, above the chart, covers none of them. Was: at
// 1024x640 the legend, drawn inside the chart, hid the FP8 and BF16 peaks' labels, and the TF32 peak's label
// ran over the predicted points under it.
TEST(LabelLayout, RooflineCeilingLabelsKeepClearOfThePoints) {
  const auto msdb = test::imported(test::shared_trace("hta/trace_filter"));
  ASSERT_FALSE(msdb.empty());
  at_three_sizes(msdb, [](const RooflineShown& shown, float w, float h) {
    ASSERT_GT(shown.measured, 100) << w;
    ASSERT_GE(shown.ceiling_labels.size(), 5u) << w;
    for (const auto& l : shown.ceiling_labels) {
      const Box label{l[0], l[1], l[2], l[3]};
      for (const auto& m : shown.markers)
        EXPECT_FALSE(label.overlaps({m[0], m[1], m[2], m[3]}))
            << w << "x" << h << ": the label at " << l[0] << "," << l[1] << " covers the point at " << m[0]
            << "," << m[1];
    }
  });
}

// Every legend (the timeline's classes, the Summary's breakdown, the Explorer's memory and step parts and
// pipeline, the Roofline's, the Planner's) wraps onto the next line instead of running past the window's
// edge, from the smallest window to a large one. Was: the Explorer's memory legend cut at "other 2.0 G" at
// 1024x640.
// The Explorer's memory bar at 1024x640 (bar 626 px): weights 18 %, gradients 18 %, optimizer 1 %,
// activations 46 % of the scale, capacity 80 GiB at 96 %. The capacity label ("capacity 80 GiB", 105 px) does
// not fit right of its marker and goes left of it, where it would have covered the activations' "46%" only if
// that label sat there; a share label that does not fit its segment is left out, and one the capacity label
// would cover too.
TEST(LabelLayout, TheMemoryBarsLabelsDoNotOverlap) {
  const float x0 = 366, width = 626, pad = 4;
  std::vector<BarSegmentLabel> segments;
  float x = x0;
  for (const float share : {0.18f, 0.18f, 0.01f, 0.46f, 0.02f}) {
    segments.push_back({x, x + share * width, 30});
    x += share * width;
  }
  const float marker = x0 + 0.96f * width;
  const BarLabels labels = place_bar_labels(segments, x0, x0 + width, marker, 105, pad);
  EXPECT_LT(labels.marker_x + 105, marker) << "left of its marker: no room right of it";
  EXPECT_GE(labels.marker_x, x0);
  EXPECT_TRUE(labels.shown[0]);
  EXPECT_TRUE(labels.shown[1]);
  EXPECT_FALSE(labels.shown[2]) << "6 px: no room for its share";
  EXPECT_TRUE(labels.shown[3]) << "its label is at the segment's start, far from the capacity label";
  EXPECT_FALSE(labels.shown[4]);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (!labels.shown[i]) continue;
    const float l0 = segments[i].x0 + pad, l1 = l0 + segments[i].w;
    EXPECT_LE(l1, segments[i].x1);
    EXPECT_TRUE(l1 <= labels.marker_x || l0 >= labels.marker_x + 105) << "segment " << i;
  }
  // A segment whose label would sit under the capacity label gives way to it.
  const std::vector<BarSegmentLabel> late{{x0, x0 + 0.5f * width, 30},
                                          {x0 + 0.5f * width, x0 + 0.98f * width, 30}};
  const BarLabels crowded = place_bar_labels(late, x0, x0 + width, x0 + 0.49f * width, 105, pad);
  EXPECT_TRUE(crowded.shown[0]);
  EXPECT_FALSE(crowded.shown[1])
      << "its label, just right of 0.5, is under the capacity label right of the marker at 0.49";
}

TEST(LabelLayout, LegendsAndToolbarsWrapInsteadOfRunningPastTheEdge) {
  const auto msdb = test::imported(test::sample_job());
  ASSERT_FALSE(msdb.empty());
  for (auto [w, h] : {std::pair{1024.0f, 640.0f}, {1600.0f, 900.0f}, {2560.0f, 1440.0f}}) {
    for (Panel panel :
         {Panel::kTimeline, Panel::kSummary, Panel::kRoofline, Panel::kExplorer, Panel::kPlanner}) {
      test::NullImGui imgui(w, h);
      View view(test::options_for(panel));
      view.set_profile(load_profile(msdb));
      for (int i = 0; i < 3; ++i) imgui.frame(view);
      items_past_edge() = 0;
      imgui.frame(view);
      EXPECT_EQ(items_past_edge(), 0) << w << "x" << h << " " << to_string(panel);
    }
  }
  // The timeline's toolbar with a stacked baseline (its checkbox and the view's span): was cut at "view" at
  // 1024x640.
  for (auto [w, h] : {std::pair{1024.0f, 640.0f}, {1600.0f, 900.0f}}) {
    test::NullImGui imgui(w, h);
    View view(test::options_for(Panel::kTimeline));
    view.set_profile(load_profile(msdb));
    view.set_baseline(load_profile(msdb));
    view.set_baseline_stacked(true);
    for (int i = 0; i < 3; ++i) imgui.frame(view);
    items_past_edge() = 0;
    imgui.frame(view);
    EXPECT_EQ(items_past_edge(), 0) << w << "x" << h << " timeline with a baseline";
  }
}

}  // namespace
}  // namespace meshscope::gui
