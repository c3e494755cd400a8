// What the Query panel holds and starts from: the queries worth starting from, the text being edited and the
// statement running; the statement runs in profiler/user_query.hpp (plain C++, no ImGui, unit-tested).
#pragma once

#include <cstddef>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "profiler/user_query.hpp"

namespace meshscope::gui {

struct SavedQuery {
  const char* name;
  const char* sql;
};
// Queries worth starting from (docs/PROFILE.md's, written for the hardened connection: no views).
const std::vector<SavedQuery>& saved_queries();

// What the Query panel holds: the text being edited, the statement running on a worker thread, the last
// result.
struct QueryPanelState {
  std::string text = saved_queries().front().sql;
  std::future<QueryResult> job;
  QueryResult result;
  bool has_result = false;
  std::string ran;  // the statement the result is of
  std::string export_path;
  std::string message;  // what the last copy or export did
  bool message_failed = false;
};

}  // namespace meshscope::gui
