// Launch links (GPU activity -> the runtime call that launched it, by correlation id) on every real trace and
// export in ../shared/traces: correlation ids are scoped to the process (an Nsight Systems export of several
// processes repeats them), so no activity may be linked to a call that starts after the activity does.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectors/import/import.hpp"
#include "profiler/error.hpp"
#include "profiler/profile.hpp"
#include "tests/import/test_support.hpp"

namespace meshscope {
namespace {

bool is_trace(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends_with(".json") || ends_with(".json.gz") || ends_with(".sqlite");
}

TEST(LaunchLinks, NoActivityIsLinkedToACallThatStartsAfterIt) {
  testing::TempDir dir("launch_links");
  std::vector<std::filesystem::path> traces;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(testing::traces_dir()))
    if (entry.is_regular_file() && is_trace(entry.path())) traces.push_back(entry.path());
  std::sort(traces.begin(), traces.end());
  ASSERT_GE(traces.size(), 20u);
  int imported = 0, linked_total = 0;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto out = dir / ("t" + std::to_string(i) + ".msdb");
    try {
      import_traces({traces[i]}, out);
    } catch (const Error&) {
      continue;  // a trace the importer refuses (the HTA fixtures of missing ranks, a CPU-only trace) links
                 // nothing
    }
    ++imported;
    const Profile p = Profile::load(out);
    for (const Rank& r : p.ranks()) {
      std::unordered_map<std::int64_t, const ApiCall*> call_of;
      for (const ApiCall& c : r.api_calls)
        if (c.correlation != kNull) call_of.emplace(c.correlation, &c);
      int late = 0;
      for (const Activity& a : r.activities) {
        if (a.correlation == kNull) continue;
        const auto it = call_of.find(a.correlation);
        if (it == call_of.end()) continue;
        ++linked_total;
        if (it->second->start_ns > a.start_ns) ++late;
      }
      EXPECT_EQ(late, 0) << traces[i] << " rank " << r.rank;
    }
  }
  EXPECT_GE(imported, 15);
  EXPECT_GT(linked_total, 10000);
}

}  // namespace
}  // namespace meshscope
