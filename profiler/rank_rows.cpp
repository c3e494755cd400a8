#include "profiler/rank_rows.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "profiler/error.hpp"
#include "profiler/sqlite_util.hpp"

namespace meshscope {
namespace {

constexpr std::int64_t kNoRank = -1;  // a rank column that holds no rank (NULL, text, out of range)
constexpr RowRun kEveryRow{std::numeric_limits<std::int64_t>::min(),
                           std::numeric_limits<std::int64_t>::max()};

// The table exists and its rowid can be read: an ordinary rowid table without a column named rowid.
bool probeable(sql::Database& db, const char* table) {
  const auto columns = db.table_columns(table);
  if (!columns || !columns->contains("rank")) return false;
  for (const auto& [name, type] : *columns) {
    if (name.size() == 5 &&
        std::equal(name.begin(), name.end(), "rowid", [](char a, char b) { return (a | 0x20) == b; }))
      return false;
  }
  return true;
}

std::int64_t rank_value(const sql::Statement& s, int column) {
  if (s.column_type(column) != SQLITE_INTEGER) return kNoRank;
  const std::int64_t v = s.column_int(column);
  return v >= 0 && v <= kMaxRank ? v : kNoRank;
}

// The first row at or after a rowid: its rowid and rank.
class RowProbe {
 public:
  RowProbe(sql::Database& db, const char* table, std::int64_t& probes)
      : s_(db.prepare(
            fmt::format("SELECT rowid, rank FROM \"{}\" WHERE rowid >= ?1 ORDER BY rowid LIMIT 1", table))),
        probes_(probes) {}
  struct Row {
    std::int64_t rowid, rank;
  };
  std::optional<Row> at_or_after(std::int64_t rowid) {
    ++probes_;
    s_.reset();
    s_.bind(1, rowid);
    if (!s_.step()) return std::nullopt;
    return Row{s_.column_int(0), rank_value(s_, 1)};
  }

 private:
  sql::Statement s_;
  std::int64_t& probes_;
};

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > std::numeric_limits<std::int64_t>::max() - b ? std::numeric_limits<std::int64_t>::max() : a + b;
}

using TableRuns = std::vector<std::pair<std::int64_t, RowRun>>;  // rank, run; in rowid order

// Walks the table run by run: from a run's first row, gallop (1, 2, 4, ... rowids on) while the probed row is
// the same rank's, then halve the last step until the run's last row is found. False when there are more than
// MAX_RUNS runs.
// EXPECTED (may be null): the rows each rank is known to have in the table. A run whose rowids are dense is
// then confirmed with two probes (its last row is the rank's, the next is not) instead of searched.
bool probe_runs(sql::Database& db, const char* table, std::size_t max_runs, TableRuns& out,
                std::int64_t& probes, const std::map<std::int32_t, std::int64_t>* expected) {
  RowProbe probe(db, table, probes);
  std::optional<RowProbe::Row> row;
  {
    // The first row (min() of the rowid is read from the b-tree's edge). Not a probe from INT64_MIN: that is
    // the value the statement binds as NULL (kNull).
    auto first = db.prepare(fmt::format("SELECT min(rowid) FROM \"{}\"", table));
    if (first.step() && first.column_type(0) == SQLITE_INTEGER) row = probe.at_or_after(first.column_int(0));
  }
  while (row) {
    if (out.size() >= max_runs) return false;
    const std::int64_t rank = row->rank, first = row->rowid;
    if (expected && rank != kNoRank) {
      auto count = expected->find(static_cast<std::int32_t>(rank));
      if (count != expected->end() && count->second > 0 &&
          first <= std::numeric_limits<std::int64_t>::max() - count->second) {
        const std::int64_t last = first + count->second - 1;
        auto at_last = probe.at_or_after(last);
        if (at_last && at_last->rowid == last && at_last->rank == rank) {
          auto after =
              last == std::numeric_limits<std::int64_t>::max() ? std::nullopt : probe.at_or_after(last + 1);
          if (!after || after->rank != rank) {
            out.push_back({rank, {first, last}});
            row = after;
            continue;
          }
        }
      }
    }
    // Invariant: LO is a row of RANK; the first row at or after HI is not (or there is none).
    std::int64_t lo = first, hi = first;
    for (std::int64_t step = 1;;) {
      const std::int64_t target = saturating_add(lo, step);
      if (target == lo) break;  // the largest rowid
      auto next = probe.at_or_after(target);
      if (!next || next->rank != rank) {
        hi = target;
        break;
      }
      lo = next->rowid;
      step = step > std::numeric_limits<std::int64_t>::max() / 2 ? step : step * 2;
    }
    // Differences in unsigned arithmetic: a hostile file's rowids may span the whole int64 range.
    auto gap = [&] { return static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo); };
    while (gap() > 1) {
      const auto mid = static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + gap() / 2);
      auto m = probe.at_or_after(mid);
      if (m && m->rowid < hi && m->rank == rank)
        lo = m->rowid;
      else
        hi = mid;
    }
    out.push_back({rank, {first, lo}});
    if (lo == std::numeric_limits<std::int64_t>::max()) break;
    row = probe.at_or_after(lo + 1);
  }
  return true;
}

