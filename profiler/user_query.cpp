#include "profiler/user_query.hpp"

#include <sqlite3.h>

#include <chrono>
#include <exception>

#include "profiler/error.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope {

namespace {

bool only_space_or_comments(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';') {
      ++i;
    } else if (text.substr(i, 2) == "--") {
      const auto end = text.find('\n', i);
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else if (text.substr(i, 2) == "/*") {
      const auto end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
    } else {
      return false;
    }
  }
  return true;
}

std::string single_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n\r") == std::string::npos) return value;
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

QueryResult run_query(const std::filesystem::path& profile, const std::string& sql, std::size_t max_rows) {
  QueryResult out;
  const auto start = std::chrono::steady_clock::now();
  try {
    sql::Database db(profile, /*read_only=*/true);
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db.handle(), sql.c_str(), static_cast<int>(sql.size()), &stmt, &tail) !=
        SQLITE_OK) {
      out.error = single_line(sqlite3_errmsg(db.handle()));
      sqlite3_finalize(stmt);
      return out;
    }
    if (!stmt) {
      out.error = "no statement: write a query (SELECT ...)";
      return out;
    }
    const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(stmt, sqlite3_finalize);
    if (tail && !only_space_or_comments(tail)) {
      out.error = "one statement at a time: the text after the first ';' was not run";
      return out;
    }
    if (!sqlite3_stmt_readonly(stmt)) {
      out.error = "only queries that read the profile run here: this statement would change it";
      return out;
    }
    const int n = sqlite3_column_count(stmt);
    for (int c = 0; c < n; ++c) {
      const char* name = sqlite3_column_name(stmt, c);
      out.columns.emplace_back(name ? name : "?");
    }
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        out.error = single_line(sqlite3_errmsg(db.handle()));
        if (rc == SQLITE_INTERRUPT)
          out.error =
              "stopped: the query needed more work than the profile's size allows (a bound that keeps a "
              "hostile file from hanging the view)";
        break;
      }
      ++out.rows_seen;
      if (out.rows.size() >= max_rows) {
        out.truncated = true;
        continue;  // counted, not kept
      }
      std::vector<std::string>& row = out.rows.emplace_back();
      row.reserve(static_cast<std::size_t>(n));
      for (int c = 0; c < n; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) {
          row.emplace_back("NULL");
        } else if (sqlite3_column_type(stmt, c) == SQLITE_BLOB) {
          row.push_back("<blob, " + std::to_string(sqlite3_column_bytes(stmt, c)) + " bytes>");
        } else {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          row.emplace_back(text ? text : "");
        }
      }
    }
  } catch (const std::exception& e) {
    out.error = single_line(e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string to_csv(const QueryResult& result) {
  std::string out;
  for (std::size_t c = 0; c < result.columns.size(); ++c)
    out += (c ? "," : "") + csv_field(result.columns[c]);
  out += "\r\n";
  for (const auto& row : result.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csv_field(row[c]);
    out += "\r\n";
  }
  return out;
}

std::string to_tsv(const QueryResult& result) {
  auto clean = [](std::string v) {
    for (char& ch : v) {
      if (ch == '\t' || ch == '\n' || ch == '\r') ch = ' ';
    }
    return v;
  };
  std::string out;
  for (std::size_t c = 0; c < result.columns.size(); ++c) out += (c ? "\t" : "") + clean(result.columns[c]);
  out += '\n';
  for (const auto& row : result.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "\t" : "") + clean(row[c]);
    out += '\n';
  }
  return out;
}

}  // namespace meshscope
