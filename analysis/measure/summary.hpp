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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/measure/collectives.hpp"
#include "analysis/measure/measure.hpp"
#include "profiler/profile.hpp"
#include "profiler/summary_records.hpp"

namespace meshscope::measure {

// The summaries of PROFILE from its ANALYSIS (measure::analyze of it, default options). The profile must be
// loaded with CPU operators for the operator rows and the training flag; counts come from the rank's events.
ProfileSummary summarize(const Profile& profile, const Analysis& analysis);

// How the summary pass loads a profile's events: CPU operators for the operator rows, no launch
// configurations or links (the summaries read neither).
inline constexpr LoadOptions kSummaryLoad{.kernel_details = false, .links = false};
// A large rank (job/summaries.hpp kSummaryLargeRankRanges) is loaded alone, without its CPU operators but for
// the process groups' calls the analysis names collectives by; its operators' totals are streamed from the
// file.
inline constexpr LoadOptions kSummaryLargeRankLoad{
    .cpu_operators = false, .kernel_details = false, .links = false, .process_group_calls = true};

// The summary of RR's rank of P (its events loaded). IDENTITY: its collectives' (CollectiveReport::identity).
// The collective wait and transfer are RR's: set by measure::combine, the caller's to fill in otherwise.
// OPERATORS: given a sink of the rank's step frame, feeds it the rank's CPU operators and Python functions
// (when the rank was loaded without them: Profile::stream_operators); null: summed from the rank's own
// ranges.
RankSummary summarize_rank(const Profile& p, const RankResult& rr,
                           const std::vector<CollectiveIdentity>* identity,
                           const std::function<void(OperatorSink&)>& operators = {});

// The summaries of an import computed while it reads: each rank's on the import's reading
// threads from the rows just read (ImportOptions::each_rank_read, Profile::of_records), then, once the
// profile is written, the collectives matched across the ranks (measure::combine on each rank's streams,
// steps and collectives). The same tables as add_summaries (job/summaries.hpp), without reading the events
// back from the new file.
class ImportSummaries {
 public:
  ImportSummaries();
  ~ImportSummaries();
  ImportSummaries(const ImportSummaries&) = delete;
  ImportSummaries& operator=(const ImportSummaries&) = delete;

  // For ImportOptions::each_rank_read: summarises the rank of ROWS, read from FILE. Thread-safe; never
  // throws (rows that cannot be summarised here leave their rank to add_summaries).
  void add(const std::filesystem::path& file, const RankRecords& rows) noexcept;

  // The summaries of the profile DESCRIPTION describes (without events), which the import wrote with
  // RANK_FILES (each rank it imported and its source file, ImportSummary::ranks), from the ranks summarised
  // while reading; nullopt when they do not cover its ranks exactly, each from the file named
  // (job/summaries.hpp write_import_summaries then summarises the file).
  std::optional<ProfileSummary> combined(const Profile& description,
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
