#include "profiler/writer/rank_rewrites.hpp"

#include <string>

#include <fmt/format.h>

namespace meshscope::writer {

void apply_rank_rewrites(sql::Database& db, std::span<const RankRewrite> rewrites) {
  for (const auto& r : rewrites) {
    const std::string from = std::to_string(r.old_rank), to = std::to_string(r.new_rank),
                      shift = std::to_string(r.shift_ns);
    for (const char* table : {"activities", "collectives", "api_calls", "ranges", "thread_activity"}) {
      db.exec(fmt::format(
          "UPDATE {} SET rank = {}, start_ns = start_ns + {}, end_ns = end_ns + {} WHERE rank = {}", table,
          to, shift, shift, from));
    }
    db.exec(fmt::format(
        "UPDATE flows SET rank = {0}, src_ns = src_ns + {1}, dst_ns = dst_ns + {1} WHERE rank = {2}", to,
        shift, from));
    db.exec(fmt::format("UPDATE op_work SET rank = {0}, start_ns = start_ns + {1} WHERE rank = {2}", to,
                        shift, from));
    db.exec(fmt::format("UPDATE kernel_work SET rank = {} WHERE rank = {}", to, from));
    for (const char* table : {"ranks", "devices", "process_groups", "streams", "threads", "diagnostics"}) {
      db.exec(fmt::format("UPDATE {} SET rank = {} WHERE rank = {}", table, to, from));
    }
  }
}

RewrittenRank rewritten(std::int32_t rank, std::span<const RankRewrite> rewrites) {
  RewrittenRank out{rank, 0};
  for (const auto& r : rewrites) {
    if (r.old_rank == out.rank) {
      out.rank = r.new_rank;
      out.shift_ns += r.shift_ns;
    }
  }
  return out;
}

}  // namespace meshscope::writer
