#include "job/profile_work.hpp"

#include "profiler/work_store.hpp"

namespace meshscope {

measure::ProfileWork load_work(const Profile& profile, const measure::WorkLoadOptions& options) {
  return measure::work_of(profile, read_work(profile.path(), measure::work_read_options(profile, options)));
}

}  // namespace meshscope
