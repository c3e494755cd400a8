#include "profiler/writer/rank_rewrites.hpp"

#include <string>

#include <fmt/format.h>

#include "profiler/schema_tables.hpp"

namespace meshscope::writer {

void apply_rank_rewrites(sql::Database& db, std::span<const RankRewrite> rewrites) {
  for (const auto& r : rewrites) {
    // Each rank's description and events move to the new rank; the events' times on the profile clock shift.
    // (The summaries are computed after the rewrites, and ranks.first_ns/last_ns when the writer commits.)
    for (const schema::TableDescription& t : schema::all_tables()) {
      if (t.role != schema::Role::kDescription && t.role != schema::Role::kEvents) continue;
      std::string set = fmt::format("rank = {}", r.new_rank);
      if (t.role == schema::Role::kEvents) {
        for (const schema::Column& c : t.columns) {
          if (c.clock) set += fmt::format(", {0} = {0} + {1}", c.name, r.shift_ns);
        }
      }
      db.exec(fmt::format("UPDATE {} SET {} WHERE rank = {}", t.name, set, r.old_rank));
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
