#include "analysis/measure/launch_ranges.hpp"

#include <map>
#include <utility>

#include "profiler/vocabulary.hpp"

namespace meshscope::measure {

std::vector<std::uint8_t> calls_inside_ranges(const Profile& profile, std::size_t rank_index,
                                              const std::function<bool(std::string_view)>& named) {
  const Rank& r = profile.ranks()[rank_index];
  std::vector<std::uint8_t> inside(r.api_calls.size(), 0);
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::uint32_t>> calls_of;
  for (std::uint32_t c = 0; c < r.api_calls.size(); ++c)
    calls_of[{r.thread_of(r.api_calls[c]).pid, r.thread_of(r.api_calls[c]).tid}].push_back(c);
  std::vector<std::int8_t> accepted;  // per name: -1 not asked yet
  auto accepts = [&](StringId name) {
    if (name >= accepted.size()) accepted.resize(name + 1, -1);
    if (accepted[name] < 0) accepted[name] = named(profile.str(name)) ? 1 : 0;
    return accepted[name] == 1;
  };
  for (std::size_t t = 0; t < r.tracks.size(); ++t) {
    const CpuTrack& track = r.tracks[t];
    if (track.gpu) continue;
    const auto it = calls_of.find({track.pid, track.tid});
    if (it == calls_of.end()) continue;
    const auto ranges = r.track_ranges(t);
    std::vector<std::pair<TimeNs, bool>> open;  // (end, accepted) of the ranges open, outermost first
    int accepted_open = 0;
    std::size_t next = 0;
    auto pop_until = [&](TimeNs time) {
      while (!open.empty() && open.back().first <= time) {
        accepted_open -= open.back().second ? 1 : 0;
        open.pop_back();
      }
    };
    for (const std::uint32_t c : it->second) {
      const TimeNs at = r.api_calls[c].start_ns;
      while (next < ranges.size() && ranges[next].start_ns <= at) {
        pop_until(ranges[next].start_ns);
        const bool a = accepts(ranges[next].name);
        open.emplace_back(ranges[next].end_ns, a);
        accepted_open += a ? 1 : 0;
        ++next;
      }
      pop_until(at);
      inside[c] = accepted_open > 0 ? 1 : 0;
    }
  }
  return inside;
}

bool backward_range_name(std::string_view name) {
  if (name.starts_with("autograd::engine::evaluate_function")) return true;
  const std::string n = vocabulary::lower(name);
  return n.find("backward") != std::string::npos && n.find("forward") == std::string::npos;
}

bool optimizer_range_name(std::string_view name) {
  const std::string n = vocabulary::lower(name);
  return n.starts_with("optimizer") || n.find("optimizer.step") != std::string::npos ||
         n.find("optimizer_step") != std::string::npos || n.find("optimizer.zero_grad") != std::string::npos;
}

}  // namespace meshscope::measure
