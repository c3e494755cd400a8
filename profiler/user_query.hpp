// A user's query over a profile (the view's Query panel; Perfetto's query page, for a profile that is an
// SQLite file): one read-only SQL statement on the hardened connection every reader of someone else's file
// uses (sql::Database read-only: no views, no triggers, no writes, a bound on the work), its rows kept up to
// a limit, and the result as CSV or as tab-separated text for the clipboard.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace meshscope {

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

}  // namespace meshscope