void exact_runs(sql::Database& db, const char* table, TableRuns& out) {
  auto s = db.prepare(fmt::format("SELECT rowid, rank FROM \"{}\" ORDER BY rowid", table));
  while (s.step()) {
    const std::int64_t rowid = s.column_int(0), rank = rank_value(s, 1);
    if (!out.empty() && out.back().first == rank && out.back().second.last < rowid) {
      out.back().second.last = rowid;
      continue;
    }
    out.push_back({rank, {rowid, rowid}});
  }
}

void set_runs(RankRowIndex& index, EventTable table, const TableRuns& runs) {
  const auto t = static_cast<std::size_t>(table);
  for (auto& [rank, rows] : index.ranks) rows.runs[t].clear();
  for (const auto& [rank, run] : runs) {
    if (rank == kNoRank) continue;  // never a rank's: a full load reports such a row
    RankRows& rows = index.ranks[static_cast<std::int32_t>(rank)];
    rows.rank = static_cast<std::int32_t>(rank);
    rows.runs[t].push_back(run);
  }
}

sql::Database open_for_index(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) fail("{}: no such profile", path.string());
  return sql::Database(path, true);
}

}  // namespace

RankRows RankRowIndex::rows_of(std::int32_t rank) const {
  RankRows rows;
  auto it = ranks.find(rank);
  if (it != ranks.end()) rows = it->second;
  rows.rank = rank;
  for (int t = 0; t < kEventTableCount; ++t) {
    if (whole[static_cast<std::size_t>(t)]) rows.runs[static_cast<std::size_t>(t)] = {kEveryRow};
  }
  return rows;
}

RankRowIndex index_rank_rows(const std::filesystem::path& path, const ExpectedRows* expected,
                             std::size_t max_runs_per_rank) {
  sql::Database db = open_for_index(path);
  RankRowIndex index;
  std::size_t ranks = 1;
  if (db.table_columns("ranks")) {
    auto s = db.prepare("SELECT count(*) FROM ranks");
    if (s.step()) ranks = static_cast<std::size_t>(std::max<std::int64_t>(1, s.column_int_or(0, 1)));
  }
  const std::size_t max_runs = std::max<std::size_t>(64, ranks * max_runs_per_rank);
  for (int t = 0; t < kEventTableCount; ++t) {
    const auto table = static_cast<EventTable>(t);
    if (!db.table_columns(table_name(table))) continue;  // an older profile without the table: no rows
    TableRuns runs;
    try {
      std::map<std::int32_t, std::int64_t> rows;
      if (expected) {
        for (const auto& [rank, per_table] : *expected) rows[rank] = per_table[static_cast<std::size_t>(t)];
      }
      if (!probeable(db, table_name(table)) ||
          !probe_runs(db, table_name(table), max_runs, runs, index.probes, expected ? &rows : nullptr)) {
        index.whole[static_cast<std::size_t>(t)] = true;
        continue;
      }
    } catch (const Error&) {  // a WITHOUT ROWID table: read whole (the loader then says what is wrong)
      index.whole[static_cast<std::size_t>(t)] = true;
      continue;
    }
    set_runs(index, table, runs);
  }
  return index;
}

void index_table_exactly(const std::filesystem::path& path, EventTable table, RankRowIndex& index) {
  sql::Database db = open_for_index(path);
  const auto t = static_cast<std::size_t>(table);
  TableRuns runs;
  try {
    if (!db.table_columns(table_name(table))) return;
    if (!probeable(db, table_name(table))) {
      index.whole[t] = true;
      return;
    }
    exact_runs(db, table_name(table), runs);
  } catch (const Error&) {
    index.whole[t] = true;
    return;
  }
  set_runs(index, table, runs);
  index.whole[t] = false;
  index.exact[t] = true;
}

}  // namespace meshscope
