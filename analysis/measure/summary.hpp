// Per-rank summaries of the measured analysis: what `info`, `diff` and the GUI's rank × time overview need,
// computed here once when a profile is created (import, record's merge, `meshscope summarize`) and stored in
// the profile's summary_* tables (profiler/summary_store.hpp writes, reads and merges them; docs/PROFILE.md
// "Summaries"), so that those readers load kilobytes instead of the events.
//
// Every figure is the measured analysis' own (measure::analyze): the rank's and each step's breakdown, each
// stream's idle time, and per activity name, CPU operator and collective (operation, group, message size) the
// counts and times that diff compares. A profile written before the tables existed is summarised on the fly
// from its events (the same function), so readers never depend on the tables being there.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "profiler/summary_records.hpp"
#include "profiler/summary_store.hpp"

namespace meshscope::measure {

// The summaries of PROFILE from its ANALYSIS (measure::analyze of it, default options). The profile must be
// loaded with CPU operators for the operator rows and the training flag; counts come from the rank's events.
ProfileSummary summarize(const Profile& profile, const Analysis& analysis);

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

// The summaries of an import computed while it reads: each rank's on the import's reading
// threads from the rows just read (ImportOptions::each_rank_read, Profile::of_records), then, once the
// profile is written, the collectives matched across the ranks (measure::combine on each rank's streams,
// steps and collectives). The
// same tables as add_summaries, without reading the events back from the new file.
class ImportSummaries {
 public:
  ImportSummaries();
  ~ImportSummaries();
  ImportSummaries(const ImportSummaries&) = delete;
  ImportSummaries& operator=(const ImportSummaries&) = delete;

  // For ImportOptions::each_rank_read: summarises the rank of ROWS, read from FILE. Thread-safe; never
  // throws (rows that cannot be summarised here leave their rank to add_summaries).
  void add(const std::filesystem::path& file, const RankRecords& rows) noexcept;

  // Writes the summaries of the profile at PATH, which the import wrote with RANK_FILES (each rank it
  // imported and its source file, ImportSummary::ranks): from the ranks summarised while reading when the
  // profile holds those ranks and no other, each from the file named, else by add_summaries(PATH,
  // STREAM_ROWS). Throws meshscope::Error naming the file, as add_summaries does.
  void write(const std::filesystem::path& path,
             const std::vector<std::pair<std::int32_t, std::string>>& rank_files,
             std::int64_t stream_rows = 4'000'000);
  // The summaries of PATH from the ranks summarised while reading (as write uses them), or nullopt when
  // they do not cover its ranks exactly.
  std::optional<ProfileSummary> combined(const std::filesystem::path& path,
                                         const std::vector<std::pair<std::int32_t, std::string>>& rank_files);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The whole job's analysis as far as SUMMARY tells it, for views of a profile whose events are not all loaded
// (the view's lazy ranks): per rank of PROFILE (by index) its breakdown, steps, stream idle times and kernels
// (names found among PROFILE's strings), and the collectives' statistics by operation, group and size (count,
// total and mean; percentiles and instance matching need the events and stay 0). Ranks without a summary get
// an empty result. A note says that the figures come from the summaries.
Analysis analysis_of_summary(const Profile& profile, const ProfileSummary& summary);

// devices_used (measure.hpp) for a profile loaded without its events: the devices of the rank's streams in
// its summary (every summarised stream ran work).
std::vector<DeviceUse> devices_used(const Rank& rank, const RankSummary& summary);

}  // namespace meshscope::measure
