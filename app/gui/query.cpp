#include "app/gui/query.hpp"

#include <sqlite3.h>

#include <chrono>
#include <exception>

#include "profiler/error.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope::gui {

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

std::string one_line(std::string text) {
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
      out.error = one_line(sqlite3_errmsg(db.handle()));
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
        out.error = one_line(sqlite3_errmsg(db.handle()));
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
    out.error = one_line(e.what());
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

const std::vector<SavedQuery>& saved_queries() {
  static const std::vector<SavedQuery> queries = {
      {"Longest kernels of rank 0",
       "SELECT s.value AS kernel, (a.end_ns - a.start_ns) / 1e3 AS us\n"
       "FROM activities a JOIN strings s ON s.id = a.name\n"
       "WHERE a.rank = 0 AND a.kind = 1 ORDER BY us DESC LIMIT 20"},
      {"Kernel time by name, all ranks",
       "SELECT name, SUM(count) AS calls, SUM(total_ns) / 1e6 AS total_ms, MAX(max_ns) / 1e3 AS longest_us\n"
       "FROM summary_kernels GROUP BY name ORDER BY total_ms DESC LIMIT 50"},
      {"Exposed communication per rank",
       "SELECT rank, exposed_comm_ns / 1e6 AS exposed_ms, collective_wait_ns / 1e6 AS wait_ms\n"
       "FROM summary_ranks ORDER BY exposed_comm_ns DESC LIMIT 20"},
      {"Collectives by operation and size",
       "SELECT s.value AS op, c.group_size, c.in_bytes, COUNT(*) AS calls,\n"
       "       AVG(c.end_ns - c.start_ns) / 1e3 AS mean_us\n"
       "FROM collectives c JOIN strings s ON s.id = c.op\n"
       "GROUP BY op, c.group_size, c.in_bytes ORDER BY SUM(c.end_ns - c.start_ns) DESC LIMIT 50"},
      {"GEMM TFLOP/s by shape",
       "SELECT s.value AS op, d.value AS dims, COUNT(*) AS calls,\n"
       "       SUM(w.flops) / SUM(w.kernel_ns) / 1e3 AS tflops\n"
       "FROM op_work w JOIN strings s ON s.id = w.name JOIN strings d ON d.id = w.input_dims\n"
       "WHERE w.status = 1 AND w.category = 1 AND w.kernel_ns > 0\n"
       "GROUP BY op, dims ORDER BY SUM(w.kernel_ns) DESC LIMIT 50"},
      {"Steps per rank",
       "SELECT rank, step, span_ns / 1e6 AS span_ms, compute_ns / 1e6 AS compute_ms,\n"
       "       exposed_comm_ns / 1e6 AS exposed_ms, idle_ns / 1e6 AS idle_ms\n"
       "FROM summary_steps ORDER BY rank, ordinal"},
      {"Tables of the profile", "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"},
  };
  return queries;
}

}  // namespace meshscope::gui
