// One job opened for a front end: what the user gave (a profile, traces, a folder of traces, an Nsight
// Systems export: job/profile_input.hpp) as one profile, and what every command reads or derives from it —
// the description, the stored summaries, the events, the work per operator, the measured analysis, the
// inferred workload — each read or computed once, when first asked for, and kept. A command or the GUI opens
// a job here instead of loading the profile itself, so that two front ends never derive a result two ways.
// Not thread-safe: one front-end thread asks.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/compare/measured.hpp"
#include "analysis/compare/workload.hpp"
#include "analysis/measure/critical_path.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/pipeline_schedule.hpp"
#include "analysis/measure/work.hpp"
#include "collectors/import/import.hpp"
#include "job/profile_input.hpp"
#include "job/report_analysis.hpp"
#include "profiler/profile.hpp"
#include "profiler/summarised_ranks.hpp"
#include "profiler/summary_records.hpp"

namespace meshscope {

struct JobOptions {
  ImportOptions import;       // how traces given are imported into the cache
  measure::Options analysis;  // how analysis() classifies (the user's rules) and on how many threads
  // Import the sources whatever they look like (import_to_cache): the GUI, once a file did not open as a
  // profile, leaves it to the importers to read or refuse.
  bool always_import = false;
};

class Job {
 public:
  // SOURCES as profile_input takes them (import_to_cache with OPTIONS.always_import): traces are imported
  // with their summaries into the user's cache first (one meshscope::Error naming the trace when that
  // fails). Nothing of the profile is read yet.
  static Job open(const std::vector<std::filesystem::path>& sources, JobOptions options = {});
  // A job over PROFILE made in memory (a replay of the open run), with the summaries STORED for it (nullptr:
  // none): its description, events and summaries are those given, no file is loaded for them. Its results are
  // derived as an opened job's are (the work per operator from the file PROFILE names, as for any profile).
  static Job of_profile(std::shared_ptr<const Profile> profile, std::shared_ptr<const ProfileSummary> stored);

  Job(Job&&) noexcept;
  Job& operator=(Job&&) noexcept;
  ~Job();

  const std::filesystem::path& path() const;  // the profile
  const ProfileInput& input() const;          // how it was made (imported, summaries' failure)
  // What the user gave, for a title: the traces' names (sources_title) when imported, else the file's name.
  const std::string& title() const;

  // The profile's description: ranks, devices, process groups, streams (no events). Throws meshscope::Error
  // naming the file when it is no profile.
  const Profile& description();
  // The summaries stored in the profile (docs/PROFILE.md "Summaries"); nullptr when it has none.
  const ProfileSummary* summary();
  // The profile's ranks to read a few at a time (the GUI's lazily loaded ranks), when it carries summaries:
  // where each rank's rows lie, probed once (index_summarised_ranks), with the description and summaries.
  // Each call gives a reader of its own (copy it for another thread). nullopt without summaries.
  std::optional<RankReader> rank_reader();
  // The profile with its events as the analyses read them (no launch configurations, no links); the complete
  // profile when that is loaded already (it holds all of this).
  const Profile& profile();
  // The profile with everything it holds (what an export writes, what the GUI draws).
  const Profile& complete_profile();
  // The same three, shared with a front end that keeps them beyond the job (the GUI's loaded profile).
  std::shared_ptr<const Profile> shared_description();
  std::shared_ptr<const ProfileSummary> shared_summary();  // nullptr when the profile has none
  std::shared_ptr<const Profile> shared_complete_profile();
  // The work per operator of profile(): every counted operator and each kernel's share.
  const measure::ProfileWork& work();
  // The measured analysis of profile() with the options the job was opened with.
  const measure::Analysis& analysis();
  std::shared_ptr<const measure::Analysis> shared_analysis();
  // The measured model of profile() (analysis/compare/measured.hpp: steps as `compare` defines them, the
  // inferred workload and hardware, the measured roofline). Throws (the same one line each time) when the
  // profile's work tables are damaged.
  const compare::MeasuredModel& measured();
  // The critical path of every step of every rank, and the measured pipeline schedule, of profile().
  std::shared_ptr<const measure::CriticalPaths> critical_paths();
  std::shared_ptr<const measure::PipelineReport> pipeline();
  // What the profile ran (compare::infer_workload), from the lowest rank's operators: with the description
  // and the summaries when the profile has them (kilobytes read), else with its events.
  const compare::Workload& workload();
  // `report`'s analysis: the profile loaded whole, or its ranks streamed a batch at a time (not kept).
  ReportAnalysis report_analysis(const ReportOptions& options) const;

 private:
  struct State;
  explicit Job(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace meshscope
