// A profile's work per operator read from its file: the work tables through profiler/work_store.hpp, what
// they mean through analysis/measure/work.hpp, which takes the rows in memory. What Job::work and
// Job::measured read, and what reads a profile the Job does not hold (the view's sampled ranks, a test's).
#pragma once

#include "analysis/measure/work.hpp"
#include "profiler/profile.hpp"

namespace meshscope {

// PROFILE's work tables (a read-only connection of their own to its file), of the ranks whose events it holds
// when it holds only some. Throws meshscope::Error naming the file when the tables are damaged.
measure::ProfileWork load_work(const Profile& profile, const measure::WorkLoadOptions& options = {});

}  // namespace meshscope
