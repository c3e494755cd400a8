// Correlation id -> the API call that launched a GPU activity, for the analyses that follow launches (diff,
// critical path, launch and queue analysis). A dense table when the ids are compact (as CUPTI and Kineto
// number them), a sorted one otherwise; the earliest call wins when several share an id.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope::measure {

class CorrelationMap {
 public:
  void build(const std::vector<ApiCall>& calls) {
    dense_.clear();
    sorted_.clear();
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
    std::size_t n = 0;
    for (const ApiCall& c : calls) {
      if (c.correlation == kNull) continue;
      lo = std::min(lo, c.correlation);
      hi = std::max(hi, c.correlation);
      ++n;
    }
    size_ = n;
    if (n == 0) return;
    base_ = lo;
    use_dense_ = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) <=
                 4 * static_cast<std::uint64_t>(n) + 4096;
    if (use_dense_) {
      dense_.assign(static_cast<std::size_t>(hi - lo + 1), -1);
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (calls[i].correlation == kNull) continue;
        auto& slot = dense_[static_cast<std::size_t>(calls[i].correlation - lo)];
        if (slot < 0) slot = static_cast<std::int32_t>(i);
      }
    } else {
      sorted_.reserve(n);
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (calls[i].correlation != kNull)
          sorted_.emplace_back(calls[i].correlation, static_cast<std::int32_t>(i));
      }
      std::stable_sort(sorted_.begin(), sorted_.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
    }
  }

  // Index into the calls, or -1.
  std::int32_t find(std::int64_t correlation) const {
    if (correlation == kNull || size_ == 0) return -1;
    if (use_dense_) {
      if (correlation < base_ || correlation - base_ >= static_cast<std::int64_t>(dense_.size())) return -1;
      return dense_[static_cast<std::size_t>(correlation - base_)];
    }
    const auto it =
        std::lower_bound(sorted_.begin(), sorted_.end(), correlation,
                         [](const auto& entry, std::int64_t value) { return entry.first < value; });
    return it != sorted_.end() && it->first == correlation ? it->second : -1;
  }

  bool empty() const { return size_ == 0; }

 private:
  bool use_dense_ = false;
  std::size_t size_ = 0;
  std::int64_t base_ = 0;
  std::vector<std::int32_t> dense_;
  std::vector<std::pair<std::int64_t, std::int32_t>> sorted_;
};

// The step (index into STARTS/ENDS, sorted by start and not overlapping) whose [start, end) holds T, or -1.
inline std::int32_t step_at(const std::vector<TimeNs>& starts, const std::vector<TimeNs>& ends, TimeNs t) {
  const auto it = std::upper_bound(starts.begin(), starts.end(), t);
  if (it == starts.begin()) return -1;
  const auto s = static_cast<std::size_t>(it - starts.begin() - 1);
  return t < ends[s] ? static_cast<std::int32_t>(s) : -1;
}

}  // namespace meshscope::measure
