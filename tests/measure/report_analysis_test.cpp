// `report`'s analysis streamed a batch of ranks at a time against the profile loaded
// whole: the same figures on a real two-rank Kineto job (HTA's trace_filter, read rank by rank), a generated
// job imported as users' jobs are, and generated pipeline jobs whose stages are read again for their blocks
// (the generator's profiles, whose ranks take turns row by row). The golden tests
// (tests/golden/run_golden.cmake) also run every `report` case streamed and compare its output byte for byte.
#include "job/report_analysis.hpp"
#include "job/summaries.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "analysis/measure/summary.hpp"
#include "collectors/import/import.hpp"
#include "profiler/profile.hpp"
#include "tests/measure/generated_jobs.hpp"

namespace meshscope::measure {
namespace {

namespace fs = std::filesystem;

fs::path tmp(const std::string& name) {
  return fs::path(MESHSCOPE_TEST_TMP) / (name + "-" + std::to_string(::getpid()));
}

// HTA's trace_filter job (two ranks), imported once, with summaries (as `meshscope import` writes them) or
// without.
fs::path real_job(bool summaries) {
  const fs::path p = tmp(summaries ? "report-real" : "report-real-bare") += ".msdb";
  if (fs::exists(p)) return p;
  import_traces({fs::path(MESHSCOPE_SHARED_DIR) / "traces/hta/trace_filter"}, p);
  if (summaries) add_summaries(p);
  return p;
}

// A generated job as Kineto traces, imported: each rank's rows together.
const fs::path& imported_job() {
  static const fs::path out = test::import_generated_job("report-gen", 6, 3000);
  return out;
}

// A generated pipeline job written by the generator as a profile (summarised; ranks take turns row by row).
fs::path pipeline_job(const std::string& schedule, int pp, int dp) {
  const fs::path p = tmp(fmt::format("report-{}-p{}-dp{}", schedule, pp, dp)) += ".msdb";
  fs::remove(p);
  const std::string command = fmt::format(
      "'{}' --ranks {} --pp {} --schedule {} --micro-batches 4 --layers {} --steps 2 --stage-jitter 0.1 "
      "--format msdb -q -o '{}' > /dev/null",
      MESHSCOPE_GEN_JOB, pp * dp, pp, schedule, pp, p.string());
  return std::system(command.c_str()) == 0 ? p : fs::path();
}

auto breakdown_key(const Breakdown& b) {
  return std::tie(b.start_ns, b.end_ns, b.span_ns, b.busy_ns, b.idle_ns, b.compute_ns, b.comm_ns, b.memory_ns,
                  b.memory_only_ns, b.sync_ns, b.overlap_ns, b.exposed_comm_ns, b.activities);
}
auto counts_key(const EventCounts& n) {
  return std::tie(n.kernel, n.memcpy, n.memset, n.sync, n.runtime, n.driver, n.cpu_op, n.annotation,
                  n.python_function, n.step, n.gpu_annotation, n.nvtx, n.other, n.collective, n.flow);
}
auto latency_key(const LatencyStats& s) {
  return std::tie(s.count, s.min_ns, s.p50_ns, s.p90_ns, s.p99_ns, s.max_ns, s.mean_ns, s.histogram);
}

// Everything `report` prints from the two, compared (names by their text: string ids may differ).
void expect_same_report(const ReportAnalysis& whole, const ReportAnalysis& streamed) {
  const Profile& wp = whole.profile;
  const Profile& sp = streamed.profile;
  EXPECT_TRUE(counts_key(wp.counts()) == counts_key(sp.counts()));
  EXPECT_EQ(wp.first_ns(), sp.first_ns());
  EXPECT_EQ(wp.last_ns(), sp.last_ns());
  EXPECT_EQ(wp.world_size(), sp.world_size());
  EXPECT_EQ(whole.cpu_operators_loaded, streamed.cpu_operators_loaded);
  EXPECT_EQ(whole.passes, streamed.passes);

  const Analysis& wa = whole.analysis;
  const Analysis& sa = streamed.analysis;
  ASSERT_EQ(wa.ranks.size(), sa.ranks.size());
  for (std::size_t r = 0; r < wa.ranks.size(); ++r) {
    SCOPED_TRACE(fmt::format("rank index {}", r));
    const RankResult& w = wa.ranks[r];
    const RankResult& s = sa.ranks[r];
    EXPECT_EQ(w.rank, s.rank);
    EXPECT_TRUE(breakdown_key(w.total) == breakdown_key(s.total));
    EXPECT_TRUE(breakdown_key(w.outside_steps) == breakdown_key(s.outside_steps));
    EXPECT_EQ(w.classes, s.classes);
    ASSERT_EQ(w.steps.size(), s.steps.size());
    for (std::size_t k = 0; k < w.steps.size(); ++k)
      EXPECT_TRUE(breakdown_key(w.steps[k].gpu) == breakdown_key(s.steps[k].gpu));
    ASSERT_EQ(w.streams.size(), s.streams.size());
    for (std::size_t k = 0; k < w.streams.size(); ++k) {
      EXPECT_EQ(w.streams[k].idle_ns, s.streams[k].idle_ns);
      EXPECT_EQ(w.streams[k].host_bound_ns, s.streams[k].host_bound_ns);
    }
    EXPECT_EQ(w.collective_wait_ns, s.collective_wait_ns);
    EXPECT_EQ(w.collective_transfer_ns, s.collective_transfer_ns);
    EXPECT_EQ(w.launches_without_op, s.launches_without_op);
    // The report's device list reads the thinned rank's streams.
    ASSERT_EQ(devices_used(wp.ranks()[r]).size(), devices_used(sp.ranks()[r]).size());
  }
  EXPECT_EQ(wa.collectives.instances.size(), sa.collectives.instances.size());
  EXPECT_EQ(wa.collectives.matched, sa.collectives.matched);
  EXPECT_EQ(wa.collectives.incomplete, sa.collectives.incomplete);
  EXPECT_EQ(wa.collectives.stats.size(), sa.collectives.stats.size());
  for (std::size_t c = 0; c < wa.top_kernels.size(); ++c) {
    ASSERT_EQ(wa.top_kernels[c].size(), sa.top_kernels[c].size());
    for (std::size_t k = 0; k < wa.top_kernels[c].size(); ++k) {
      EXPECT_EQ(wp.str(wa.top_kernels[c][k].name), sp.str(sa.top_kernels[c][k].name));
      EXPECT_EQ(wa.top_kernels[c][k].total_ns, sa.top_kernels[c][k].total_ns);
    }
  }
  EXPECT_EQ(wa.notes, sa.notes);

  const LaunchAnalysis& wl = whole.launches;
  const LaunchAnalysis& sl = streamed.launches;
  EXPECT_TRUE(latency_key(wl.latency) == latency_key(sl.latency));
  EXPECT_TRUE(latency_key(wl.dry_latency) == latency_key(sl.dry_latency));
  EXPECT_EQ(wl.notes, sl.notes);
  ASSERT_EQ(wl.host_bound_ops.size(), sl.host_bound_ops.size());
  for (std::size_t k = 0; k < wl.host_bound_ops.size(); ++k) {
    EXPECT_EQ(wp.str(wl.host_bound_ops[k].name), sp.str(sl.host_bound_ops[k].name));
    EXPECT_EQ(wl.host_bound_ops[k].gap_ns, sl.host_bound_ops[k].gap_ns);
  }
  ASSERT_EQ(wl.ranks.size(), sl.ranks.size());
  ASSERT_EQ(whole.longest_host_bound.size(), streamed.longest_host_bound.size());
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    EXPECT_EQ(wl.ranks[r].host_bound.size(), sl.ranks[r].host_bound.size());
    EXPECT_EQ(wl.ranks[r].host_bound_ns, sl.ranks[r].host_bound_ns);
    EXPECT_TRUE(latency_key(wl.ranks[r].latency) == latency_key(sl.ranks[r].latency));
    const auto& w = whole.longest_host_bound[r];
    const auto& s = streamed.longest_host_bound[r];
    ASSERT_EQ(w.size(), s.size());
    for (std::size_t k = 0; k < w.size(); ++k) {
      EXPECT_EQ(wp.str(w[k].kernel), sp.str(s[k].kernel));
      EXPECT_EQ(wp.str(w[k].launch), sp.str(s[k].launch));
      EXPECT_EQ(w[k].has_op, s[k].has_op);
      EXPECT_EQ(wp.str(w[k].op), sp.str(s[k].op));
      EXPECT_EQ(std::tie(w[k].device, w[k].stream, w[k].start_ns, w[k].gap_ns, w[k].device_idle_ns),
                std::tie(s[k].device, s[k].stream, s[k].start_ns, s[k].gap_ns, s[k].device_idle_ns));
    }
  }

