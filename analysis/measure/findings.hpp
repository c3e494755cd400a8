// What stands out in a measured profile: the sentences `report` opens with and the GUI's Summary shows first,
// computed once here from the analysis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"

namespace meshscope::measure {

struct Finding {
  enum class Kind {
    kStraggler,             // the rank the others waited for in collectives
    kExposedCommunication,  // the rank with the largest share of its span communicating with no compute
    kGpuIdle,               // the rank idle the longest share of its span, and why
    kLargestCommunication,  // the collective that costs the most, when communication is a real share
    kNothing,               // no figure crosses its threshold (or no GPU work at all)
  };
  Kind kind = Kind::kNothing;
  std::int32_t rank = -1;  // the rank it is about (-1: the job)
  std::string text;        // one sentence a user can act on
};

// A figure is listed when it is at least this share of the span (percent): below it, GPU idle time (launch
// gaps, step boundaries), exposed communication and collective waits are what a healthy step shows.
inline constexpr double kIdleStandsOutPct = 10.0;
inline constexpr double kExposedStandsOutPct = 5.0;
inline constexpr double kWaitStandsOutPct = 1.0;
inline constexpr double kCommStandsOutPct = 10.0;

// The findings of PROFILE's analysis A, most pressing first (the straggler first when the collectives show
// one); one kNothing finding that says why when nothing stands out.
std::vector<Finding> findings(const Profile& profile, const Analysis& a);

}  // namespace meshscope::measure
