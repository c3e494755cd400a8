#include "app/gui/query.hpp"

namespace meshscope::gui {

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
