#include "profiler/summarised_ranks.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

namespace meshscope {

TableRows summary_rows(const RankSummary& s, bool cpu_operators) {
  const EventCounts& n = s.counts;
  const std::int64_t operators = cpu_operators ? n.cpu_op + n.python_function : 0;
  return {n.kernel + n.memcpy + n.memset + n.sync, n.runtime + n.driver,
          operators + n.annotation + n.step + n.gpu_annotation + n.nvtx + n.other + n.os_runtime,
          n.collective, n.flow};
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

namespace {

// The CPU operators and Python functions SUMMARY counts in RANKS, when every rank's count is plausible: no
// more ranges than its runs in INDEX span (a summary that claims more is not believed: the load counts them).
std::optional<LoadOptions::OperatorsLeftOut> operators_in_summary(const ProfileSummary& summary,
                                                                  const RankRowIndex& index,
                                                                  const std::vector<std::int32_t>& ranks) {
  LoadOptions::OperatorsLeftOut out;
  for (std::int32_t number : ranks) {
    const RankSummary* s = find_rank(summary, number);
    if (!s) return std::nullopt;
    const EventCounts& n = s->counts;
    const std::int64_t all_ranges = summary_rows(*s, true)[static_cast<std::size_t>(EventTable::kRanges)];
    if (n.cpu_op < 0 || n.python_function < 0 || all_ranges < 0) return std::nullopt;
    // A run over the whole table (a table read whole) bounds nothing; widths in unsigned arithmetic (hostile
    // rowids may span the whole int64 range).
    std::uint64_t span = 0;
    const RankRows rows = index.rows_of(number);
    for (const RowRun& run : rows[EventTable::kRanges]) {
      if (run.first == std::numeric_limits<std::int64_t>::min() || run.last < run.first) return std::nullopt;
      const std::uint64_t width =
          static_cast<std::uint64_t>(run.last) - static_cast<std::uint64_t>(run.first);
      if (width >= std::numeric_limits<std::uint64_t>::max() / 4 - span) return std::nullopt;
      span += width + 1;
    }
    if (static_cast<std::uint64_t>(all_ranges) > span) return std::nullopt;
    out.cpu_ops += n.cpu_op;
    out.python_functions += n.python_function;
  }
  return out;
}

}  // namespace

std::vector<std::shared_ptr<const Rank>> load_checked(
    const Profile& base, const ProfileSummary& summary, RankRowIndex& index,
    const std::vector<std::int32_t>& ranks, std::shared_ptr<const std::vector<std::string>>& strings,
    const LoadOptions& options, EventCounts* counts) {
  const Profile current = base.with_ranks({}, strings);
  auto read = [&](const std::vector<std::int32_t>& which, const LoadOptions& load) {
    std::vector<RankRows> rows;
    for (std::int32_t r : which) rows.push_back(index.rows_of(r));
    LoadedRanks got = Profile::load_ranks(current, rows, load);
    strings = got.strings;
    if (counts) *counts = got.counts;
    return got.ranks;
  };
  // Left out, the CPU operators are taken from the summaries, not counted again (the loaded rows are checked
  // against the same summaries below).
  LoadOptions first = options;
  if (!options.cpu_operators && !options.process_group_calls && !options.operators_left_out)
    first.operators_left_out = operators_in_summary(summary, index, ranks);
  std::vector<std::shared_ptr<const Rank>> got = read(ranks, first);
  std::set<int> wrong_tables;
  for (const auto& rank : got) {
    const RankSummary* s = find_rank(summary, rank->rank);
    if (!s) continue;
    const TableRows want = summary_rows(*s, options.cpu_operators), have = loaded_rows(*rank);
    for (int t = 0; t < kEventTableCount; ++t) {
      // The process groups' calls a load keeps are not counted apart in the summaries.
      if (options.process_group_calls && t == static_cast<int>(EventTable::kRanges)) continue;
      if (want[static_cast<std::size_t>(t)] != have[static_cast<std::size_t>(t)] &&
          !index.exact[static_cast<std::size_t>(t)] && !index.whole[static_cast<std::size_t>(t)])
        wrong_tables.insert(t);
    }
  }
  if (wrong_tables.empty()) return got;
  // The summaries disagree with the rows read: the second read counts what it leaves out itself.
  for (int t : wrong_tables) index_table_exactly(base.path(), static_cast<EventTable>(t), index);
  return read(ranks, options);
}

RankReader::RankReader(std::shared_ptr<const Profile> description,
                       std::shared_ptr<const ProfileSummary> summary, RankRowIndex index)
    : description_(std::move(description)), summary_(std::move(summary)), index_(std::move(index)) {}

std::vector<std::shared_ptr<const Rank>> RankReader::read(
    const std::vector<std::int32_t>& ranks, std::shared_ptr<const std::vector<std::string>>& strings,
    const LoadOptions& options, EventCounts* counts) {
  return load_checked(*description_, *summary_, index_, ranks, strings, options, counts);
}

}  // namespace meshscope
