#include "job/rank_stream.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <numeric>
#include <set>

#include "profiler/parallel.hpp"

namespace meshscope {

using namespace measure;

RankStream stream_ranks(const RankBatches& read, const EachStreamedRank& each) {
  const auto& ranks = read.description.ranks();
  const std::size_t n = ranks.size();
  RankStream out;
  out.parts.resize(n);
  out.strings = read.strings ? read.strings : read.description.strings();
  // Batches of up to batch_ranks consecutive ranks; a large rank alone.
  struct Batch {
    std::size_t first, end;
    bool large;
  };
  std::vector<Batch> list;
  {
    const std::size_t most = std::max<std::size_t>(read.batch_ranks, 1);
    auto is_large = [&](std::size_t ri) {
      if (read.large_rank_ranges <= 0) return false;
      std::uint64_t span = 0;
      const RankRows rows = read.index.rows_of(ranks[ri].rank);
      for (const RowRun& run : rows[EventTable::kRanges]) {
        const std::uint64_t width = run.last < run.first ? 0
                                                         : static_cast<std::uint64_t>(run.last) -
                                                               static_cast<std::uint64_t>(run.first);
        span = width >= std::numeric_limits<std::uint64_t>::max() - span ? width : span + width + 1;
      }
      return span > static_cast<std::uint64_t>(read.large_rank_ranges);
    };
    for (std::size_t ri = 0; ri < n; ++ri) {
      if (is_large(ri)) {
        list.push_back({ri, ri + 1, true});
      } else if (list.empty() || list.back().large || list.back().end - list.back().first == most) {
        list.push_back({ri, ri + 1, false});
      } else {
        ++list.back().end;
      }
    }
  }
  const std::size_t batches = list.size();
  std::vector<EventCounts> batch_counts(batches);
  // Each lane has its own copy of the row index (a lane that finds a table's probed runs wrong indexes it
  // exactly for itself). A load adds the collective sources the strings lack: a lane's additions are kept
  // only if no other lane added some since it started, else it reads its batch again with them, so that every
  // rank's ids name the same strings.
  std::mutex strings_mutex;
  struct Lane {
    Lane(const RankRowIndex& i, const Options& o) : index(i), analyzer(o) {}
    RankRowIndex index;
    RankAnalyzer analyzer;
  };
  parallel_for_with(
      batches, read.analysis.threads, [&] { return std::make_unique<Lane>(read.index, read.analysis); },
      [&](std::unique_ptr<Lane>& lane, std::size_t b) {
        std::vector<std::int32_t> numbers;
        for (std::size_t ri = list[b].first; ri < list[b].end; ++ri) numbers.push_back(ranks[ri].rank);
        const LoadOptions& load = list[b].large ? read.large_load : read.load;
        std::vector<std::shared_ptr<const Rank>> got;
        std::shared_ptr<const std::vector<std::string>> strings;
        for (;;) {
          std::shared_ptr<const std::vector<std::string>> before;
          {
            std::lock_guard lock(strings_mutex);
            before = out.strings;
          }
          strings = before;
          got = load_checked(read.description, read.summary, lane->index, numbers, strings, load,
                             &batch_counts[b]);
          if (strings == before) break;
          std::lock_guard lock(strings_mutex);
          if (out.strings == before) {
            out.strings = strings;
            break;
          }
        }
        const Profile composed = read.description.with_ranks(got, strings);
        for (const auto& r : got) {
          const auto ri = static_cast<std::size_t>(composed.rank_index(r->rank));
          out.parts[ri] = lane->analyzer.analyze(composed, ri);
          each(composed, ri, out.parts[ri], lane->index.rows_of(r->rank), load);
        }
      });
  for (const EventCounts& c : batch_counts) out.counts += c;
  return out;
}

}  // namespace meshscope
