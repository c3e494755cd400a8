#include "app/gui/timeline_controller.hpp"

#include <algorithm>

namespace meshscope::gui {

void TimelineController::fit() {
  const TimeNs a = first_;
  const TimeNs b = last_ <= first_ ? first_ + 1000 : last_;
  const TimeNs pad = (b - a) / 50;
  start_ = a - pad;
  end_ = b + pad;
}

void TimelineController::clamp() {
  const TimeNs lo = first_, hi = std::max(last_, first_ + 1);
  const TimeNs width = range();
  if (width >= hi - lo) return;
  if (start_ < lo) start_ = lo, end_ = lo + width;
  if (end_ > hi) end_ = hi, start_ = hi - width;
}

void TimelineController::zoom_to(TimeNs start, TimeNs end) {
  const TimeNs pad = std::max<TimeNs>(kMinRangeNs / 2, (end - start) / 20);
  start_ = start - pad;
  end_ = std::max(end + pad, start_ + kMinRangeNs);
  clamp();
}

void TimelineController::show(TimeNs start, TimeNs end) {
  const TimeNs duration = std::max<TimeNs>(end - start, 1);
  TimeNs width = range();
  if (duration > width * 9 / 10) width = std::max<TimeNs>(kMinRangeNs, duration + duration / 4);
  const TimeNs mid = start + duration / 2;
  start_ = mid - width / 2;
  end_ = start_ + width;
  clamp();
}

void TimelineController::zoom_at(double x, double factor, float x0, float x1) {
  const double width = std::max(1.0f, x1 - x0);
  const double nspx = static_cast<double>(range()) / width;
  const TimeNs full = std::max<TimeNs>(kMinRangeNs, last_ - first_);
  const double anchor = static_cast<double>(start_) + (x - x0) * nspx;
  double zoomed = static_cast<double>(range()) * factor;
  zoomed = std::clamp(zoomed, static_cast<double>(kMinRangeNs), static_cast<double>(full) * 4.0);
  const double left = (x - x0) / width;
  start_ = static_cast<TimeNs>(anchor - left * zoomed);
  end_ = start_ + static_cast<TimeNs>(zoomed);
}

double TimelineController::ns_per_px(float x0, float x1) const {
  return static_cast<double>(range()) / std::max(1.0f, x1 - x0);
}

TimeNs TimelineController::time_at(float x, float x0, float x1) const {
  return start_ + static_cast<TimeNs>((std::clamp(x, x0, x1) - x0) * ns_per_px(x0, x1));
}

}  // namespace meshscope::gui
