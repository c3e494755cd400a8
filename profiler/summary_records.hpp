// What the summary tables hold (profiler/schema.sql summary_*, docs/PROFILE.md "Summaries"): per rank its
// breakdown, steps, streams, kernels, CPU operators, collectives and overview, as
// analysis/measure/summary.hpp computes them and profiler/summary_store.hpp writes and reads them; and the
// measured types they are made of (the class of a GPU activity, a breakdown, a stream's idle time), which the
// analyses use throughout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profiler/profile.hpp"

namespace meshscope {

// The class of a GPU activity (analysis/measure/classify.hpp decides it); stored as its value.
enum class ActivityClass : std::uint8_t { kCompute = 0, kComm = 1, kMemory = 2, kSync = 3 };
inline constexpr int kClassCount = 4;

// One breakdown; per rank (whole profile) and per step.
struct Breakdown {
  TimeNs start_ns = 0, end_ns = 0;  // first start and last end of the GPU work counted
  TimeNs span_ns = 0;               // end − start
  TimeNs busy_ns = 0;               // |∪ all work|
  TimeNs idle_ns = 0;               // span − busy
  TimeNs compute_ns = 0, comm_ns = 0, memory_ns = 0;
  TimeNs memory_only_ns =
      0;               // |memory − (compute ∪ comm)|: span = compute + exposed comm + memory only + idle
  TimeNs sync_ns = 0;  // |∪ sync records| (waits; not part of busy)
  TimeNs overlap_ns = 0;  // |comm ∩ compute|
  TimeNs exposed_comm_ns = 0;
  std::int64_t activities = 0;  // activities counted (sync records included)
};

// Idle time of one stream, between consecutive stretches of work on it (HTA's idle time breakdown).
struct StreamIdle {
  std::uint32_t stream_index = 0;  // into Rank::streams
  TimeNs span_ns = 0, busy_ns = 0, idle_ns = 0;
  TimeNs host_bound_ns = 0;  // the next activity was launched only after the stream ran dry: the GPU waited
  TimeNs kernel_gap_ns = 0;  // launched in time, gap < kernel_gap_threshold_ns: launch overhead
  TimeNs other_ns = 0;       // launched in time, longer gap: waits on other streams, events, syncs
  std::int64_t gaps = 0;
  TimeNs compute_ns = 0;                         // summed duration of its compute activities
  ActivityClass work = ActivityClass::kCompute;  // the class with the most time on this stream (kSync when it
                                                 // holds only synchronisations, as device-wide syncs do)
};

// One activity name of one class on one rank.
struct KernelSummary {
  std::string name;
  ActivityClass cls = ActivityClass::kCompute;
  std::int64_t count = 0;
  TimeNs total_ns = 0;
  TimeNs step_ns = 0;  // of those launched inside a step (all of them when the rank has no steps)
  TimeNs min_ns = 0, max_ns = 0;
};

// One CPU operator name on one rank: inclusive time and self time (without the CPU operators nested in it).
struct OpSummary {
  std::string name;
  std::int64_t count = 0;
  TimeNs total_ns = 0, self_ns = 0;
  TimeNs step_ns = 0, self_step_ns = 0;  // of those starting inside a step (all without steps)
  // GPU time of the activities launched from inside the operator (by calls that started while it was open on
  // its thread), and of those launched from it directly (not from an operator nested in it); whole rank and
  // of the operators starting inside a step.
  TimeNs gpu_ns = 0, gpu_self_ns = 0, gpu_step_ns = 0, gpu_self_step_ns = 0;
};

// One collective operation of one group and message size on one rank. Communication kernels without a
// collectives row are counted under the operation their name spells, with group size and bytes 0.
struct CollectiveSummary {
  std::string op;
  std::int64_t group_size = 0, bytes = 0;  // 0 when unknown
  std::int64_t count = 0;
  TimeNs total_ns = 0, step_ns = 0;
};

// One CPU operator name with one set of recorded input shapes on one rank (the operators whose work is
// counted, op_work): its calls and the GPU time of the activities attributed to them. Runs are matched on
// these across vendors and library versions, whose kernels differ but whose operators and shapes do not.
struct OpShapeSummary {
  std::string name;
  std::string input_dims;  // as recorded: "[[8, 16], [16, 32]]"
  std::int64_t count = 0;
  TimeNs gpu_ns = 0,
         gpu_step_ns = 0;  // whole rank; of the operators starting inside a step (all without steps)
};

struct StepSummary {
  std::int64_t number = 0;
  TimeNs cpu_start_ns = 0, cpu_end_ns = 0;
  Breakdown gpu;
};

struct StreamSummary {
  std::int32_t device = 0;
  std::int64_t stream = 0;
  StreamIdle idle;  // stream_index is the position in RankSummary::streams
};

// The rank's GPU time in buckets of 2^bucket_log2 ns aligned to multiples of that width on the profile clock,
// so that ranks bucketed at different widths combine exactly (coarsen the finer ones). Each bucket holds
// |∪ class ∩ bucket| per class; idle = bucket ∩ [rank start, rank end) − busy.
struct OverviewBucket {
  TimeNs compute_ns = 0, comm_ns = 0, exposed_comm_ns = 0, memory_only_ns = 0, busy_ns = 0, span_ns = 0;
  TimeNs idle_ns() const { return span_ns - busy_ns; }
};
struct Overview {
  int bucket_log2 = 0;            // width of a bucket: 2^bucket_log2 ns
  std::int64_t first_bucket = 0;  // bucket index of buckets[0]: it starts at first_bucket << bucket_log2
  std::vector<OverviewBucket> buckets;
  TimeNs bucket_ns() const { return TimeNs{1} << bucket_log2; }
};
// At most this many buckets per rank (one more when the span straddles a bucket boundary).
inline constexpr std::int64_t kOverviewBuckets = 256;

struct RankSummary {
  std::int32_t rank = 0;
  Breakdown total;
  Breakdown outside_steps;
  std::string step_source;
  std::int64_t unlinked_activities = 0;
  TimeNs collective_wait_ns = 0, collective_transfer_ns = 0;
  EventCounts counts;              // this rank's events (CPU operators counted even when not loaded)
  TimeNs kernel_ns = 0;            // Σ duration of all GPU activities
  std::optional<bool> training;    // backward operators recorded; nullopt when the rank has no CPU operators
  std::vector<StepSummary> steps;  // sorted by CPU start
  std::vector<StreamSummary> streams;
  std::vector<KernelSummary> kernels;          // by total time, descending
  std::vector<OpSummary> ops;                  // by total time, descending
  std::vector<CollectiveSummary> collectives;  // by total time, descending
  std::vector<OpShapeSummary> op_shapes;       // by GPU time, descending; read from the summary tables only
  Overview overview;
};

struct ProfileSummary {
  std::filesystem::path path;
  bool from_tables = false;        // read from the summary tables (else computed from the events)
  std::vector<RankSummary> ranks;  // by rank
  std::int64_t world_size = 0;
};

// The summary of RANK in SUMMARY (nullptr when it has none).
const RankSummary* find_rank(const ProfileSummary& summary, std::int32_t rank);

}  // namespace meshscope
