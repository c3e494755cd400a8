// loaded_profile.cpp: opening a profile for the view, off the frame loop: the job opens (imports, loads,
// analyses) it, and this indexes what the timeline draws (lanes per stream, track and thread, launch links,
// collective instances).
#include "app/gui/loaded_profile.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "app/gui/lazy_ranks.hpp"
#include "collectors/import/import.hpp"
#include "job/profile_input.hpp"
#include "profiler/error.hpp"
#include "profiler/output_file.hpp"
#include "profiler/parallel.hpp"
#include "profiler/timing.hpp"

namespace meshscope::gui {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

LoadedProfile::RankIndex index_rank(const Rank& rank) {
  LoadedProfile::RankIndex index;
  index.streams.reserve(rank.streams.size());
  for (std::size_t s = 0; s < rank.streams.size(); ++s) {
    index.streams.push_back(assign_lanes(rank.stream_activities(s)));
    add_busy_prefix(index.streams.back(), rank.stream_activities(s));
    add_fold_index(index.streams.back(), rank.stream_activities(s));
  }
  index.tracks.reserve(rank.tracks.size());
  for (std::size_t k = 0; k < rank.tracks.size(); ++k) {
    index.tracks.push_back(
        assign_lanes(rank.track_ranges(k), [](const CpuRange& range) { return std::max(0, range.depth); }));
    if (!rank.tracks[k].gpu) index.cpu_ranges += rank.tracks[k].count;
  }
  index.os_threads.reserve(rank.os_threads.size());
  for (std::size_t t = 0; t < rank.os_threads.size(); ++t) {
    index.os_threads.push_back(assign_lanes(rank.thread_on_cpu(t)));
    add_busy_prefix(index.os_threads.back(), rank.thread_on_cpu(t));
    add_fold_index(index.os_threads.back(), rank.thread_on_cpu(t));
  }
  // Launch links, and each thread's API calls on sub-lanes.
  index.launches = measure::index_launches(rank);
  struct Span {
    TimeNs start_ns, end_ns;
  };
  std::vector<Span> spans;  // start and end of one thread's calls, for assign_lanes
  for (const auto& thread : index.launches.threads) {
    spans.clear();
    for (std::uint32_t call : thread.calls)
      spans.push_back({rank.api_calls[call].start_ns, rank.api_calls[call].end_ns});
    LaneLayout layout = assign_lanes(std::span<const Span>(spans));
    if (layout.members.empty()) layout.members.assign(1, {});
    if (layout.members.size() == 1 && layout.members[0].empty()) {
      layout.members[0].resize(thread.calls.size());
      for (std::uint32_t k = 0; k < thread.calls.size(); ++k) layout.members[0][k] = k;
    }
    for (auto& lane : layout.members) {
      for (auto& k : lane) k = thread.calls[k];
    }
    index.api_threads.push_back(std::move(layout));
  }
  return index;
}

void link_instances(LoadedProfile& loaded) {
  const auto& ranks = loaded.profile->ranks();
  loaded.instance_of.resize(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    loaded.instance_of[r].assign(ranks[r].collectives.size(), -1);
  const auto& report = loaded.analysis().collectives;
  for (std::size_t i = 0; i < report.instances.size(); ++i) {
    const auto& instance = report.instances[i];
    for (std::uint32_t m = 0; m < instance.member_count; ++m) {
      const auto& member = report.members[instance.first_member + m];
      auto& of = loaded.instance_of[member.rank_index];
      if (member.collective < of.size()) of[member.collective] = static_cast<std::int32_t>(i);
    }
  }
}

const RankSummary* LoadedProfile::rank_summary(std::size_t rank_index) const {
  if (lazy) {
    if (rank_index >= lazy->summary_of.size() || lazy->summary_of[rank_index] < 0) return nullptr;
    return &summary->ranks[static_cast<std::size_t>(lazy->summary_of[rank_index])];
  }
  if (!profile || rank_index >= profile->ranks().size()) return nullptr;
  return find_rank(*summary, profile->ranks()[rank_index].rank);
}

std::unique_ptr<LoadedProfile> index_profile(Job& job) {
  std::shared_ptr<const Profile> profile = job.shared_complete_profile();
  auto loaded = std::make_unique<LoadedProfile>();
  loaded->msdb = profile->path();
  loaded->source = profile->path();
  const auto t = Clock::now();
  {
    PhaseTimer timer("view: analyze");
    loaded->shared_analysis = job.shared_analysis();
  }
  // The measured model (steps as `compare` defines them, workload, roofline), derived once by the job.
  try {
    PhaseTimer timer("view: measured model");
    loaded->measured = job.measured();
    loaded->start = profile_start(*loaded->measured, profile->world_size());
    loaded->roofline = measured_points(*loaded->measured);
  } catch (const std::exception& e) {  // damaged work tables: the rest of the profile still opens
    loaded->measured.reset();
    loaded->measured_error = e.what();
  }
  // The per-rank summaries the Overview draws: read from the profile when it holds them (import writes them),
  // else computed from the events and the analysis (the same function).
  try {
    if (auto stored = job.shared_summary()) loaded->summary = std::move(stored);
  } catch (const std::exception& e) {
    loaded->summary_note = std::string(e.what()) + "; the overview is computed from the events";
  }
  if (!loaded->summary->from_tables)
    loaded->summary =
        std::make_shared<const ProfileSummary>(measure::summarize(*profile, loaded->analysis()));
  loaded->analyze_s = seconds_since(t);
  {
    PhaseTimer lanes_timer("view: lanes and launches");
    const auto& ranks = profile->ranks();
    loaded->ranks.resize(ranks.size());
    parallel_for(ranks.size(), 0, [&](std::size_t r) {
      loaded->ranks[r] = std::make_shared<const LoadedProfile::RankIndex>(index_rank(ranks[r]));
    });
    loaded->profile = profile;
    link_instances(*loaded);
  }
  {
    PhaseTimer timer("view: range index");
    loaded->range_index = measure::index_ranges(*profile);
  }
  // The critical path of every step (the timeline's overlay) and the measured pipeline schedule (Explorer),
  // derived once by the job rather than per frame.
  {
    PhaseTimer timer("view: critical paths");
    loaded->critical = *job.critical_paths();
  }
  {
    PhaseTimer timer("view: pipeline");
    loaded->pipeline = *job.pipeline();
  }
  loaded->profile = std::move(profile);
  return loaded;
}

std::unique_ptr<LoadedProfile> index_profile(std::shared_ptr<const Profile> profile,
                                             std::shared_ptr<const ProfileSummary> stored) {
  Job job = Job::of_profile(std::move(profile), std::move(stored));
  return index_profile(job);
}

std::unique_ptr<LoadedProfile> load_preview(Job& job) {
  auto summary = job.shared_summary();
  if (!summary) return nullptr;
  auto loaded = std::make_unique<LoadedProfile>();
  loaded->profile = job.shared_description();
  loaded->source = loaded->msdb = job.path();
  loaded->summary = std::move(summary);
  loaded->events = false;
  return loaded;
}

namespace {

// JOB's whole profile loaded (timed: LoadedProfile::load_s) and indexed for the view, opened as SOURCE;
// ANALYSING is called between the two.
template <typename Analysing>
std::unique_ptr<LoadedProfile> load_and_index(Job& job, const std::filesystem::path& source,
                                              Analysing analysing) {
  const auto t = Clock::now();
  {
    PhaseTimer timer("view: load profile");
    job.shared_complete_profile();
  }
  const double load_s = seconds_since(t);
  analysing();
  auto loaded = index_profile(job);
  loaded->source = source;
  loaded->load_s = load_s;
  return loaded;
}

}  // namespace

std::unique_ptr<LoadedProfile> load_profile(
    const std::vector<std::filesystem::path>& sources,
    const std::function<void(double, const char*)>& progress,
    const std::function<void(std::size_t, std::size_t)>& files,
    const std::function<void(std::unique_ptr<LoadedProfile>)>& preview, const OpenOptions& open) {
  auto report = [&](double fraction, const char* stage) {
    if (progress) progress(fraction, stage);
  };
  if (sources.empty()) throw Error("nothing to open");
  for (const auto& s : sources) {
    if (!std::filesystem::exists(s)) throw Error(s.string() + ": no such file or directory");
    require_regular_input(s, true);  // a FIFO or a device would block the first read forever
  }
  const std::filesystem::path& source = sources.front();
  if (sources.size() == 1 && !std::filesystem::is_directory(source) && is_sqlite(source)) {
    // A meshscope profile loads directly; another SQLite file (an Nsight Systems export) is imported.
    try {
      Job job = Job::open(sources);
      if (!job.input().imported) {
        // A summarised profile shows the whole job at once (the Overview) while its events load: all of
        // them, or, for a large job, the ranks the timeline shows, one by one (lazy ranks).
        if (auto early = load_preview(job)) {
          std::optional<RankReader> reader = open_lazily(job, open);
          if (preview) preview(std::make_unique<LoadedProfile>(*early));
          if (reader) {
            report(0.3, "reading sample ranks");
            auto loaded = lazy_base(std::move(early), std::move(*reader), open);
            loaded->source = source;
            report(1.0, "ready");
            return loaded;
          }
        }
        report(0.1, "loading profile");
        auto loaded = load_and_index(job, source, [&] { report(0.6, "analysing"); });
        report(1.0, "ready");
        return loaded;
      }
    } catch (const Error&) {
      // A profile that does not load says why; any other SQLite file falls through to the importers.
      if (Profile::looks_like_profile(source)) throw;
    }
  }
  JobOptions options;
  options.import.progress = [&](double f) { report(kImportShare * f, "importing"); };
  options.import.files_done = files;
  // What did not open as a profile above is the importers' to read or refuse with one line.
  options.always_import = true;
  report(0.0, "importing");
  // As every command imports what it is given: the same cache file, with the summaries.
  Job job = Job::open(sources, std::move(options));
  const std::filesystem::path msdb = job.path();
  const double import_s = job.input().import_s;
  report(kImportShare, "loading profile");
  auto loaded = load_and_index(job, source, [&] { report(0.85, "analysing"); });
  loaded->msdb = msdb;
  // Messages name the file the user opened, not the import cache's copy of it.
  const std::string cached = msdb.string(), opened = sources_title(sources);
  for (std::string* text : {&loaded->measured_error, &loaded->summary_note}) {
    for (auto at = text->find(cached); at != std::string::npos; at = text->find(cached, at + opened.size()))
      text->replace(at, cached.size(), opened);
  }
  loaded->import_s = import_s;
  report(1.0, "ready");
  return loaded;
}

bool parse_lazy_mode(std::string_view text, LazyMode& mode) {
  if (text == "auto")
    mode = LazyMode::kAuto;
  else if (text == "always")
    mode = LazyMode::kAlways;
  else if (text == "never")
    mode = LazyMode::kNever;
  else
    return false;
  return true;
}

const measure::ReplayedStep* LoadedProfile::whatif_step(std::int32_t rank, std::int64_t number) const {
  for (const auto& s : whatif_steps)
    if (s.rank == rank && s.step == number) return &s;
  return nullptr;
}

}  // namespace meshscope::gui
