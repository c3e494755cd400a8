// Every rank of a profile read and analysed a batch at a time: `report`, which streams the ranks of a large
// job through its analysis instead of holding them all (report_analysis.hpp), and the summary pass of a large
// new profile (summaries.hpp). The ranks are read by profiler/summarised_ranks.hpp (checked against their
// summaries); the analysis of each is measure::RankAnalyzer's.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "profiler/rank_rows.hpp"
#include "profiler/summarised_ranks.hpp"

namespace meshscope {

// Every rank of a profile read and analysed a batch at a time (`report`'s streamed ranks, the summary pass).
struct RankBatches {
  const Profile& description;     // the profile without events (LoadOptions::events off)
  const ProfileSummary& summary;  // checks each load (load_checked); empty: nothing to check against
  const RankRowIndex& index;      // where each rank's rows lie; each lane works on its own copy
  LoadOptions load = {};
  // A rank whose ranges' runs span more than LARGE_RANK_RANGES rows (0: none is large) is read alone, with
  // LARGE_LOAD: the summary pass loads it without its CPU operators and streams them instead.
  std::int64_t large_rank_ranges = 0;
  LoadOptions large_load = {};
  measure::Options analysis = {};  // RankAnalyzer's; analysis.threads lanes (0: one per core)
  std::size_t batch_ranks = 32;    // ranks read at once by a lane
  std::shared_ptr<const std::vector<std::string>> strings = {};  // the profile's (none: description's)
};
// What every rank's analysis and load gave.
struct RankStream {
  std::vector<measure::RankPart> parts;  // per rank of description.ranks(), for measure::combine
  std::shared_ptr<const std::vector<std::string>> strings;  // grown by the collectives' new sources
  EventCounts counts;                                       // of every load, as Profile::load counts them
};
// Reads the ranks of READ.description a batch at a time in lanes on every core, analyses each alone
// (RankAnalyzer) and, on the lane's thread while its events are loaded, calls EACH(composed, rank_index,
// part) with the batch's composed profile (its strings those of the whole stream: every rank's string ids
// name the same strings). EACH may run for several ranks at once (on different indices). ROWS: where the
// rank's rows lie (what was read); LOAD: how it was read (RankBatches::load or large_load).
using EachStreamedRank =
    std::function<void(const Profile& composed, std::size_t rank_index, measure::RankPart& part,
                       const RankRows& rows, const LoadOptions& load)>;
RankStream stream_ranks(const RankBatches& read, const EachStreamedRank& each);

}  // namespace meshscope
