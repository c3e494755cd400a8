// Rank rewrites: facts that a trace states only after its events (a distributedInfo at the end of a Kineto
// file) move every row of one rank to another and shift its times, when the writer commits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "profiler/sqlite_util.hpp"

namespace meshscope::writer {

struct RankRewrite {
  std::int32_t old_rank, new_rank;
  std::int64_t shift_ns;
};

// Applies REWRITES, in order, to every table of DB.
void apply_rank_rewrites(sql::Database& db, std::span<const RankRewrite> rewrites);

// The rank RANK's rows end up under after REWRITES, and the shift their times took.
struct RewrittenRank {
  std::int32_t rank;
  std::int64_t shift_ns;
};
RewrittenRank rewritten(std::int32_t rank, std::span<const RankRewrite> rewrites);

}  // namespace meshscope::writer
