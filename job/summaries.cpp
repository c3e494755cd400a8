#include "job/summaries.hpp"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <functional>
#include <memory>

#include "job/rank_stream.hpp"
#include "profiler/error.hpp"
#include "profiler/rank_rows.hpp"
#include "profiler/summarised_ranks.hpp"
#include "profiler/summary_store.hpp"
#include "profiler/timing.hpp"

namespace meshscope {

// The analyses this runs over the file's ranks.
using namespace measure;

std::optional<ProfileSummary> summarize_in_batches(const std::filesystem::path& path,
                                                   std::int64_t stream_rows, unsigned threads,
                                                   std::int64_t large_rank_ranges) {
  // The size first (a small profile, the usual import of a few traces, pays two lookups a table); a file
  // that cannot be read that way is left to the whole load, whose errors name the problem.
  std::array<std::uint64_t, kEventTableCount> spans{};
  try {
    spans = event_rowid_spans(path);
    std::uint64_t rows = 0;
    for (const std::uint64_t span : spans) rows = std::max(rows, rows + span);  // saturated
    if (rows < static_cast<std::uint64_t>(std::max<std::int64_t>(stream_rows, 0))) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  const Profile description = Profile::load(path, LoadOptions{.events = false});
  const RankRowIndex index = index_rank_rows(path);
  if (interleaved(index)) return std::nullopt;

  const std::size_t n = description.ranks().size();
  std::vector<RankSummary> summaries(n);
  std::vector<std::shared_ptr<const Rank>> thin(n);
  std::vector<TableRows> loaded(n);
  const ProfileSummary nothing_to_check;
  Options analysis;
  analysis.threads = threads;
  const RankBatches read{.description = description,
                         .summary = nothing_to_check,
                         .index = index,
                         .load = kSummaryLoad,
                         .large_rank_ranges = large_rank_ranges,
                         .large_load = kSummaryLargeRankLoad,
                         .analysis = analysis};
  RankStream stream = stream_ranks(read, [&](const Profile& composed, std::size_t ri, RankPart& part,
                                             const RankRows& rows, const LoadOptions& load) {
    const Rank& rank = composed.ranks()[ri];
    const std::vector<CollectiveIdentity> identity = identify_collectives(composed, rank, part.cpu_ops);
    std::function<void(OperatorSink&)> streamed;
    if (!load.cpu_operators)
      streamed = [&](OperatorSink& totals) { composed.stream_operators(rows, totals); };
    summaries[ri] = summarize_rank(composed, part.result, &identity, streamed);
    // The ranges read: those loaded but for the operators, which were streamed.
    loaded[ri] = loaded_rows(rank);
    auto& ranges = loaded[ri][static_cast<std::size_t>(EventTable::kRanges)];
    const EventCounts held = count_events(rank);
    ranges += summaries[ri].counts.cpu_op + summaries[ri].counts.python_function - held.cpu_op -
              held.python_function;
    thin[ri] = std::make_shared<const Rank>(without_event_lists(rank));
  });
  // A row is read by its own rank alone: when the ranks read as many rows as each table holds, the runs held
  // them all (rowids dense: their span is the count; else the table is counted).
  for (int t = 0; t < kEventTableCount; ++t) {
    std::int64_t sum = 0;
    for (const TableRows& rows : loaded) sum += rows[static_cast<std::size_t>(t)];
    if (spans[static_cast<std::size_t>(t)] == static_cast<std::uint64_t>(sum)) continue;
    if (event_rows(path, static_cast<EventTable>(t)) != sum) return std::nullopt;
  }
  ::malloc_trim(0);
  const Profile profile = description.with_ranks(thin, stream.strings, &stream.counts);
  const Analysis combined = combine(profile, std::move(stream.parts), {}, analysis);
  ProfileSummary out;
  out.path = profile.path();
  out.world_size = profile.world_size();
  for (std::size_t ri = 0; ri < n; ++ri) {
    summaries[ri].collective_wait_ns = combined.ranks[ri].collective_wait_ns;
    summaries[ri].collective_transfer_ns = combined.ranks[ri].collective_transfer_ns;
  }
  out.ranks = std::move(summaries);
  std::sort(out.ranks.begin(), out.ranks.end(),
            [](const RankSummary& x, const RankSummary& y) { return x.rank < y.rank; });
  return out;
}

ProfileSummary compute_summaries(const std::filesystem::path& path, std::int64_t stream_rows) {
  std::optional<ProfileSummary> summary;
  {
    PhaseTimer timer("summaries: in batches of ranks");
    summary = summarize_in_batches(path, stream_rows);
  }
  if (!summary) {
    PhaseTimer timer("summaries: from the whole profile");
    const Profile profile = Profile::load(path, kSummaryLoad);
    summary = summarize(profile, analyze(profile));
  }
  return std::move(*summary);
}

void add_summaries(const std::filesystem::path& path, std::int64_t stream_rows) {
  const ProfileSummary summary = compute_summaries(path, stream_rows);
  PhaseTimer timer("summaries: write");
  write_summary(path, summary);
}

void write_import_summaries(ImportSummaries& summaries, const std::filesystem::path& path,
                            const std::vector<std::pair<std::int32_t, std::string>>& rank_files,
                            std::int64_t stream_rows) {
  std::optional<ProfileSummary> summary;
  {
    PhaseTimer timer("summaries: from the rows read");
    summary = summaries.combined(Profile::load(path, LoadOptions{.events = false}), rank_files);
  }
  if (!summary) {
    add_summaries(path, stream_rows);
    return;
  }
  PhaseTimer timer("summaries: write");
  write_summary(path, *summary);
}

}  // namespace meshscope
