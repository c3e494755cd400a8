#include "analysis/measure/rank_reader.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace meshscope::measure {

TableRows summary_rows(const RankSummary& s, bool cpu_operators) {
  const EventCounts& n = s.counts;
  const std::int64_t operators = cpu_operators ? n.cpu_op + n.python_function : 0;
  return {n.kernel + n.memcpy + n.memset + n.sync, n.runtime + n.driver,
          operators + n.annotation + n.step + n.gpu_annotation + n.nvtx + n.other, n.collective, n.flow};
}

TableRows loaded_rows(const Rank& r) {
  return {static_cast<std::int64_t>(r.activities.size()), static_cast<std::int64_t>(r.api_calls.size()),
          static_cast<std::int64_t>(r.ranges.size()), static_cast<std::int64_t>(r.collectives.size()),
          static_cast<std::int64_t>(r.flows.size())};
}

std::int64_t summary_events(const ProfileSummary& summary) {
  std::int64_t events = 0;
  for (const auto& r : summary.ranks) {
    const TableRows rows = summary_rows(r);
    events += std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
  }
  return events;
}

RankRowIndex index_summarised_ranks(const std::filesystem::path& path, const ProfileSummary& summary) {
  ExpectedRows expected;
  for (const auto& r : summary.ranks) expected[r.rank] = summary_rows(r);
  return index_rank_rows(path, &expected);
}

bool interleaved(const RankRowIndex& index) {
  return std::any_of(index.whole.begin(), index.whole.end(), [](bool w) { return w; });
}

std::vector<std::shared_ptr<const Rank>> load_checked(
    const Profile& base, const ProfileSummary& summary, RankRowIndex& index,
    const std::vector<std::int32_t>& ranks, std::shared_ptr<const std::vector<std::string>>& strings,
    const LoadOptions& options, EventCounts* counts) {
  const Profile current = base.with_ranks({}, strings);
  auto read = [&](const std::vector<std::int32_t>& which) {
    std::vector<RankRows> rows;
    for (std::int32_t r : which) rows.push_back(index.rows_of(r));
    LoadedRanks got = Profile::load_ranks(current, rows, options);
    strings = got.strings;
    if (counts) *counts = got.counts;
    return got.ranks;
  };
  std::vector<std::shared_ptr<const Rank>> got = read(ranks);
  std::set<int> wrong_tables;
  for (const auto& rank : got) {
    const RankSummary* s = find_rank(summary, rank->rank);
    if (!s) continue;
    const TableRows want = summary_rows(*s, options.cpu_operators), have = loaded_rows(*rank);
    for (int t = 0; t < kEventTableCount; ++t) {
      if (want[static_cast<std::size_t>(t)] != have[static_cast<std::size_t>(t)] &&
          !index.exact[static_cast<std::size_t>(t)] && !index.whole[static_cast<std::size_t>(t)])
        wrong_tables.insert(t);
    }
  }
  if (wrong_tables.empty()) return got;
  for (int t : wrong_tables) index_table_exactly(base.path(), static_cast<EventTable>(t), index);
  return read(ranks);
}

}  // namespace meshscope::measure
