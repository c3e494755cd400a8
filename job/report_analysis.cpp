#include "job/report_analysis.hpp"

#include <malloc.h>

#include <algorithm>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "analysis/measure/summary.hpp"
#include "job/rank_stream.hpp"
#include "profiler/summary_store.hpp"
#include "profiler/timing.hpp"

namespace meshscope {

// The analyses this orchestrates over the file's ranks.
using namespace measure;
namespace {

// CPU operators are needed after a first pass without them when communication lacks metadata or a pipeline
// was found (see analyze_for_report).
bool needs_cpu_operators(const ReportOptions& options, const Profile& profile, const Analysis& analysis,
                         bool pipeline_found) {
  return !options.cpu_operators && profile.counts().cpu_op > 0 &&
         (analysis.collectives.launches_without_op > 0 || pipeline_found);
}

ReportAnalysis whole(const std::filesystem::path& path, const ReportOptions& options) {
  ReportAnalysis out;
  out.profile = [&] {
    PhaseTimer timer("report: load profile");
    return Profile::load(path, LoadOptions{.cpu_operators = options.cpu_operators, .kernel_details = false});
  }();
  out.analysis = [&] {
    PhaseTimer timer("report: analyze");
    return analyze(out.profile, options.analysis);
  }();
  out.passes = 1;
  out.cpu_operators_loaded = options.cpu_operators;
  out.pipeline = [&] {
    PhaseTimer timer("report: pipeline schedule");
    return measure_pipeline(out.profile, out.analysis);
  }();
  if (needs_cpu_operators(options, out.profile, out.analysis, out.pipeline.found)) {
    PhaseTimer timer("report: load CPU operators and analyze again");
    out.profile = Profile::load(path, LoadOptions{.kernel_details = false});
    out.analysis = analyze(out.profile, options.analysis);
    out.cpu_operators_loaded = true;
    out.passes = 2;
    if (out.pipeline.found) out.pipeline = measure_pipeline(out.profile, out.analysis);
  }
  {
    PhaseTimer timer("report: launches and queues");
    out.launches = analyze_launches(out.profile, options.analysis.threads);
    const auto& ranks = out.profile.ranks();
    out.longest_host_bound.resize(ranks.size());
    for (std::size_t ri = 0; ri < ranks.size(); ++ri)
      out.longest_host_bound[ri] = longest_host_bound(ranks[ri], out.launches.ranks[ri], options.top);
  }
  return out;
}

// A summarised profile read a batch of ranks at a time.
class Streamer {
 public:
  Streamer(Profile description, ProfileSummary summary, RankRowIndex index, const ReportOptions& options)
      : description_(std::move(description)),
        summary_(std::move(summary)),
        index_(std::move(index)),
        options_(options),
        strings_(description_.strings()) {}

  // One read of every rank's events (with CPU operators or not): the thinned profile and the analyses.
  void pass(bool cpu_operators, ReportAnalysis& out) {
    PhaseTimer timer(cpu_operators ? "report: stream ranks with CPU operators" : "report: stream ranks");
    const std::size_t n = description_.ranks().size();
    std::vector<RankLaunchPart> launch_parts(n);
    std::vector<std::shared_ptr<const Rank>> thin(n);
    out.longest_host_bound.assign(n, {});
    const RankBatches read{.description = description_,
                           .summary = summary_,
                           .index = index_,
                           .load = {.cpu_operators = cpu_operators, .kernel_details = false},
                           .analysis = options_.analysis,
                           .batch_ranks = options_.batch_ranks,
                           .strings = strings_};
    RankStream stream = stream_ranks(
        read, [&](const Profile& composed, std::size_t ri, RankPart&, const RankRows&, const LoadOptions&) {
          const Rank& rank = composed.ranks()[ri];
          launch_parts[ri] = launch_part(rank, ri);
          out.longest_host_bound[ri] = longest_host_bound(rank, launch_parts[ri].launches, options_.top);
          thin[ri] = std::make_shared<const Rank>(without_event_lists(rank));
        });
    strings_ = stream.strings;
    const EventCounts& counts = stream.counts;
    std::vector<RankPart>& parts = stream.parts;
    // The reading threads' buffers were freed into their own malloc arenas: give them back before the
    // cross-rank pass allocates.
    ::malloc_trim(0);
    out.profile = description_.with_ranks(thin, strings_, &counts);
    // The launch delays of every rank are gathered while the collectives are matched (on a second core).
    auto launches = std::async(std::launch::async, [&] {
      PhaseTimer across("report: launch delays of every rank");
      return combine_launches(std::move(launch_parts));
    });
    {
      PhaseTimer across("report: across ranks (collectives, top kernels)");
      out.analysis = combine(out.profile, std::move(parts), {}, options_.analysis);
    }
    out.launches = launches.get();
    out.cpu_operators_loaded = cpu_operators;
    ++out.passes;
  }

  // The pipeline report of OUT's thinned profile, each stage's events read again.
  PipelineReport pipeline(const ReportAnalysis& out) {
    PhaseTimer timer("report: pipeline schedule");
    const Profile& thin = out.profile;
    const LoadOptions load{.cpu_operators = out.cpu_operators_loaded, .kernel_details = false};
    return measure_pipeline(thin, out.analysis, [&](std::size_t ri) {
      const std::vector<std::int32_t> number{thin.ranks()[ri].rank};
      auto strings = thin.strings();
      const auto got = load_checked(description_, summary_, index_, number, strings, load);
      return thin.with_ranks(got, strings, &thin.counts());
    });
  }

 private:
  Profile description_;
  ProfileSummary summary_;
  RankRowIndex index_;
  const ReportOptions& options_;
  std::shared_ptr<const std::vector<std::string>> strings_;
};

}  // namespace

ReportAnalysis analyze_for_report(const std::filesystem::path& path, const ReportOptions& options) {
  if (options.streaming == Streaming::kNever) return whole(path, options);
  // The description first: it refuses what is not a readable profile with the errors of a whole load.
  Profile description = [&] {
    PhaseTimer timer("report: description");
    return Profile::load(path, LoadOptions{.events = false});
  }();
  std::optional<ProfileSummary> summary;
  {
    PhaseTimer timer("report: summaries");
    summary = read_summary(path, true);
  }
  if (!summary || !summary->from_tables || summary->ranks.empty()) return whole(path, options);
  if (options.streaming == Streaming::kAuto && summary_events(*summary) < options.stream_events)
    return whole(path, options);
  RankRowIndex index = [&] {
    PhaseTimer timer("report: rank rows");
    return index_summarised_ranks(path, *summary);
  }();
  // A table whose ranks take turns would be read whole for every batch.
  if (options.streaming == Streaming::kAuto && interleaved(index)) return whole(path, options);

  ReportAnalysis out;
  out.streamed = true;
  Streamer streamer(std::move(description), std::move(*summary), std::move(index), options);
  streamer.pass(options.cpu_operators, out);
  // Whether a pipeline is found depends on the descriptions and collectives alone; its stages' blocks need
  // their events, read again (only the stages) for the pass whose figures are reported.
  const bool pipeline_found = has_pipeline(out.profile, out.analysis);
  // Without pipeline groups the report says so from this pass, reading no events (as when loaded whole).
  PipelineReport none;
  if (!pipeline_found) none = measure_pipeline(out.profile, out.analysis);
  if (needs_cpu_operators(options, out.profile, out.analysis, pipeline_found)) streamer.pass(true, out);
  out.pipeline = pipeline_found ? streamer.pipeline(out) : std::move(none);
  return out;
}

}  // namespace meshscope
