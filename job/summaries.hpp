// The summaries of a profile file: computed from its events, a batch of ranks at a time for a large one (as
// `report` streams them) or loaded whole, and written into it (import, merge, `meshscope summarize`,
// `record`); and an import's summaries, made while it read, written once the profile is. The analyses are
// analysis/measure/summary.hpp's; opening, reading and writing the file is the job's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/measure/summary.hpp"
#include "profiler/summary_records.hpp"

namespace meshscope {

// Ranks of more ranges than this are summarised streaming their CPU operators (summarize_in_batches).
inline constexpr std::int64_t kSummaryLargeRankRanges = 2'000'000;

// The summaries of the profile at PATH read a batch of ranks at a time on every core, as `report` streams its
// ranks, instead of loading every event at once (the same summaries; on the 1,024-rank job a fraction of the
// memory, and each batch reuses the pages of the one before). Only for a profile of STREAM_ROWS event rows or
// more whose ranks' rows lie together; nullopt otherwise, and when the ranks read do not hold every row of
// every table (the probed runs missed some): the caller then loads the profile whole. THREADS: lanes (0: one
// per core).
// A rank whose ranges span more than LARGE_RANK_RANGES rows is read alone and without its CPU operators,
// whose totals are streamed from the file instead (Profile::stream_operators: a rank may hold tens of
// millions of identical operators); smaller ranks load them (one read of the table: faster).
std::optional<ProfileSummary> summarize_in_batches(const std::filesystem::path& path,
                                                   std::int64_t stream_rows, unsigned threads = 0,
                                                   std::int64_t large_rank_ranges = kSummaryLargeRankRanges);

// The summaries of the profile at PATH, computed from its events (read-only): in batches of ranks for a
// profile of STREAM_ROWS event rows or more whose ranks' rows lie together, else from the whole profile.
ProfileSummary compute_summaries(const std::filesystem::path& path, std::int64_t stream_rows = 4'000'000);
// Loads the profile at PATH, analyses it and writes its summaries (import, merge, `meshscope summarize`).
// Throws meshscope::Error naming the file on failure; the profile is then unchanged.
// A profile of STREAM_ROWS event rows or more whose ranks' rows lie together is read a batch of ranks at a
// time (the same summaries, in a fraction of the memory); any other is loaded whole.
void add_summaries(const std::filesystem::path& path, std::int64_t stream_rows = 4'000'000);

// Writes the summaries of the profile at PATH, which the import wrote with RANK_FILES (each rank it imported
// and its source file, ImportSummary::ranks): from the ranks SUMMARIES summarised while reading when the
// profile holds those ranks and no other, each from the file named, else by add_summaries(PATH,
// STREAM_ROWS). Throws meshscope::Error naming the file, as add_summaries does.
void write_import_summaries(measure::ImportSummaries& summaries, const std::filesystem::path& path,
                            const std::vector<std::pair<std::int32_t, std::string>>& rank_files,
                            std::int64_t stream_rows = 4'000'000);

}  // namespace meshscope
