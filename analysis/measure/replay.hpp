// Replay of a profile's dependency graph, and what-if edits applied to it before a replay (docs/WHATIF.md).
//
// The graph, per rank:
//   * each CPU thread's CUDA calls in order, the time between two calls kept as measured (host work);
//   * a launch call → the kernel, copy or memset it launched (correlation id);
//   * each GPU stream's activities in order, with the gap between two queued activities kept;
//   * a synchronising call (stream/device/event synchronise, a blocking copy) → the GPU activity that ended
//     last inside it, which it is taken to have waited for;
//   * an activity that started well after both its launch and its stream were ready → the activity on
//     another stream of its device that ended just before it (an event wait, inferred from timing);
//   * a collective coupled across ranks: a member ends once the last member has arrived plus its measured
//     transfer time (the matched instances of measure::analyze).
// Every node is then simulated in measured order with its measured duration; an edit changes durations or
// couplings and the simulation moves everything that depends on them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/measure/critical_path.hpp"
#include "analysis/measure/measure.hpp"
#include "analysis/measure/op_work.hpp"
#include "profiler/profile.hpp"

namespace meshscope::measure {

// Which activities a scale edit changes: a class of the analysis (comm, memcpy — copies and memsets), a kind
// of kernel read from its name (gemm, attention, conv, norm, elementwise: kernel_work_category), or any
// activity whose name holds PATTERN (case-insensitive).
struct ScaleEdit {
  enum class Target : std::uint8_t { kComm, kMemory, kCategory, kPattern };
  Target target = Target::kPattern;
  WorkCategory category = WorkCategory::kOther;
  std::string pattern;  // lower case
  double factor = 1;    // duration × factor (a communication kernel: its transfer part)
  std::string text;     // as given, "gemm=0.5"
};

// "CLASS=F" or "PATTERN=F" (F > 0, finite); false with ERROR set when TEXT is neither.
bool parse_scale_edit(std::string_view text, ScaleEdit& out, std::string& error);

// Work the profile does not hold, added by an edit (what data-parallel replicas of a job measured on one
// replica would run: the gradients' all-reduces, and the copies of the gradients into and out of their
// buckets). It starts once activity AFTER and added activity AFTER_ADDED (an earlier one) have ended (each
// kNoActivity: none) and the added activity queued before it has; activity BEFORE (kNoActivity: none)
// starts only once it has ended. On its own stream: a stream of the added work beside the rank's streams,
// queued in the order given; on AFTER's stream: right after AFTER, behind what was added after AFTER before
// it, the work queued behind AFTER waiting for it (the planner names that work BEFORE).
struct AddedActivity {
  static constexpr std::uint32_t kNoActivity = 0xffffffffu;
  enum class Place : std::uint8_t { kOwnStream, kAfterOnStream };
  Place place = Place::kOwnStream;
  std::uint32_t after = kNoActivity;        // into Rank::activities
  std::uint32_t after_added = kNoActivity;  // into the rank's added activities, an earlier one
  std::uint32_t before = kNoActivity;       // into Rank::activities
  TimeNs duration_ns = 0;
  ActivityClass cls = ActivityClass::kComm;  // kComm: a collective (OP, BYTES, GROUP_SIZE); else work
  double bytes = 0;                          // a collective's nccl-tests size
  std::int32_t group_size = 0;
  std::string op = "allreduce";  // a collective's, as the profile names them
  std::string name;              // as drawn ("ncclDevKernel_AllReduce_Sum (added: dp 4, bucket 3 of 12)")
};

struct ReplayEdits {
  std::vector<ScaleEdit> scales;  // the first that matches an activity applies
  // The rank that made the others wait most in collectives (CollectiveReport::stragglers' first) no longer
  // holds them: each instance completes from the other members' arrivals.
  bool fix_straggler = false;
  // Per Profile::ranks() index, per Rank::activities: a factor on the activity's duration (a communication
  // kernel's: on its transfer), applied with the scales (compare::retime_links fills it for link edits).
  std::vector<std::vector<double>> transfer_factor;
  // Per Profile::ranks() index: work added to the rank (AddedActivity).
  std::vector<std::vector<AddedActivity>> added;
  bool empty() const { return scales.empty() && !fix_straggler && transfer_factor.empty() && added.empty(); }
};

struct ReplayOptions {
  // A launch or a stream gap longer than this that no dependency explains is an unexplained wait.
  TimeNs unexplained_min_ns = 5'000;
  // The longest time from the end of work on another stream to the start of an activity taken to have waited
  // for it (an event recorded after it, waited for on the activity's stream).
  TimeNs event_wait_max_ns = 20'000;
  // Keep unexplained waits as measured delays (the replay then reproduces them); off, they are dropped and
  // the replay shows what the modelled dependencies alone give.
  bool keep_unexplained = true;
  // Keep each activity's replayed start and end (Replay::times), for drawing.
  bool keep_times = false;
  unsigned threads = 0;  // ranks' graphs built in parallel; 0 = hardware threads
};

struct ReplayedStep {
  std::int32_t rank = 0;
  std::int64_t step = -1;  // -1: the rank's whole profile (it has no steps)
  TimeNs measured_ns = 0, replayed_ns = 0;
  // The replayed step's critical path by kind, in measure::critical_path's terms, walked back from the step's
  // end through the dependency of the graph that set each start (docs/WHATIF.md, "Critical path"); its parts
  // add up to replayed_ns.
  std::array<TimeNs, kPathKindCount> critical_path{};
  TimeNs replayed_start_ns = 0;  // when the replayed step starts (its CPU range's start, moved)
};

// STEP's critical path in one line, its largest kinds first, each with its share of the step: "compute 90 %,
// cpu 7 %, launch_delay 2 %" (kinds under MIN_SHARE_PCT left out).
std::string critical_path_text(const ReplayedStep& step, double min_share_pct = 1);

struct ReplayedRank {
  std::int32_t rank = 0;
  // Over the rank's GPU activities (sync records left out): first start to last end, the union of their
  // intervals, and communication with no compute running.
  TimeNs span_ns = 0, busy_ns = 0, exposed_comm_ns = 0;
  TimeNs measured_span_ns = 0, measured_busy_ns = 0, measured_exposed_comm_ns = 0;
};

struct ReplayedTimes {
  std::vector<TimeNs> start, end;              // per Rank::activities
  std::vector<TimeNs> call_start, call_end;    // per Rank::api_calls
  std::vector<TimeNs> added_start, added_end;  // per ReplayEdits::added of the rank
};

struct Replay {
  std::vector<ReplayedStep> steps;                       // by rank (Profile::ranks() order), then step
  std::vector<ReplayedRank> ranks;                       // Profile::ranks() order
  double mean_abs_error_pct = 0, max_abs_error_pct = 0;  // replayed against measured, over steps
  std::vector<std::string> assumptions;                  // what stands in for a dependency the trace lacks
  std::vector<ReplayedTimes> times;                      // per rank, with ReplayOptions::keep_times
  TimeNs unexplained_ns = 0;                             // Σ of the unexplained waits (kept or dropped)
  std::int64_t edited_activities = 0;                    // activities a scale edit changed
  std::int64_t added_activities = 0;                     // ReplayEdits::added, over ranks
  std::int32_t straggler = -1;                           // the rank fix_straggler released (-1: none)
};

// The dependency graph of every rank of a profile, built once and simulated again for each set of edits:
// an edit costs a simulation, not a new graph. PROFILE and ANALYSIS (measure::analyze(PROFILE), every rank's
// events loaded) must outlive it. Holds each rank's replayed times between runs: one run at a time.
class ReplayGraph {
 public:
  ReplayGraph(const Profile& profile, const Analysis& analysis, const ReplayOptions& options = {});
  ~ReplayGraph();
  ReplayGraph(ReplayGraph&&) noexcept;
  ReplayGraph& operator=(ReplayGraph&&) noexcept;

  // The replay with EDITS (none: as measured); each activity's replayed times kept with KEEP_TIMES.
  Replay run(const ReplayEdits& edits = {}, bool keep_times = false);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ReplayGraph(PROFILE, ANALYSIS, OPTIONS).run(EDITS, OPTIONS.keep_times): one replay.
Replay replay(const Profile& profile, const Analysis& analysis, const ReplayEdits& edits = {},
              const ReplayOptions& options = {});

// PROFILE as REPLAY ran it (a replay with ReplayOptions::keep_times): each rank's activities and CUDA calls
// at their replayed times, its CPU ranges, steps and collectives moved with them (a range or step by the
// calls of its thread around it, as a replayed step's bounds move). Each stream's activities and each track's
// ranges stay sorted as a load sorts them. The activities EDITS added (the edits REPLAY ran) are drawn as
// kernels, on AFTER's stream or on a stream of their own after the streams of the rank's last device, a
// communication kernel as a collective of its op, size and group.
// What the view draws under the measured run.
Profile replayed_profile(const Profile& profile, const Replay& replay, const ReplayEdits& edits = {});

}  // namespace meshscope::measure
