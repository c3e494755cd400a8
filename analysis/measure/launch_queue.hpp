// Launch and queue analysis (Holistic Trace Analysis' kernel launch statistics and queue length analysis),
// on the launch links of launches.hpp (CPU operator -> CUDA call -> GPU activity, one per activity):
//   * launch latency of every GPU activity whose launch is in the profile: its start on the GPU minus the end
//     of the CUDA call that launched it (HTA's "launch delay"; negative when the GPU started it before the
//     call returned), as a distribution per rank and over the profile, and apart for launches onto a stream
//     that had run dry (the launch overhead itself, without waiting behind other work);
//   * queue length per stream over time: activities launched on the stream and not yet finished (+1 at the
//     launch call's start, -1 at the activity's end), with its maximum, time-weighted mean and the time it
//     was empty;
//   * host-bound launches: activities whose launch call started after every earlier activity of their stream
//     had finished, so that the GPU waited for the CPU (the gap is "host-bound" idle time in measure.hpp's
//     idle breakdown), each tied to the CPU operator that issued it, and summed per operator name; apart, the
//     launches that ended a period in which nothing ran on their whole device and were launched after it
//     began (the GPU, not only the stream, had run dry), each with that period (counted once, for the
//     activity that ended it).
// Activities whose launch is not in the profile (no correlation match) enter none of these; their number is
// reported. Sync records are not work and are skipped.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/measure/launches.hpp"
#include "profiler/profile.hpp"

