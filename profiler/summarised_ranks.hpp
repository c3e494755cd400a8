// Reading a summarised profile's ranks a few at a time: the view's lazily loaded ranks (through the job:
// job/job.hpp), `report`, which streams the ranks of a large job through its analysis instead of holding them
// all (job/report_analysis.hpp), and the summary pass of a large new profile.
//
// The rows of each rank are found by probing the event tables' rowids (rank_rows.hpp); every load is checked
// against the rank's summary (the rows per table it counted at import), and a table whose probed runs missed
// rows is indexed exactly and the ranks read again.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "profiler/profile.hpp"
#include "profiler/rank_rows.hpp"
#include "profiler/summary_records.hpp"

namespace meshscope {

using TableRows = std::array<std::int64_t, kEventTableCount>;

// A rank's rows per event table as its summary counts them: what a load of its runs must find. Without CPU
// operators (LoadOptions::cpu_operators off) the ranges a load leaves out are not expected.
TableRows summary_rows(const RankSummary& summary, bool cpu_operators = true);
// The rows per event table RANK holds.
TableRows loaded_rows(const Rank& rank);
// The events the summaries count over the whole profile.
std::int64_t summary_events(const ProfileSummary& summary);

// The runs of every rank of SUMMARY's profile at PATH, probed and confirmed by the summaries' counts.
RankRowIndex index_summarised_ranks(const std::filesystem::path& path, const ProfileSummary& summary);
// True when some event table's ranks take turns row by row: reading one rank reads that table whole.
bool interleaved(const RankRowIndex& index);

// Reads RANKS (numbers) of BASE with INDEX's runs, checking each against SUMMARY's counts: a table whose
// probed runs missed rows is indexed exactly and the ranks read again. STRINGS: the profile's strings so far
// (grown when a collective names a new source). COUNTS, when given, receives the ranks' event counts as
// Profile::load counts them.
std::vector<std::shared_ptr<const Rank>> load_checked(
    const Profile& base, const ProfileSummary& summary, RankRowIndex& index,
    const std::vector<std::int32_t>& ranks, std::shared_ptr<const std::vector<std::string>>& strings,
    const LoadOptions& options = {}, EventCounts* counts = nullptr);

// A summarised profile's ranks, read a few at a time (load_checked) by one thread: its description, its
// summaries and where each rank's rows lie (its own copy, made exact table by table as loads find the probed
// runs wrong). Copy one per thread.
class RankReader {
 public:
  RankReader(std::shared_ptr<const Profile> description, std::shared_ptr<const ProfileSummary> summary,
             RankRowIndex index);
  // RANKS (numbers), as load_checked reads them.
  std::vector<std::shared_ptr<const Rank>> read(const std::vector<std::int32_t>& ranks,
                                                std::shared_ptr<const std::vector<std::string>>& strings,
                                                const LoadOptions& options = {},
                                                EventCounts* counts = nullptr);
  const Profile& description() const { return *description_; }
  const ProfileSummary& summary() const { return *summary_; }
  const RankRowIndex& index() const { return index_; }

 private:
  std::shared_ptr<const Profile> description_;
  std::shared_ptr<const ProfileSummary> summary_;
  RankRowIndex index_;
};

}  // namespace meshscope
