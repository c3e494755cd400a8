// LoadedProfile: what is computed once after a profile is opened (import, load, measured analysis, timeline
// lanes, collective links), on a background thread; the frame loop and every panel only read it. The job
// (job/job.hpp) derives the results; this adds what only the view needs (the timeline's lanes and links) and
// the lazily loaded ranks' bookkeeping (lazy_ranks.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measure/critical_path.hpp"
#include "analysis/measure/launches.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/pipeline_schedule.hpp"
#include "analysis/measure/range_totals.hpp"
#include "analysis/measure/replay.hpp"
#include "analysis/measure/summary.hpp"
#include "app/gui/measured_view.hpp"
#include "app/gui/timeline_lod.hpp"
#include "job/job.hpp"
#include "profiler/profile.hpp"
#include "profiler/summarised_ranks.hpp"

namespace meshscope::gui {

// The share of the loading bar that importing traces takes (loading and analysing the profile the rest).
inline constexpr double kImportShare = 0.7;

// How a profile's events are loaded when it opens (docs/GUI.md "Opening a large job").
enum class LazyMode {
  kAuto,  // rank by rank (lazy ranks) when the profile carries summaries and OpenOptions::lazy_events events
  kAlways,  // rank by rank whenever the profile carries summaries
  kNever,   // every event at once
};
// "auto", "always", "never"; false for anything else.
bool parse_lazy_mode(std::string_view text, LazyMode& mode);

struct OpenOptions {
  LazyMode lazy = LazyMode::kAuto;
  std::int64_t lazy_events = 4'000'000;  // kAuto: from this many events on (a whole load takes seconds)
  std::size_t sample_ranks = 8;          // ranks the measured model of a lazy profile is taken from
  std::size_t rank_cache_bytes = std::size_t{512} << 20;  // what the lazily loaded ranks may hold
};

// Everything the view needs about one opened profile, computed once off the frame loop.
struct LoadedProfile {
  std::filesystem::path source;  // what the user opened (trace, directory or .msdb)
  std::filesystem::path msdb;    // the profile it was imported into (== source for .msdb)
  std::shared_ptr<const Profile> profile;
  // The measured analysis of PROFILE (shared with the job that derived it, and by the generations of a lazily
  // loaded profile that did not change it).
  std::shared_ptr<const measure::Analysis> shared_analysis = std::make_shared<const measure::Analysis>();
  const measure::Analysis& analysis() const { return *shared_analysis; }
  struct RankIndex {
    std::vector<LaneLayout> streams;      // one per Rank::streams
    std::vector<LaneLayout> tracks;       // one per Rank::tracks (preferred lane = depth)
    std::int64_t cpu_ranges = 0;          // ranges on CPU thread tracks (not GPU annotation tracks)
    measure::LaunchIndex launches;        // CPU op -> API call -> GPU activity links, API calls per thread
    std::vector<LaneLayout> api_threads;  // per launches.threads; members index Rank::api_calls (never empty)
    std::vector<LaneLayout> os_threads;   // per Rank::os_threads: its on-CPU intervals, with busy sums
  };
  // The measured model (analysis/compare/measured.hpp): steps as `compare` defines them, the inferred
  // workload and hardware, the measured roofline. The Explorer and the Roofline read it; nothing else
  // measures. Empty, with measured_error saying why, when the profile's work tables are damaged.
  std::optional<compare::MeasuredModel> measured;
  std::string measured_error;
  ProfileStart start;       // what the Explorer opens on (measured_view.hpp)
  MeasuredPoints roofline;  // the Roofline's measured points (measured_view.hpp)
  // Per rank, shared by the generations of a lazily loaded profile (an empty index for a rank not loaded).
  std::vector<std::shared_ptr<const RankIndex>> ranks;
  std::vector<std::vector<std::int32_t>> instance_of;  // per rank, per Rank::collectives: instance, -1 none
  measure::RangeIndex range_index;                     // for range totals
  measure::CriticalPaths critical;   // per rank and step, with its segments (the timeline's highlight)
  measure::PipelineReport pipeline;  // the measured pipeline schedule (Explorer)
  // Per-rank summaries (the Overview): the profile's summary tables, or computed from the events when it has
  // none (summary_note then says why). Shared by the generations of a lazily loaded profile.
  std::shared_ptr<const ProfileSummary> summary = std::make_shared<const ProfileSummary>();
  std::string summary_note;
  // Lazy ranks (app/gui/lazy_ranks.hpp): the profile opened on its summaries and loads each rank's events as
  // the timeline shows it. PROFILE then holds the events of the ranks loaded so far (the others: their
  // description only), ANALYSIS, RANKS and CRITICAL cover those ranks, and JOB_ANALYSIS is the whole job's
  // analysis from the summaries (what the Summary panel shows).
  struct Lazy {
    std::vector<std::uint8_t> loaded;      // per rank index: its events are in PROFILE
    std::vector<std::uint8_t> absent;      // per rank index: the profile holds its summary only (merged part)
    std::vector<std::int32_t> summary_of;  // per rank index: index into summary->ranks, -1 none
    std::size_t loaded_ranks = 0;
    std::size_t bytes = 0,
                budget = 0;  // what the loaded ranks hold (events, analysis, lanes), the cache's bound
    std::string sample;      // the ranks the measured model and pipeline come from
    EventCounts counts;      // the whole job's events, as the summaries count them
    // The job's reader of the profile's ranks (job/job.hpp), with where each rank's rows are; each loader
    // reads with a copy of its own.
    std::shared_ptr<const RankReader> reader;
  };
  std::optional<Lazy> lazy;
  // As a baseline: what its rows are called ("baseline"; "what-if" for a replay of the open profile), and for
  // a replay its edits as given and its steps beside the measured ones.
  std::string baseline_name = "baseline";
  std::string whatif_edits;
  std::vector<measure::ReplayedStep> whatif_steps;
  // A what-if of `--pp N` from one stage: stage s of the open profile's rank r is this profile's rank
  // s × pipeline_world + r, drawn under rank r (0: not pipelined).
  std::int32_t pipeline_world = 0;
  // The replayed duration of step NUMBER of RANK over the measured one; false when not a replay's step.
  // The what-if's step NUMBER of RANK (null: none).
  const measure::ReplayedStep* whatif_step(std::int32_t rank, std::int64_t number) const;
  std::shared_ptr<const measure::Analysis> job_analysis;
  // The whole job's analysis: ANALYSIS, or the summaries' for a lazily loaded profile.
  const measure::Analysis& job() const { return job_analysis ? *job_analysis : analysis(); }
  bool rank_loaded(std::size_t rank_index) const {
    return !lazy || (rank_index < lazy->loaded.size() && lazy->loaded[rank_index]);
  }
  bool rank_absent(std::size_t rank_index) const {
    return lazy && rank_index < lazy->absent.size() && lazy->absent[rank_index];
  }
  // The summary of the rank at RANK_INDEX (nullptr when none).
  const RankSummary* rank_summary(std::size_t rank_index) const;
  double import_s = 0, load_s = 0, analyze_s = 0;
  // False for the preview a summarised profile opens with: its description and summaries
  // only, no events, analysis or timeline index. The Overview draws it; the panels that need events say that
  // they are loading, until the full profile replaces it.
  bool events = true;
};

// The preview of JOB's profile when it carries summaries: its description (Profile::load without the events)
// and its summaries, read in a fraction of a second whatever the job's size; nullptr when it has none.
std::unique_ptr<LoadedProfile> load_preview(Job& job);

// Opens SOURCES as a job (job/job.hpp): one meshscope profile (.msdb) is loaded, anything else (Kineto JSON,
// .json.gz, Nsight Systems SQLite, a directory of traces, several trace files of one job) is imported into a
// cache file first. Then the measured analysis and the timeline index run. PROGRESS (may be empty) gets a
// fraction in [0, 1] and the current stage; FILES (may be empty) the trace files imported so far and in all.
// Throws meshscope::Error (or model/std errors) with one line. PREVIEW (may be empty) receives load_preview()
// of a summarised profile before its events are read.
std::unique_ptr<LoadedProfile> load_profile(
    const std::vector<std::filesystem::path>& sources,
    const std::function<void(double, const char*)>& progress = {},
    const std::function<void(std::size_t, std::size_t)>& files = {},
    const std::function<void(std::unique_ptr<LoadedProfile>)>& preview = {}, const OpenOptions& open = {});
inline std::unique_ptr<LoadedProfile> load_profile(
    const std::filesystem::path& source, const std::function<void(double, const char*)>& progress = {}) {
  return load_profile(std::vector<std::filesystem::path>{source}, progress);
}
// Builds the timeline index of JOB's whole profile (loaded now unless it was) beside the results the job
// derives from it (analysis, measured model, critical paths, pipeline: job/job.hpp), with the job's stored
// summaries when it has them (else they are computed from the events).
std::unique_ptr<LoadedProfile> index_profile(Job& job);
// PROFILE indexed for the view, with the summaries STORED in it (nullptr: computed from the events), as a
// job over a profile in memory (Job::of_profile): what the view does with a replay of the open run.
std::unique_ptr<LoadedProfile> index_profile(std::shared_ptr<const Profile> profile,
                                             std::shared_ptr<const ProfileSummary> stored);
// One rank's timeline index (lanes of its streams, tracks and API threads, launch links; instance_of is left
// to link_instances, which needs the analysis of every rank).
LoadedProfile::RankIndex index_rank(const Rank& rank);
// Sets each rank's instance_of from LOADED's collective analysis.
void link_instances(LoadedProfile& loaded);

}  // namespace meshscope::gui