namespace meshscope::measure {

// A distribution of signed durations.
struct LatencyStats {
  std::int64_t count = 0;
  TimeNs min_ns = 0, p50_ns = 0, p90_ns = 0, p99_ns = 0, max_ns = 0, mean_ns = 0;
  // histogram[0]: negative; histogram[1]: [0, 1 µs); histogram[k]: [2^(k-2), 2^(k-1)) µs; the last bucket
  // holds everything longer.
  static constexpr int kBuckets = 26;
  std::array<std::int64_t, kBuckets> histogram{};
  // Lower edge of bucket K in ns (bucket 0: no lower edge, returns the most negative time).
  static TimeNs bucket_start_ns(int k);
};

// The queue length of one stream from TIME until the next point.
struct QueuePoint {
  TimeNs time_ns = 0;
  std::int32_t length = 0;
};

struct StreamQueue {
  std::uint32_t stream_index = 0;  // into Rank::streams
  std::int64_t launches = 0;       // activities with a launch in the profile
  std::int32_t max_length = 0;
  double mean_length = 0;  // time-weighted over [first launch, last end]
  TimeNs span_ns = 0;      // first launch .. last end
  TimeNs empty_ns = 0;     // time with nothing queued or running inside the span
};

struct HostBoundLaunch {
  std::uint32_t activity = 0;        // into Rank::activities
  std::uint32_t api = 0;             // into Rank::api_calls
  std::uint32_t op = kNoIndex;       // into Rank::ranges: the CPU operator that issued the call
  TimeNs gap_ns = 0;                 // the stream sat idle this long before the activity started
  TimeNs launched_after_dry_ns = 0;  // the call started this long after the stream ran dry
  // The device had run dry: the activity was the first to start on its device after a period with nothing
  // running there, launched after that period began; its length (else 0).
  TimeNs device_idle_ns = 0;
  // What the launching thread did while the stream sat dry before the call (from the end of the stream's
  // earlier work to the call's start), where the profile holds the OS's record of it (Nsight exports): the
  // longest OS runtime call in that time (into Rank::ranges; kNoIndex: none) and how much of it fell there,
  // and the time the thread was off its CPU core (-1: its scheduling was not recorded).
  std::uint32_t os_call = kNoIndex;
  TimeNs os_call_ns = 0;
  TimeNs os_calls_total_ns = 0;  // every OS runtime call in that time (their union)
  TimeNs off_cpu_ns = -1;
};

struct OpHostBound {
  StringId name = kNoString;  // CPU operator (kNoString: no operator was open)
  std::int64_t launches = 0;
  TimeNs gap_ns = 0;
  TimeNs device_idle_ns = 0;
};

struct RankLaunches {
  std::int32_t rank = 0;
  std::size_t rank_index = 0;
  std::int64_t activities = 0;              // GPU activities (sync records excluded)
  std::int64_t linked = 0;                  // of those, with their launch call in the profile
  LatencyStats latency;                     // every linked activity
  LatencyStats dry_latency;                 // linked activities launched onto an empty stream
  std::vector<StreamQueue> streams;         // one per Rank::streams entry
  std::vector<HostBoundLaunch> host_bound;  // by activity start
  std::vector<OpHostBound> host_bound_ops;  // by gap, descending
  TimeNs host_bound_ns = 0;                 // Σ gap_ns
  TimeNs device_idle_ns = 0;                // Σ device_idle_ns
  std::int64_t device_dry_launches = 0;     // host-bound launches with device_idle_ns > 0
  // Of the host-bound launches' time before their calls: spent in OS runtime calls (each launch's calls
  // counted once however they nest), and off the CPU core over the launches whose thread's scheduling is
  // recorded (their number).
  TimeNs host_bound_in_os_calls_ns = 0;
  TimeNs host_bound_off_cpu_ns = 0;
  std::int64_t host_bound_scheduled = 0;
};

struct LaunchAnalysis {
  std::vector<RankLaunches> ranks;          // Profile::ranks() order
  LatencyStats latency, dry_latency;        // over every rank
  std::vector<OpHostBound> host_bound_ops;  // over every rank, by gap, descending
  std::vector<std::string> notes;
};

// One rank, with its launch links (index_launches(rank)).
RankLaunches analyze_rank_launches(const Rank& rank, const LaunchIndex& index);

// OPS (host_bound_ops of one rank or the job) merged by the operator their CPU ranges name
// (vocabulary::operator_name: PyTorch's NVTX ranges carry a sequence number and an id per call, so 501
// launches of aten::add are 501 names), each keeping its first range's name; by gap, descending.
std::vector<OpHostBound> by_operator(const Profile& profile, const std::vector<OpHostBound>& ops);

// Every rank (THREADS workers; 0 = hardware threads), building the launch links itself.
LaunchAnalysis analyze_launches(const Profile& profile, unsigned threads = 0);

// analyze_launches() in two parts, for callers that read a profile's ranks a few at a time (`report`
// streaming the ranks of a large job): one rank's figures with the launch delays behind its statistics, then
// the profile's from every rank's part (in Profile::ranks() order).
struct RankLaunchPart {
  RankLaunches launches;
  // Every linked activity's launch delay, and those of the activities launched onto an empty stream.
  std::vector<TimeNs> latency, dry_latency;
};
RankLaunchPart launch_part(const Rank& rank, std::size_t rank_index);
LaunchAnalysis combine_launches(std::vector<RankLaunchPart> parts);

// A host-bound launch with what `report` names it by, so that it outlives the rank's events.
struct HostBoundRow {
  StringId kernel = kNoString;  // the activity's name
  StringId launch = kNoString;  // the launching call's name
  StringId op = kNoString;      // the CPU operator's name (when has_op)
  bool has_op = false;
  std::int32_t device = 0;
  std::int64_t stream = 0;
  TimeNs start_ns = 0, gap_ns = 0, launched_after_dry_ns = 0, device_idle_ns = 0;
  StringId os_call = kNoString;  // the longest OS runtime call before the launch (HostBoundLaunch::os_call)
  TimeNs os_call_ns = 0, off_cpu_ns = -1;
};
// The TOP host-bound launches of RANK with the longest gaps (on a tie, the earlier first).
std::vector<HostBoundRow> longest_host_bound(const Rank& rank, const RankLaunches& launches, std::size_t top);

// The queue length of stream STREAM (index into Rank::streams) over time: a point wherever it changes.
std::vector<QueuePoint> queue_length(const Rank& rank, const LaunchIndex& index, std::uint32_t stream);

}  // namespace meshscope::measure
