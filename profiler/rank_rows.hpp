// Where each rank's rows lie in the event tables, so that one rank's events load without reading the tables
// whole (Profile::load_ranks; the view's lazily loaded ranks).
//
// The event tables have no index on their rank column (each index costs import time), but every writer writes
// a rank's rows together: the rowids of one rank form one run per table. index_rank_rows() finds the runs
// with point queries on the rowid (a gallop and a binary search per run, a few dozen b-tree lookups), not a
// scan. A run found that way is a guess between the probed rows: a caller that knows how many rows each rank
// has (the summaries' event counts) checks the rows it loads against them and, when they disagree, asks
// index_table_exactly() for the true runs of that table (one pass over its rank column).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope {

struct RankRowIndex {
  std::map<std::int32_t, RankRows> ranks;  // every rank with rows in some event table
  // Per EventTable: its ranks take turns row by row (more runs than the search allows), or its rowids cannot
  // be probed: a rank's load then reads that table whole (rows_of() gives one run over every rowid).
  std::array<bool, kEventTableCount> whole{};
  // Per EventTable: the runs were read exactly (index_table_exactly), not probed.
  std::array<bool, kEventTableCount> exact{};
  std::int64_t probes = 0;  // point queries made (docs/PERFORMANCE.md)

  // What Profile::load_ranks should read for RANK (no runs where the rank has no rows).
  RankRows rows_of(std::int32_t rank) const;
};

// Per rank, the rows it has in each EventTable (the summaries' event counts).
using ExpectedRows = std::map<std::int32_t, std::array<std::int64_t, kEventTableCount>>;

// Runs per table of the profile at PATH, found by probing. EXPECTED (may be null) lets a run of dense rowids
// be confirmed with two probes instead of searched. A table with more than MAX_RUNS_PER_RANK runs per rank on
// average (ranks taking turns) is marked whole. Throws meshscope::Error naming the file when it cannot be
// read as a profile.
RankRowIndex index_rank_rows(const std::filesystem::path& path, const ExpectedRows* expected = nullptr,
                             std::size_t max_runs_per_rank = 8);

// Replaces INDEX's runs of TABLE with the exact ones, read from the table's rank column in rowid order (a
// table whose rowid cannot be read is marked whole).
void index_table_exactly(const std::filesystem::path& path, EventTable table, RankRowIndex& index);

}  // namespace meshscope
