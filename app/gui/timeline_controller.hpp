// The timeline's view of time, apart from the rows it draws (as Tracy keeps its TimelineController apart from
// its timeline items): the visible range and every way it moves — fit the profile, zoom at a point, zoom to a
// span, show a span at the current zoom, pan, keep a narrow view inside the profile — and the mapping between
// that range and the pixels it is drawn on. The input handlers decide what the mouse and keys ask for; this
// says what the range becomes. Plain C++ (no ImGui); tests/gui/timeline_controller_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "profiler/profile.hpp"

namespace meshscope::gui {

class TimelineController {
 public:
  // The narrowest range shown: 200 ns.
  static constexpr TimeNs kMinRangeNs = 200;

  TimeNs start() const { return start_; }
  TimeNs end() const { return end_; }
  TimeNs range() const { return end_ - start_; }
  bool unset() const { return end_ <= start_; }  // before the first fit

  // The profile's first and last time: what fit() shows and what a narrow view is kept inside.
  void set_bounds(TimeNs first, TimeNs last) { first_ = first, last_ = last; }

  // Exactly [START, END) (a bookmark, a range the user or a test asks for).
  void set(TimeNs start, TimeNs end) { start_ = start, end_ = end; }
  // The whole profile with a fiftieth of it on each side.
  void fit();
  // [START, END) with PAD on each side, where the view may leave the profile (a step, a fold, an event
  // zoomed to from its details).
  void show_padded(TimeNs start, TimeNs end, TimeNs pad) { start_ = start - pad, end_ = end + pad; }
  // [START, END) with a twentieth on each side (Perfetto's F), at least kMinRangeNs, inside the profile.
  void zoom_to(TimeNs start, TimeNs end);
  // From START, at least kMinRangeNs wide (the selected range zoomed to).
  void zoom_from(TimeNs start, TimeNs end) { start_ = start, end_ = std::max(end, start + kMinRangeNs); }
  // [START, END) centred at the current zoom; zoomed out only when it is wider than nine tenths of the view.
  void show(TimeNs start, TimeNs end);
  // The range times FACTOR, the time under X staying under X (X0..X1: the pixels the range is drawn on),
  // between kMinRangeNs and four times the profile.
  void zoom_at(double x, double factor, float x0, float x1);
  void pan(TimeNs dt) { start_ += dt, end_ += dt; }

  // Nanoseconds per pixel over X0..X1, and the time at X (clamped to them).
  double ns_per_px(float x0, float x1) const;
  TimeNs time_at(float x, float x0, float x1) const;

 private:
  // A view narrower than the profile is kept inside its span, so that jumps never show time before the
  // profile starts or after it ends (only fit() adds a margin).
  void clamp();

  TimeNs start_ = 0, end_ = 0;
  TimeNs first_ = 0, last_ = 0;
};

// What a panel asks of the timeline when the user follows a link from it (the Overview's cells, the
// Summary's findings and steps): rank RANK_INDEX's group opened and scrolled into view, the view set to
// [START, END) when WINDOW, and step STEP (a number) of that rank selected when given (once the rank's events
// are loaded, for a lazily loaded profile).
struct ShowOnTimeline {
  std::size_t rank_index = 0;
  bool window = false;
  TimeNs start = 0, end = 0;
  std::optional<std::int64_t> step;
};

}  // namespace meshscope::gui