  const PipelineReport& wpipe = whole.pipeline;
  const PipelineReport& spipe = streamed.pipeline;
  EXPECT_EQ(wpipe.found, spipe.found);
  EXPECT_EQ(wpipe.notes, spipe.notes);
  ASSERT_EQ(wpipe.groups.size(), spipe.groups.size());
  for (std::size_t g = 0; g < wpipe.groups.size(); ++g) {
    const PipelineGroup& w = wpipe.groups[g];
    const PipelineGroup& s = spipe.groups[g];
    EXPECT_EQ(w.ranks, s.ranks);
    EXPECT_EQ(w.schedule, s.schedule);
    EXPECT_EQ(w.micro_batches, s.micro_batches);
    EXPECT_EQ(w.virtual_stages, s.virtual_stages);
    EXPECT_EQ(w.measured_bubble, s.measured_bubble);
    EXPECT_EQ(w.imbalanced_bubble, s.imbalanced_bubble);
    ASSERT_EQ(w.stages.size(), s.stages.size());
    for (std::size_t k = 0; k < w.stages.size(); ++k) {
      ASSERT_EQ(w.stages[k].steps.size(), s.stages[k].steps.size());
      for (std::size_t t = 0; t < w.stages[k].steps.size(); ++t) {
        const auto& wb = w.stages[k].steps[t].blocks;
        const auto& sb = s.stages[k].steps[t].blocks;
        ASSERT_EQ(wb.size(), sb.size());
        for (std::size_t b = 0; b < wb.size(); ++b) {
          EXPECT_EQ(std::tie(wb[b].forward, wb[b].start_ns, wb[b].end_ns, wb[b].activities),
                    std::tie(sb[b].forward, sb[b].start_ns, sb[b].end_ns, sb[b].activities));
        }
      }
    }
  }
}

ReportAnalysis analyze_as(const fs::path& path, Streaming streaming, std::size_t batch_ranks = 32,
                          std::int64_t stream_events = 4'000'000, bool cpu_operators = false) {
  ReportOptions options;
  options.streaming = streaming;
  options.batch_ranks = batch_ranks;
  options.stream_events = stream_events;
  options.cpu_operators = cpu_operators;
  return analyze_for_report(path, options);
}

TEST(ReportAnalysis, StreamedRankByRankIsTheWholeLoadOnARealJob) {
  const fs::path path = real_job(true);
  const ReportAnalysis whole = analyze_as(path, Streaming::kNever);
  EXPECT_FALSE(whole.streamed);
  for (bool cpu_operators : {false, true}) {
    SCOPED_TRACE(cpu_operators ? "--cpu-ops" : "");
    const ReportAnalysis w = cpu_operators ? analyze_as(path, Streaming::kNever, 32, 0, true) : whole;
    const ReportAnalysis s = analyze_as(path, Streaming::kAlways, 1, 4'000'000, cpu_operators);
    EXPECT_TRUE(s.streamed);
    // The thinned ranks hold no events, but the counts are the whole load's.
    for (const Rank& r : s.profile.ranks()) {
      EXPECT_TRUE(r.activities.empty());
      EXPECT_TRUE(r.api_calls.empty());
      EXPECT_TRUE(r.ranges.empty());
    }
    EXPECT_GT(s.profile.counts().kernel, 0);
    expect_same_report(w, s);
  }
}

TEST(ReportAnalysis, AutoStreamsALargeImportedJobInBatches) {
  const fs::path& path = imported_job();
  ASSERT_FALSE(path.empty());
  const ReportAnalysis whole = analyze_as(path, Streaming::kNever);
  // Under the threshold auto loads whole; at or over it, it streams (its ranks' rows lie in runs).
  EXPECT_FALSE(analyze_as(path, Streaming::kAuto, 4, whole.profile.counts().kernel * 1000).streamed);
  const ReportAnalysis s = analyze_as(path, Streaming::kAuto, 4, 0);
  EXPECT_TRUE(s.streamed);
  expect_same_report(whole, s);
}

TEST(ReportAnalysis, AutoLoadsWholeWhatCannotBeStreamed) {
  // No summaries: nothing tells how many rows each rank has.
  EXPECT_FALSE(analyze_as(real_job(false), Streaming::kAlways, 1, 0).streamed);
  // Ranks taking turns row by row: every batch would read the tables whole.
  const fs::path path = tmp("report-interleaved") += ".msdb";
  fs::remove(path);
  ASSERT_EQ(
      std::system(fmt::format("'{}' --ranks 6 --events-per-rank 3000 --format msdb -q -o '{}' > /dev/null",
                              MESHSCOPE_GEN_JOB, path.string())
                      .c_str()),
      0);
  EXPECT_FALSE(analyze_as(path, Streaming::kAuto, 1, 0).streamed);
  EXPECT_TRUE(analyze_as(path, Streaming::kAlways, 1, 0).streamed);
}

// A pipeline's stages are measured on their events: the streamed report reads each stage again (with the CPU
// operators that tell backward from forward, loaded in a second pass).
TEST(ReportAnalysis, StreamedPipelineStagesAreReadAgain) {
  for (const auto& [schedule, pp, dp] :
       {std::tuple<const char*, int, int>{"1f1b", 4, 2}, std::tuple<const char*, int, int>{"gpipe", 3, 1}}) {
    SCOPED_TRACE(fmt::format("{} pp {} dp {}", schedule, pp, dp));
    const fs::path path = pipeline_job(schedule, pp, dp);
    ASSERT_FALSE(path.empty());
    const ReportAnalysis whole = analyze_as(path, Streaming::kNever);
    ASSERT_TRUE(whole.pipeline.found);
    EXPECT_TRUE(whole.cpu_operators_loaded);  // backward blocks are told by the autograd operators
    EXPECT_EQ(whole.passes, 2u);
    const ReportAnalysis s = analyze_as(path, Streaming::kAlways, 3);
    EXPECT_TRUE(s.streamed);
    expect_same_report(whole, s);
  }
}

}  // namespace
}  // namespace meshscope::measure
