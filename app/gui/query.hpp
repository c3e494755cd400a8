// The Query panel's engine (plain C++, no ImGui, unit-tested): one read-only SQL statement over the open
// profile, on the hardened connection every reader of someone else's file uses (sql::Database read-only: no
// views, no triggers, no writes, a bound on the work), its rows kept up to a limit, and the result as CSV or
// as tab-separated text for the clipboard. Perfetto's query page, for a profile that is an SQLite file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

namespace meshscope::gui {

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // values as text, NULL as "NULL"
  std::size_t rows_seen = 0;                   // rows the statement returned (more than kept when truncated)
  bool truncated = false;
  double seconds = 0;
  std::string error;  // one line: what SQLite or meshscope refused
};

inline constexpr std::size_t kQueryMaxRows = 100000;

// Runs SQL (one statement that only reads) on the profile at PROFILE. Errors are returned, never thrown.
QueryResult run_query(const std::filesystem::path& profile, const std::string& sql,
                      std::size_t max_rows = kQueryMaxRows);

// The result as CSV (RFC 4180: fields with commas, quotes or line breaks quoted, quotes doubled) and as
// tab-separated lines (what a spreadsheet takes from the clipboard).
std::string to_csv(const QueryResult& result);
std::string to_tsv(const QueryResult& result);

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
