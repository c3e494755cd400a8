// What `meshscope report` prints, measured: the analysis, the launch/queue and pipeline sections, and the
// longest host-bound launches of each rank. A large summarised profile is streamed: its
// ranks are read a batch at a time (job/rank_stream.hpp, reading through
// profiler/summarised_ranks.hpp), each analysed on its own (RankAnalyzer, launch_part) and then thinned to
// its description, streams, steps and collectives (without_event_lists), which is all the cross-rank pass
// (combine: collective matching, stragglers, top kernels) and the report's tables read. The output is the
// same as from the profile loaded whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "analysis/measure/launch_queue.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/pipeline_schedule.hpp"
#include "profiler/profile.hpp"

namespace meshscope {

enum class Streaming {
  kAuto,    // stream a summarised profile of stream_events events or more whose ranks lie in runs
  kAlways,  // stream whenever the profile has summaries (even where a table's ranks take turns)
  kNever,   // load the profile whole
};

struct ReportOptions {
  measure::Options analysis;
  bool cpu_operators = false;  // load CPU operators from the start (report --cpu-ops)
  std::size_t top = 10;        // host-bound launches kept per rank
  Streaming streaming = Streaming::kAuto;
  std::int64_t stream_events = 4'000'000;
  std::size_t batch_ranks = 32;  // ranks read and analysed at once when streaming
};

struct ReportAnalysis {
  // Loaded whole, or (streamed) every rank without its event lists; counts() are those of the events read,
  // as a whole load counts them, either way.
  Profile profile;
  measure::Analysis analysis;
  measure::LaunchAnalysis launches;
  std::vector<std::vector<measure::HostBoundRow>> longest_host_bound;  // per rank (Profile::ranks() order)
  measure::PipelineReport pipeline;
  bool cpu_operators_loaded = false;  // the analysis read CPU operators (asked, or needed)
  bool streamed = false;
  std::size_t passes = 0;  // reads of the events (a second one loads the CPU operators when needed)
};

// The report's analysis of the profile at PATH. CPU operators are loaded when asked, or when communication
// without metadata needs them (the collective CPU op around a kernel's launch names what a generic kernel
// ran), or a pipeline does (backward blocks are launched from inside the autograd engine's operators): the
// events are then read a second time. Throws meshscope::Error naming the file, as Profile::load does.
ReportAnalysis analyze_for_report(const std::filesystem::path& path, const ReportOptions& options);

}  // namespace meshscope
