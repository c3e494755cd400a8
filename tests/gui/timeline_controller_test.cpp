// The timeline's view of time (app/gui/timeline_controller.hpp): each way the range moves, on a profile
// spanning 1 ms to 11 ms drawn on 1,000 pixels.
#include "app/gui/timeline_controller.hpp"

#include <gtest/gtest.h>

namespace meshscope::gui {
namespace {

constexpr TimeNs kFirst = 1'000'000, kLast = 11'000'000;

TimelineController on_profile() {
  TimelineController view;
  view.set_bounds(kFirst, kLast);
  return view;
}

TEST(TimelineController, FitShowsTheProfileWithAFiftiethOnEachSide) {
  TimelineController view = on_profile();
  EXPECT_TRUE(view.unset());
  view.fit();
  EXPECT_FALSE(view.unset());
  EXPECT_EQ(view.start(), kFirst - 200'000);
  EXPECT_EQ(view.end(), kLast + 200'000);
  // A profile without a span (one instant) shows a microsecond.
  TimelineController instant;
  instant.set_bounds(5'000, 5'000);
  instant.fit();
  EXPECT_EQ(instant.start(), 4'980);
  EXPECT_EQ(instant.end(), 6'020);
}

TEST(TimelineController, ZoomAtKeepsTheTimeUnderTheCursorAndStaysWithinItsLimits) {
  TimelineController view = on_profile();
  view.set(kFirst, kLast);  // 10 us per pixel over 0..1000
  const TimeNs under = view.time_at(250.0f, 0.0f, 1000.0f);
  EXPECT_EQ(under, 3'500'000);
  view.zoom_at(250.0, 0.5, 0.0f, 1000.0f);
  EXPECT_EQ(view.range(), 5'000'000);
  EXPECT_EQ(view.time_at(250.0f, 0.0f, 1000.0f), under);
  EXPECT_DOUBLE_EQ(view.ns_per_px(0.0f, 1000.0f), 5'000.0);
  // Never narrower than 200 ns, never wider than four times the profile.
  for (int i = 0; i < 100; ++i) view.zoom_at(250.0, 0.5, 0.0f, 1000.0f);
  EXPECT_EQ(view.range(), TimelineController::kMinRangeNs);
  for (int i = 0; i < 100; ++i) view.zoom_at(250.0, 2.0, 0.0f, 1000.0f);
  EXPECT_EQ(view.range(), 4 * (kLast - kFirst));
}

TEST(TimelineController, ZoomToAddsATwentiethAndStaysInsideTheProfile) {
  TimelineController view = on_profile();
  view.zoom_to(5'000'000, 7'000'000);
  EXPECT_EQ(view.start(), 4'900'000);
  EXPECT_EQ(view.end(), 7'100'000);
  // At the profile's start the margin moves inside it rather than before it.
  view.zoom_to(kFirst, kFirst + 1'000'000);
  EXPECT_EQ(view.start(), kFirst);
  EXPECT_EQ(view.end(), kFirst + 1'100'000);
  // A 10 ns event: 100 ns on each side (half the narrowest range), 210 ns in all.
  view.zoom_to(6'000'000, 6'000'010);
  EXPECT_EQ(view.start(), 5'999'900);
  EXPECT_EQ(view.range(), 210);
}

TEST(TimelineController, ShowCentresASpanAtTheCurrentZoomAndZoomsOutOnlyForAWideOne) {
  TimelineController view = on_profile();
  view.set(2'000'000, 3'000'000);  // 1 ms wide
  view.show(8'000'000, 8'100'000);
  EXPECT_EQ(view.range(), 1'000'000);
  EXPECT_EQ(view.start(), 7'550'000);
  // Wider than nine tenths of the view: the view grows to the span and a quarter.
  view.show(4'000'000, 6'000'000);
  EXPECT_EQ(view.range(), 2'500'000);
  EXPECT_EQ(view.start(), 3'750'000);
  // Near the end: kept inside the profile.
  view.show(10'990'000, 11'000'000);
  EXPECT_EQ(view.end(), kLast);
}

TEST(TimelineController, PanAndTheSelectedRangeMoveTheViewAsAsked) {
  TimelineController view = on_profile();
  view.set(2'000'000, 3'000'000);
  view.pan(-500'000);
  EXPECT_EQ(view.start(), 1'500'000);
  EXPECT_EQ(view.end(), 2'500'000);
  view.zoom_from(4'000'000, 4'000'050);
  EXPECT_EQ(view.start(), 4'000'000);
  EXPECT_EQ(view.end(), 4'000'200);
  view.show_padded(5'000'000, 6'000'000, 25'000);
  EXPECT_EQ(view.start(), 4'975'000);
  EXPECT_EQ(view.end(), 6'025'000);
  EXPECT_EQ(view.time_at(-50.0f, 0.0f, 1000.0f), view.start());  // clamped to the pixels drawn on
}

}  // namespace
}  // namespace meshscope::gui
